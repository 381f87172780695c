"""Readable slices: tree features of hand-built problems, literal and slice text, and
`find_slice` against known answers and against a brute-force search over all conjunctions."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
import sympy as sp

from genprobe.studies.search.slices import Literal, Slice, candidate_literals, find_slice
from genprobe.tasks.integration.expression import Expr, X, from_sympy
from genprobe.tasks.integration.features import BOOLEAN, NUMERIC, tree_features
from genprobe.tasks.integration.infix import parse_infix


def _row(expr: Expr) -> dict:
    return tree_features([expr]).iloc[0].to_dict()


def _masks(n_members: int, n_successes: int) -> tuple[np.ndarray, np.ndarray]:
    members = np.arange(n_members + n_successes) < n_members
    return members, ~members


# -- features ----------------------------------------------------------------------------


def test_columns_and_dtypes():
    frame = tree_features([parse_infix("x"), parse_infix("sin(x)")])
    assert list(frame.columns) == [*BOOLEAN, *NUMERIC]
    assert all(frame[name].dtype == bool for name in BOOLEAN)
    assert all(frame[name].dtype == np.int64 for name in NUMERIC)
    empty = tree_features([])
    assert list(empty.columns) == [*BOOLEAN, *NUMERIC] and len(empty) == 0


def test_features_of_a_left_nested_sum():
    row = _row(parse_infix("2*x + sin(x) + 3"))
    present = {name for name in BOOLEAN if row[name]}
    assert present == {"add", "mul", "sin"}
    assert row["terms"] == 3  # the parser nests sums to the left
    assert row["largest |int|"] == 3
    assert row["x degree"] == 1
    assert row["depth"] == 4 and row["size"] == 8
    assert _row(parse_infix("x - 1 - x^2"))["terms"] == 3


def test_features_of_sympy_built_problems():
    row = _row(from_sympy(X**3 / 2 - 7 * sp.exp(2 * X) + sp.asin(X)))
    assert row["rational"] and not row["division"]  # 1/2 is a constant, not a division
    assert row["exp"] and row["inverse trig"] and row["pow"]
    assert not row["x in exponent"]  # exp(2x) is a function, not a pow
    assert row["terms"] == 3 and row["x degree"] == 3 and row["largest |int|"] == 7

    row = _row(from_sympy(119**X * sp.sinh(X) + sp.pi))
    assert row["x in exponent"] and row["hyperbolic"] and row["pi"]
    assert row["largest |int|"] == 119 and row["terms"] == 2 and row["x degree"] == 1

    row = _row(from_sympy(1 / (X**2 + 1)))
    assert row["division"] and not row["rational"] and row["x degree"] == 2

    row = _row(from_sympy(sp.sqrt(X) * sp.Abs(sp.tan(X)) + sp.E))
    assert row["sqrt"] and row["abs"] and row["tan"] and row["E"]
    assert not row["division"] and row["x degree"] == 1


def test_features_without_x_and_with_huge_integers():
    row = _row(Expr.apply("mul", Expr.integer(-(10**30)), Expr("pi")))
    assert row["x degree"] == 0 and row["terms"] == 1
    assert row["largest |int|"] == np.iinfo(np.int64).max  # clipped, not overflowed


def test_division_forms():
    assert _row(parse_infix("x/2"))["division"]
    assert _row(parse_infix("x^-1"))["division"]
    assert _row(Expr.apply("inv", Expr.var()))["division"]
    assert _row(from_sympy(2**-X))["division"]  # pow 2 (mul -1 x)
    assert not _row(parse_infix("x^2 + 1"))["division"]


def test_deep_trees_do_not_recurse():
    tree = from_sympy(sp.Add(*[X**k for k in range(1, 3000)], evaluate=False))
    row = _row(tree)
    assert row["terms"] == 2999 and row["x degree"] == 2999


# -- literals and slices -----------------------------------------------------------------


def test_literal_text():
    assert Literal("sin", "==", True).text == "has sin"
    assert Literal("exp", "==", False).text == "no exp"
    assert Literal("x in exponent", "==", True).text == "x in exponent"
    assert Literal("x in exponent", "==", False).text == "no x in exponent"
    assert Literal("largest |int|", ">=", 100.0).text == "largest |int| ≥ 100"
    assert Literal("depth", "<=", 4.0).text == "depth ≤ 4"
    assert Literal("size", ">=", 2.5).text == "size ≥ 2.5"


def test_literal_holds():
    frame = pd.DataFrame({"sin": [True, False, True], "depth": [2, 5, 4]})
    assert Literal("sin", "==", True).holds(frame).tolist() == [True, False, True]
    assert Literal("sin", "==", False).holds(frame).tolist() == [False, True, False]
    assert Literal("depth", "<=", 4.0).holds(frame).tolist() == [True, False, True]
    assert Literal("depth", ">=", 4.0).holds(frame).tolist() == [False, True, True]


def test_slice_text_and_implies():
    has_sin, big = Literal("sin", "==", True), Literal("largest |int|", ">=", 100.0)
    everything = Slice((), 1.0, 0.5, 4, 4)
    sin = Slice((has_sin,), 1.0, 1.0, 4, 0)
    both = Slice((big, has_sin), 0.5, 1.0, 2, 0)
    assert everything.text == "everything"
    assert both.text == "largest |int| ≥ 100 and has sin"
    size = [Literal("size", ">=", 5.0), Literal("size", "<=", 5.0)]
    assert Slice(tuple(size), 1.0, 1.0, 4, 0).text == "size = 5"
    depth = (Literal("depth", "<=", 4.0), has_sin, Literal("depth", ">=", 2.0))
    assert Slice(depth, 1.0, 1.0, 4, 0).text == "has sin and 2 ≤ depth ≤ 4"
    assert both.implies(sin) and both.implies(both) and both.implies(everything)
    assert not sin.implies(both)
    assert not Slice((big,), 1.0, 1.0, 4, 0).implies(sin)


def test_candidate_literals_use_member_quantiles():
    frame = pd.DataFrame({"flag": [True, False, True, False], "n": [1, 5, 9, 100]})
    members = np.array([True, True, True, False])
    texts = [lit.text for lit in candidate_literals(frame, members)]
    assert texts == ["has flag", "no flag", "n ≥ 1", "n ≥ 5", "n ≥ 9", "n ≤ 1", "n ≤ 5", "n ≤ 9"]


# -- find_slice --------------------------------------------------------------------------

SIN_MEMBERS = ["sin(x)*x^2 + 300", "150*sin(x) + x", "x^3 + 470*sin(x)", "sin(x)*x + 999*x"]
POLYNOMIALS = ["x^2 + 3", "5*x + x^3", "x^3 + 2*x^2", "4*x^2 + 7*x", "x + 1"]


def test_finds_sin():
    problems = [parse_infix(s) for s in [*SIN_MEMBERS, *POLYNOMIALS]]
    members, successes = _masks(len(SIN_MEMBERS), len(POLYNOMIALS))
    found = find_slice(tree_features(problems), members, successes)
    assert found.literals == (Literal("sin", "==", True),)
    assert found.text == "has sin"
    assert (found.coverage, found.precision, found.members, found.successes) == (1.0, 1.0, 4, 0)


def test_finds_a_threshold_on_large_constants():
    # same shapes, only the constants differ: nothing but `largest |int|` separates them
    shapes = ["{}*x + 1", "x^2 + {}", "{}*sin(x)", "{}*x^3 + x"]
    problems = [parse_infix(s.format(c)) for s in shapes for c in (120, 3)]
    members = np.array([True, False] * len(shapes))
    found = find_slice(tree_features(problems), members, ~members)
    assert found.text == "largest |int| ≥ 120"
    assert (found.coverage, found.precision) == (1.0, 1.0)


def test_conjunction_beats_either_literal():
    frame = pd.DataFrame(
        {
            "a": [True, True, True, True, True, False, False, False],
            "b": [True, True, True, True, False, True, False, False],
        }
    )
    members = np.array([True, True, True, True, False, False, False, False])
    found = find_slice(frame, members, ~members)
    assert found.text == "has a and has b"
    assert (found.coverage, found.precision) == (1.0, 1.0)
    # one literal allowed: the best single one covers all members with 4/5 precision
    single = find_slice(frame, members, ~members, max_literals=1)
    assert single.text == "has a" and single.precision == 0.8


def test_min_coverage_trades_precision_for_coverage():
    # "has a" holds 2 of 4 members and no success; "has b" holds all members and 1 success
    frame = pd.DataFrame(
        {"a": [True, True, False, False, False], "b": [True, True, True, True, True]}
    )
    members = np.array([True, True, True, True, False])
    assert find_slice(frame, members, ~members, max_literals=1).text == "everything"
    assert find_slice(frame, members, ~members, max_literals=1, min_coverage=0.5).text == "has a"


def test_falls_back_to_f1_when_nothing_covers_enough():
    frame = pd.DataFrame({"a": [True, False, False, False, False, False]})
    members = np.array([True, True, False, False, False, False])
    found = find_slice(frame, members, ~members, min_coverage=1.01)
    # F1: "has a" 2*1*0.5/1.5 = 0.667 beats "everything" 2*(1/3)*1/(4/3) = 0.5
    assert found.text == "has a" and found.coverage == 0.5 and found.precision == 1.0


def test_no_members():
    frame = tree_features([parse_infix("x"), parse_infix("x + 1")])
    found = find_slice(frame, np.array([False, False]), np.array([True, True]))
    assert found.text == "everything" and found.members == 0 and found.coverage == 0.0


def test_rejects_masks_of_the_wrong_length():
    frame = tree_features([parse_infix("x")])
    with pytest.raises(ValueError):
        find_slice(frame, np.array([True, False]), np.array([False, True]))


def _brute_force(frame, members, successes, max_literals, min_coverage):
    """Every conjunction scored one at a time, ranked by the documented rule."""
    literals = candidate_literals(frame, members)
    holds = [lit.holds(frame) for lit in literals]
    rows = []
    for k in range(max_literals + 1):
        for order, combo in enumerate(combinations(range(len(literals)), k)):
            mask = np.ones(len(frame), dtype=bool)
            for i in combo:
                mask &= holds[i]
            m, s = int((mask & members).sum()), int((mask & successes).sum())
            coverage = m / members.sum()
            precision = m / (m + s) if m + s else 0.0
            f1 = 2 * precision * coverage / (precision + coverage) if precision + coverage else 0
            rows.append((coverage, precision, f1, k, order, combo))
    eligible = [r for r in rows if r[0] >= min_coverage]
    if eligible:
        best = min(eligible, key=lambda r: (-r[1], -r[0], r[3], r[4]))
    else:
        best = min(rows, key=lambda r: (-r[2], -r[0], r[3], r[4]))
    return tuple(literals[i] for i in best[5]), best[0], best[1]


@pytest.mark.parametrize("seed", range(6))
def test_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 60
    frame = pd.DataFrame(
        {
            "p": rng.random(n) < 0.5,
            "q": rng.random(n) < 0.3,
            "r": rng.random(n) < 0.7,
            "n": rng.integers(0, 8, n),
            "m": rng.integers(0, 4, n),
        }
    )
    labels = rng.integers(0, 3, n)  # 0 member, 1 success, 2 neither
    members, successes = labels == 0, labels == 1
    for max_literals, min_coverage in [(1, 0.6), (2, 0.6), (2, 0.9), (3, 0.5), (2, 1.01)]:
        found = find_slice(frame, members, successes, max_literals, min_coverage)
        expected = _brute_force(frame, members, successes, max_literals, min_coverage)
        assert (found.literals, found.coverage, found.precision) == expected
        mask = np.ones(n, dtype=bool)
        for lit in found.literals:
            mask &= lit.holds(frame)
        assert found.members == int((mask & members).sum())
        assert found.successes == int((mask & successes).sum())
        assert len(found.literals) <= max_literals


def test_deterministic():
    problems = [parse_infix(s) for s in [*SIN_MEMBERS, *POLYNOMIALS]]
    frame = tree_features(problems)
    members, successes = _masks(len(SIN_MEMBERS), len(POLYNOMIALS))
    first = find_slice(frame, members, successes, min_coverage=0.5)
    assert all(find_slice(frame, members, successes, min_coverage=0.5) == first for _ in range(3))
