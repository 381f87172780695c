"""`compositionality` (the paper's Table 8): sums f1 + ... + fk of primitives the model solved.

Families, each for k = 2, 3, 4 with 1,000 sums at the paper's size:
- `comp_coeff`: solved `simple_coeff1` problems of `robustness-simple`;
- `comp_exp`: solved `simple_expincr` and `simple_expdecr` problems;
- `comp_valid`: solved `valid_primitive` problems of at most 20 prefix tokens (the paper's
  filter; SAGGA's notebook kept at most 20 characters of SymPy text instead).

A sum is a distinct ordered k-tuple of primitives, one may repeat inside it (SAGGA's
`random_tuples`); asking for more sums than there are tuples is an error (SAGGA loops forever).
The problem is the SymPy sum of the f's, so like terms combine (3*x + 5*x is 8*x), as SAGGA's
sympify did; the reference is the sum of the F's. k = 1 is not built: it is 0 % failure by
construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import sympy as sp

from genprobe.errors import ConfigError
from genprobe.tasks.integration.expression import to_sympy
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.suites.primitives import Primitive, solved_primitives
from genprobe.tasks.integration.suites.sampling import (
    DEFAULT_SEED,
    check_n,
    random_tuples,
    set_rng,
)
from genprobe.tasks.integration.suites.table import suite_frame, sympy_columns

PAPER_N = 1000
KS = (2, 3, 4)


class Family(NamedTuple):
    sets: tuple[str, ...]  # the suite sets its primitives come from
    max_tokens: int | None  # longest primitive kept, in prefix tokens


FAMILIES: dict[str, Family] = {
    "comp_coeff": Family(("simple_coeff1",), None),
    "comp_exp": Family(("simple_expincr", "simple_expdecr"), None),
    "comp_valid": Family(("valid_primitive",), 20),
}


def solved_families(
    results_path: str | Path | pd.DataFrame, criterion: str = "paper"
) -> dict[str, list[Primitive]]:
    """Each family's solved primitives (`solved_primitives`' criterion) in a results file (or
    frame); families without any are left out.

    Raises:
        ConfigError: no family has a solved primitive in the file.
    """
    found = {
        name: primitives
        for name, family in FAMILIES.items()
        if (primitives := solved_primitives(results_path, family.sets, criterion))
    }
    if not found:
        sets = sorted(s for family in FAMILIES.values() for s in family.sets)
        where = "results" if isinstance(results_path, pd.DataFrame) else str(results_path)
        raise ConfigError(where, f"results with solved rows of {sets}", "none")
    return found


def within_limit(name: str, primitives: Sequence[Primitive]) -> list[Primitive]:
    """The primitives family `name` sums: those within its length limit (`Family.max_tokens`)."""
    limit = FAMILIES[name].max_tokens
    return [p for p in primitives if limit is None or len(to_prefix(p.problem)) <= limit]


def compositionality(
    primitives: Mapping[str, Sequence[Primitive]],
    n: int = PAPER_N,
    seed: int = DEFAULT_SEED,
    ks: Sequence[int] = KS,
    exact: bool = True,
) -> pd.DataFrame:
    """`compositionality`: `n` sums of k primitives per family (keys of `FAMILIES`) and k;
    with `exact=False`, all distinct sums where fewer than `n` exist.

    Raises:
        ConfigError: an unknown family, one without primitives (after its length filter), or
            (with `exact`) more sums asked for than distinct tuples exist.
    """
    check_n(n)
    rows = []
    for name, members in primitives.items():
        if name not in FAMILIES:
            raise ConfigError("family", f"one of {', '.join(FAMILIES)}", name)
        pool = within_limit(name, members)
        if not pool:
            raise ConfigError(f"primitives of {name}", "at least one within its length limit", 0)
        problems = [to_sympy(p.problem) for p in pool]
        references = [None if p.reference is None else to_sympy(p.reference) for p in pool]
        for k in ks:
            count = n if exact else min(n, len(pool) ** k)
            for chosen in random_tuples(set_rng(seed, name, str(k)), len(pool), k, count):
                parts = [references[i] for i in chosen]
                reference = None if None in parts else sp.Add(*parts)
                rows.append(
                    {
                        "suite": "compositionality",
                        "set": name,
                        "template": "+".join(f"f{i}" for i in range(1, k + 1)),
                        **sympy_columns(sp.Add(*[problems[i] for i in chosen]), reference),
                        "k": k,
                        "source_rows": [pool[i].row for i in chosen],
                    }
                )
    return suite_frame(rows)
