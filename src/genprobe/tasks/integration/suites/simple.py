"""Simple primitives with sampled coefficients: `robustness-simple` (the paper's Table 2, top)
and `integer-extrapolation` (its Figure 2), as SAGGA's `robustness.py` builds them.

Sets, at SAGGA's N = 500 (28,210 problems):
- `simple_coeff1`: per template, N distinct pairs (k1, k2) from range(1, 100); `k1*x` and
  `k1*x**42` take min(99, N) distinct k1 from range(1, 101): 5 * 500 + 2 * 99 = 2,698;
- `simple_coeff1_range`: per coefficient range, N distinct pairs, each in all six templates
  (`k1*x` uses k1): 7 * 500 * 6 = 21,000;
- `simple_coeff2`: 32*cos(k2*x) for k2 in 512..1023: 512;
- `simple_expincr`, `simple_expdecr`: x**n and x**(1/n) for n in 1..1000 and 10000..10999:
  2,000 each. These three fixed sets take round(size * N / 500) of their problems otherwise.

A pair (k1, k2) may repeat a value (k1 = k2), as in SAGGA; the pairs themselves are distinct.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

import pandas as pd

from genprobe.tasks.integration.suites.sampling import (
    DEFAULT_SEED,
    check_n,
    distinct_pairs,
    distinct_values,
    sample_in_order,
    scaled_count,
    set_rng,
)
from genprobe.tasks.integration.suites.table import suite_frame, sympy_columns
from genprobe.tasks.integration.suites.templates import TEMPLATES

PAPER_N = 500  # SAGGA's --N
SIMPLE_SETS = (
    "simple_coeff1", "simple_coeff1_range", "simple_coeff2", "simple_expincr", "simple_expdecr",
)  # fmt: skip
COEFF1_TEMPLATES = (
    "k1*ln(k2*x)", "k1*exp(k2*x)", "k1*sin(k2*x)", "k1*cos(k2*x)", "k1*tan(k2*x)",
    "k1*x", "k1*x**42",
)  # fmt: skip
RANGE_TEMPLATES = COEFF1_TEMPLATES[:-1]
# coefficient ranges of `simple_coeff1_range` (Figure 2), half-open as Python's range
RANGES = (
    range(1, 100), range(100, 200), range(200, 300), range(300, 400), range(400, 500),
    range(1000, 2000), range(10000, 11000),
)  # fmt: skip
COEFF2_VALUES = range(2**9, 2**10)
EXPONENT_RANGES = (range(1, 1001), range(10000, 11000))


class Draw(NamedTuple):
    """One problem before it is built: its set, template and coefficients."""

    set: str
    template: str
    k1: int
    k2: int | None
    coeff_range: range


def range_label(values: range) -> str:
    """A coefficient range as the `coeff_range` column names it: `100-200` for range(100, 200)."""
    return f"{values.start}-{values.stop}"


def _coeff1(n: int, seed: int) -> Iterator[Draw]:
    for name in COEFF1_TEMPLATES:
        rng = set_rng(seed, "simple_coeff1", name)
        if TEMPLATES[name].uses_k2:
            values = RANGES[0]
            for k1, k2 in distinct_pairs(rng, values, n):
                yield Draw("simple_coeff1", name, k1, k2, values)
        else:
            values = range(1, 101)  # SAGGA: min(99, N) distinct values of 1..100
            for k1 in distinct_values(rng, values, min(len(values) - 1, n)):
                yield Draw("simple_coeff1", name, k1, None, values)


def coeff1_range_draws(n: int, seed: int) -> Iterator[Draw]:
    """The problems of `simple_coeff1_range` (all of `integer-extrapolation`), unbuilt."""
    for values in RANGES:
        for k1, k2 in distinct_pairs(
            set_rng(seed, "simple_coeff1_range", range_label(values)), values, n
        ):
            for name in RANGE_TEMPLATES:
                k2_used = k2 if TEMPLATES[name].uses_k2 else None
                yield Draw("simple_coeff1_range", name, k1, k2_used, values)


def _coeff2(n: int, seed: int) -> Iterator[Draw]:
    count = scaled_count(len(COEFF2_VALUES), n, PAPER_N)
    for k2 in sample_in_order(set_rng(seed, "simple_coeff2"), COEFF2_VALUES, count):
        yield Draw("simple_coeff2", "k1*cos(k2*x)", 32, k2, COEFF2_VALUES)


def _exponents(name: str, template: str, n: int, seed: int) -> Iterator[Draw]:
    exponents = [e for values in EXPONENT_RANGES for e in values]
    count = scaled_count(len(exponents), n, PAPER_N)
    for e in sample_in_order(set_rng(seed, name), exponents, count):
        values = next(values for values in EXPONENT_RANGES if e in values)
        yield Draw(name, template, e, None, values)


def simple_draws(n: int = PAPER_N, seed: int = DEFAULT_SEED) -> list[Draw]:
    """Every problem of `robustness-simple`, unbuilt (cheap: count and inspect them here)."""
    check_n(n)
    return [
        *_coeff1(n, seed),
        *coeff1_range_draws(n, seed),
        *_coeff2(n, seed),
        *_exponents("simple_expincr", "x**k1", n, seed),
        *_exponents("simple_expdecr", "x**(1/k1)", n, seed),
    ]


def build_draws(suite: str, draws: Iterable[Draw]) -> pd.DataFrame:
    """The suite table of `draws`: problem and closed-form reference for each."""
    rows = []
    for draw in draws:
        template = TEMPLATES[draw.template]
        rows.append(
            {
                "suite": suite, "set": draw.set, "template": draw.template,
                **sympy_columns(
                    template.problem(draw.k1, draw.k2), template.reference(draw.k1, draw.k2)
                ),
                "k1": draw.k1, "k2": draw.k2, "coeff_range": range_label(draw.coeff_range),
            }
        )  # fmt: skip
    return suite_frame(rows)


def robustness_simple(n: int = PAPER_N, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """`robustness-simple`: the five sets above (N = `n`)."""
    return build_draws("robustness-simple", simple_draws(n, seed))


def integer_extrapolation(n: int = PAPER_N, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """`integer-extrapolation`: `simple_coeff1_range` alone, the same rows as in
    `robustness-simple` for the same `n` and `seed`."""
    check_n(n)
    return build_draws("integer-extrapolation", coeff1_range_draws(n, seed))
