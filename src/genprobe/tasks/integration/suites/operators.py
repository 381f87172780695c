"""`operator-extrapolation` (the paper's Table 9): generated problems with more operators than
the model was trained on.

Sets: `ops_1-15`, Lample & Charton's training settings (the in-distribution baseline), and
`ops_20`, `ops_25`, `ops_30`, `ops_35`, whose random expressions have exactly that many
operators. The operators are counted in the random tree drawn (f for FWD, F for BWD and IBP),
as Lample & Charton's `max_ops` counts them; SymPy's evaluation and the constant stripping then
change the count of the final prefix (by a few operators either way). `n_ops` records the count
drawn. The paper does not give the size of its groups; the default is 500 per set.
"""

from __future__ import annotations

import pandas as pd

from genprobe.tasks.integration.generation import generate
from genprobe.tasks.integration.generators import GeneratorConfig
from genprobe.tasks.integration.prefix import from_prefix, strip_problem_prefix
from genprobe.tasks.integration.suites.sampling import DEFAULT_SEED, check_n, sub_seed
from genprobe.tasks.integration.suites.table import suite_frame, tree_columns

DEFAULT_N = 500
EXACT_OPS = (20, 25, 30, 35)


def group_configs(
    method: str, exact_ops: tuple[int, ...] = EXACT_OPS
) -> dict[str, GeneratorConfig]:
    """Set name -> generator settings: L&C's (`ops_1-15`), then an exact count per set."""
    configs = {"ops_1-15": GeneratorConfig(method=method)}
    for ops in exact_ops:
        configs[f"ops_{ops}"] = GeneratorConfig(
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
    exact_ops: tuple[int, ...] = EXACT_OPS,
    deadline: float | None = None,
) -> pd.DataFrame:
    """`operator-extrapolation`: up to `n` distinct generated pairs per set, made by `generate`
    in `workers` processes (fewer if its attempt limit is reached first).

    Args:
        deadline: seconds per generation attempt (default Lample & Charton's per method).
    """
    check_n(n)
    rows = []
    for name, config in group_configs(method, exact_ops).items():
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
