"""Validation primitives and their perturbations: `validation-primitives` and
`robustness-validation` (the paper's Table 2, bottom), as SAGGA's validation notebooks make them.

1. `validation_candidates` reads a validation file with the notebooks' filters: lines whose input
   or output contains ` I `, asin, acos, atan, sinh, cosh, tanh, asinh, acosh or atanh are left
   out. `validation-primitives` samples 1,000 of them (the notebooks' N) to be solved first.
2. `robustness_validation` perturbs the solved ones (top-1 correct):
   - `coeff_k*f`, `coeff_f/k`: the first 100 primitives times 10 distinct coefficients k from
     2..99, one draw of coefficients per set shared by all primitives: 1,000 problems each;
   - `add_exp`, `add_ln`: f + exp(x) and f + ln(x) for the first N primitives.
   With N problems per set asked for, the coefficient sets take the first min(100, N, all)
   primitives and N // (that many) coefficients each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
import sympy as sp

from genprobe.errors import ConfigError
from genprobe.tasks.integration.expression import X, to_sympy
from genprobe.tasks.integration.suites.in_distribution import sample_primitives
from genprobe.tasks.integration.suites.primitives import Primitive, dataset_primitives
from genprobe.tasks.integration.suites.sampling import (
    DEFAULT_SEED,
    check_n,
    distinct_values,
    set_rng,
)
from genprobe.tasks.integration.suites.table import suite_frame, sympy_columns

PAPER_N = 1000  # the notebooks' N
EXCLUDED = (" I ", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh")
COEFFICIENT_PRIMITIVES = 100  # the notebooks' n_primitives
COEFFICIENTS = range(2, 100)

Perturb = Callable[[sp.Expr, int], sp.Expr]
# set -> (template, f -> perturbed f, F -> its antiderivative), for a coefficient k
COEFFICIENT_SETS: dict[str, tuple[str, Perturb, Perturb]] = {
    "coeff_k*f": ("k*f", lambda f, k: k * f, lambda big_f, k: k * big_f),
    "coeff_f/k": ("f/k", lambda f, k: f / k, lambda big_f, k: big_f / k),
}
ADDED_SETS: dict[str, tuple[str, sp.Expr, sp.Expr]] = {
    "add_exp": ("f+exp(x)", sp.exp(X), sp.exp(X)),
    "add_ln": ("f+ln(x)", sp.log(X), X * sp.log(X) - X),
}


def validation_candidates(
    path: str | Path, split: str | None = None
) -> tuple[list[Primitive], list[tuple[int, str]]]:
    """The validation primitives the notebooks keep, and (row, reason) for those left out."""
    return dataset_primitives(path, split, exclude=EXCLUDED)


def validation_primitives(
    candidates: Sequence[Primitive], n: int | None = PAPER_N, seed: int = DEFAULT_SEED
) -> pd.DataFrame:
    """`validation-primitives`: `n` candidates (set `valid_primitive`), to be solved first."""
    return sample_primitives("validation-primitives", "valid_primitive", candidates, n, seed)


def robustness_validation(
    primitives: Sequence[Primitive],
    n: int = PAPER_N,
    seed: int = DEFAULT_SEED,
    exact: bool = True,
) -> pd.DataFrame:
    """`robustness-validation`: the four perturbation sets of solved validation primitives;
    with `exact=False`, at most all 98 coefficients per primitive when few are solved.

    Raises:
        ConfigError: no primitives, or (with `exact`) more coefficients per primitive than
            2..99 holds.
    """
    check_n(n)
    if not primitives:
        raise ConfigError("primitives", "at least one solved validation primitive", 0)
    parsed = [(p, to_sympy(p.problem), _reference(p)) for p in primitives]
    used = parsed[: min(COEFFICIENT_PRIMITIVES, n)]
    per_primitive = n // len(used) if exact else min(n // len(used), len(COEFFICIENTS))
    if per_primitive > len(COEFFICIENTS):
        raise ConfigError("n", f"at most {len(used) * len(COEFFICIENTS)} for these primitives", n)
    rows = []
    for name, (template, scale, scale_reference) in COEFFICIENT_SETS.items():
        coefficients = distinct_values(set_rng(seed, name), COEFFICIENTS, per_primitive)
        for primitive, f, big_f in used:
            for k in coefficients:
                reference = None if big_f is None else scale_reference(big_f, k)
                columns = sympy_columns(scale(f, k), reference)
                rows.append(_row(name, template, columns, primitive, k1=k, coeff_range="2-100"))
    for name, (template, added, added_reference) in ADDED_SETS.items():
        for primitive, f, big_f in parsed[:n]:
            reference = None if big_f is None else big_f + added_reference
            rows.append(_row(name, template, sympy_columns(f + added, reference), primitive))
    return suite_frame(rows)


def _reference(primitive: Primitive) -> sp.Expr | None:
    return None if primitive.reference is None else to_sympy(primitive.reference)


def _row(name: str, template: str, columns: dict, primitive: Primitive, **metadata: object) -> dict:
    return {
        "suite": "robustness-validation",
        "set": name,
        "template": template,
        **columns,
        **metadata,
        "source_rows": [primitive.row],
    }
