"""Readable slices: a short predicate over tree features that describes a cluster of failures.

Embedding clusters are hard to read. A slice says what a cluster's members share in words
("has exp and largest |int| ≥ 100") and how well: coverage (the share of the cluster it holds)
and precision (the share of what it holds that the model failed, against the model's
successes). Like slice finders such as SliceLine, it searches conjunctions of literals over a
feature table; with a few dozen literals and up to two per slice, every conjunction is scored at
once with 0/1 matrix products.

Example:
    features = tree_features(problems)
    find_slice(features, members=in_cluster, successes=solved).text  ->  "has exp"
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from genprobe.tasks.integration.expression import Expr, fold

FAMILIES: dict[str, tuple[str, ...]] = {
    "add": ("add", "sub"),
    "mul": ("mul", "div", "inv"),
    "pow": ("pow", "pow2", "pow3", "pow4", "pow5", "inv"),
    "sqrt": ("sqrt",),
    "exp": ("exp",),
    "ln": ("ln",),
    "sin": ("sin",),
    "cos": ("cos",),
    "tan": ("tan", "cot", "sec", "csc"),
    "inverse trig": ("asin", "acos", "atan", "acot", "asec", "acsc"),
    "hyperbolic": (
        "sinh", "cosh", "tanh", "coth", "sech", "csch",
        "asinh", "acosh", "atanh", "acoth", "asech", "acsch",
    ),
    "abs": ("abs", "sign"),
    "pi": ("pi",),
    "E": ("E",),
}  # fmt: skip
NUMERIC = ("depth", "size", "terms", "largest |int|")


@dataclass(frozen=True)
class _Facts:
    ops: frozenset[str]
    depth: int
    size: int
    largest: int
    x: bool  # holds x
    x_in_exponent: bool
    negative_power: bool


def _facts(node: Expr, kids: list[_Facts]) -> _Facts:
    ops = frozenset([node.op]).union(*(k.ops for k in kids))
    x = node.op == "x" or any(k.x for k in kids)
    return _Facts(
        ops=ops,
        depth=1 + max((k.depth for k in kids), default=0),
        size=1 + sum(k.size for k in kids),
        largest=max([abs(node.value), *(k.largest for k in kids)]),
        x=x,
        x_in_exponent=any(k.x_in_exponent for k in kids) or (node.op == "pow" and kids[1].x),
        negative_power=any(k.negative_power for k in kids)
        or node.op in ("div", "inv")
        or (node.op == "pow" and node.args[1].op == "int" and node.args[1].value < 0),
    )


def _terms(expr: Expr) -> int:
    count = 1
    while expr.op in ("add", "sub"):
        count += 1
        expr = expr.args[1]
    return count


def tree_features(problems: Sequence[Expr]) -> pd.DataFrame:
    """One row per problem: operator families present, x in an exponent, division, and the
    numbers depth, size, terms (top-level summands), largest |int|."""
    rows = []
    for problem in problems:
        facts = fold(problem, _facts)
        row: dict[str, bool | int] = {
            name: bool(facts.ops.intersection(ops)) for name, ops in FAMILIES.items()
        }
        row["x in exponent"] = facts.x_in_exponent
        row["division"] = facts.negative_power
        row["depth"] = facts.depth
        row["size"] = facts.size
        row["terms"] = _terms(problem)
        row["largest |int|"] = facts.largest
        rows.append(row)
    return pd.DataFrame(rows, columns=[*FAMILIES, "x in exponent", "division", *NUMERIC])


@dataclass(frozen=True)
class Literal:
    feature: str
    op: str  # "is", "not", ">=", "<="
    value: float | bool = True

    @property
    def text(self) -> str:
        if self.op in (">=", "<="):
            sign = "≥" if self.op == ">=" else "≤"
            return f"{self.feature} {sign} {self.value:g}"
        verb = "" if self.feature == "x in exponent" else "has "
        if self.op == "not":
            return f"no {self.feature}" if verb else f"not {self.feature}"
        return f"{verb}{self.feature}"

    def holds(self, features: pd.DataFrame) -> np.ndarray:
        column = features[self.feature].to_numpy()
        if self.op == "is":
            return column.astype(bool)
        if self.op == "not":
            return ~column.astype(bool)
        if self.op == ">=":
            return column >= self.value
        return column <= self.value


@dataclass(frozen=True)
class Slice:
    literals: tuple[Literal, ...]
    coverage: float  # members matched / members
    precision: float  # members matched / everything matched (members and successes)
    members: int  # members matched
    successes: int  # successes matched

    @property
    def text(self) -> str:
        return " and ".join(lit.text for lit in self.literals) or "everything"

    def implies(self, other: Slice) -> bool:
        """This slice nests inside `other`: it has all of `other`'s literals (and maybe more)."""
        return set(other.literals) <= set(self.literals)


def _literals(features: pd.DataFrame, members: np.ndarray) -> list[Literal]:
    out: list[Literal] = []
    for name in features.columns:
        if name in NUMERIC:
            values = features[name].to_numpy()[members]
            cuts = np.unique(np.quantile(values, [0, 0.25, 0.5, 0.75, 1], method="nearest"))
            out += [Literal(name, ">=", float(c)) for c in cuts]
            out += [Literal(name, "<=", float(c)) for c in cuts]
        else:
            out += [Literal(name, "is"), Literal(name, "not")]
    return out


def find_slice(
    features: pd.DataFrame,
    members: np.ndarray,
    successes: np.ndarray,
    max_literals: int = 2,
    min_coverage: float = 0.6,
) -> Slice:
    """The most precise conjunction of up to `max_literals` literals among those covering at
    least `min_coverage` of the members (ties: more coverage, fewer literals); if none covers
    that much, the best by F1."""
    members, successes = np.asarray(members, bool), np.asarray(successes, bool)
    if not members.any():
        return Slice((), 0.0, 0.0, 0, int(successes.sum()))
    literals = _literals(features, members)
    holds = np.stack([lit.holds(features) for lit in literals], axis=1).astype(np.int32)
    candidates: list[tuple[int, ...]] = [()]
    for size in range(1, max_literals + 1):
        candidates += list(combinations(range(len(literals)), size))
    # rows matching a conjunction: every one of its literals holds, i.e. a 0/1 product
    member_rows, success_rows = holds[members], holds[successes]
    conjunction = np.zeros((len(literals), len(candidates)), dtype=np.int32)
    for j, combo in enumerate(candidates):
        conjunction[list(combo), j] = 1
    need = conjunction.sum(axis=0)
    matched_members = (member_rows @ conjunction == need).sum(axis=0)
    matched_successes = (success_rows @ conjunction == need).sum(axis=0)
    coverage = matched_members / members.sum()
    total = matched_members + matched_successes
    precision = np.divide(matched_members, total, out=np.zeros(len(total)), where=total > 0)
    f1 = np.divide(
        2 * precision * coverage, precision + coverage,
        out=np.zeros(len(total)), where=precision + coverage > 0,
    )  # fmt: skip
    eligible = coverage >= min_coverage
    primary = np.where(eligible, precision, -1.0) if eligible.any() else f1
    order = np.lexsort((np.arange(len(candidates)), need, -coverage, -primary))
    best = int(order[0])
    return Slice(
        tuple(literals[i] for i in candidates[best]),
        float(coverage[best]),
        float(precision[best]),
        int(matched_members[best]),
        int(matched_successes[best]),
    )
