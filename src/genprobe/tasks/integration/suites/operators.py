"""`operator-extrapolation` (the paper's Table 9): generated problems with more operators than
the model was trained on.

Sets, for a model trained on expressions of at most M operators (the generator's `max_ops`;
Lample & Charton's M = 15 by default): `ops_1-M`, the training settings with that M (the
in-distribution baseline), and `ops_{M+5}`, `ops_{M+10}`, `ops_{M+15}`, `ops_{M+20}`, whose
random expressions have exactly that many operators. At M = 15 these are the paper's rows,
`ops_1-15`, `ops_20`, `ops_25`, `ops_30`, `ops_35`; at another M each set stands for the row
at the same offset (`paper_rows`). The operators are counted in the random tree drawn (f for
FWD, F for BWD and IBP), as Lample & Charton's `max_ops` counts them; SymPy's evaluation and the
constant stripping then change the count of the final prefix (by a few operators either way).
`n_ops` records the count drawn. The paper does not give the size of its groups; the default
is 500 per set. Only `max_ops` is the model's: the other generator settings (operators and their
weights, integer leaves) are Lample & Charton's defaults.
"""

from __future__ import annotations

import pandas as pd

from genprobe.errors import ConfigError
from genprobe.tasks.integration.generation import generate
from genprobe.tasks.integration.generation_config import GeneratorConfig
from genprobe.tasks.integration.prefix import from_prefix, strip_problem_prefix
from genprobe.tasks.integration.suites.sampling import DEFAULT_SEED, check_n, sub_seed
from genprobe.tasks.integration.suites.table import suite_frame, tree_columns

DEFAULT_N = 500
PAPER_MAX_OPS = 15  # the max_ops Lample & Charton's model (the paper's) was trained with
OFFSETS = (5, 10, 15, 20)  # operators beyond the training max_ops, one set each (Table 9)


def set_names(max_ops: int = PAPER_MAX_OPS, offsets: tuple[int, ...] = OFFSETS) -> list[str]:
    """The sets for a model trained on at most `max_ops` operators, in order: `ops_1-M`, then
    `ops_{M+offset}` per offset."""
    return [f"ops_1-{max_ops}", *(f"ops_{max_ops + offset}" for offset in offsets)]


def paper_rows(max_ops: int) -> dict[str, str]:
    """Our set -> the row of the paper's Table 9 at the same offset from the training max_ops
    (`ops_1-8` -> `ops_1-15`, `ops_13` -> `ops_20`, ...)."""
    return dict(zip(set_names(max_ops), set_names(PAPER_MAX_OPS), strict=True))


def group_configs(
    method: str, max_ops: int = PAPER_MAX_OPS, offsets: tuple[int, ...] = OFFSETS
) -> dict[str, GeneratorConfig]:
    """Set name -> generator settings: the training settings with `max_ops` (`ops_1-M`), then
    an exact count per set."""
    if max_ops < 1:
        raise ConfigError("--train-max-ops", "at least 1", max_ops)
    first, *exact = set_names(max_ops, offsets)
    configs = {first: GeneratorConfig(method=method, max_ops=max_ops)}
    for name, offset in zip(exact, offsets, strict=True):
        ops = max_ops + offset
        configs[name] = GeneratorConfig(
            method=method, min_ops=ops, max_ops=ops, small_probability=0
        )
    return configs


def round_size(n: int, workers: int) -> int:
    """Attempts per round of `generate`: 64, fewer for a small suite (it needs no 64-attempt
    rounds), yet two per worker."""
    return min(64, max(n, 2 * workers))


def operator_extrapolation(
    n: int = DEFAULT_N,
    seed: int = DEFAULT_SEED,
    method: str = "bwd",
    workers: int = 1,
    max_ops: int = PAPER_MAX_OPS,
    offsets: tuple[int, ...] = OFFSETS,
    deadline: float | None = None,
) -> pd.DataFrame:
    """`operator-extrapolation`: up to `n` distinct generated pairs per set, made by `generate`
    in `workers` processes (fewer if its attempt limit is reached first).

    Args:
        max_ops: the most operators of the model's training expressions (the sets above).
        deadline: seconds per generation attempt (default Lample & Charton's per method).

    Raises:
        ConfigError: `max_ops` below 1.
    """
    check_n(n)
    rows = []
    for name, config in group_configs(method, max_ops, offsets).items():
        report = generate(
            config, n, seed=sub_seed(seed, name), workers=workers, deadline=deadline,
            round_size=round_size(n, workers),
        )  # fmt: skip
        for generated in report.rows:
            problem = from_prefix(strip_problem_prefix(generated.input.split()))
            rows.append(
                {
                    "suite": "operator-extrapolation",
                    "set": name,
                    **tree_columns(problem, from_prefix(generated.output.split())),
                    "n_ops": generated.n_ops,
                    "method": method,
                }
            )
    return suite_frame(rows)
