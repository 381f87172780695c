"""Readable slices: a short predicate over tree features that describes a cluster of failures.

Embedding clusters are hard to read. A slice says in words what a cluster's members share
("has exp and largest |int| ≥ 100") and how well: coverage (the share of the cluster it holds)
and precision (the share of what it holds that the model failed, against the model's
successes). Like slice finders such as SliceLine, it searches conjunctions of literals over a
feature table; every conjunction of a given length is scored at once with 0/1 matrix products.

Example:
    features = tree_features(problems)  # tasks/integration/features.py
    find_slice(features, members=in_cluster, successes=solved).text  ->  "has exp"
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)  # of the members' values: the numeric thresholds tried


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@dataclass(frozen=True)
class Literal:
    """One condition on one feature: `==` a boolean, or `>=` / `<=` a number."""

    feature: str
    op: str  # "==", ">=", "<="
    value: float | bool

    @property
    def text(self) -> str:
        if self.op == "==":
            if self.feature == "x in exponent":  # reads as a statement, not a thing one has
                return self.feature if self.value else f"no {self.feature}"
            return f"has {self.feature}" if self.value else f"no {self.feature}"
        sign = {">=": "≥", "<=": "≤"}[self.op]
        return f"{self.feature} {sign} {_number(self.value)}"

    def holds(self, features: pd.DataFrame) -> np.ndarray:
        """The rows of `features` where this literal holds, as a boolean array."""
        column = features[self.feature].to_numpy()
        if self.op == "==":
            return column.astype(bool) == bool(self.value)
        if self.op == ">=":
            return column >= self.value
        if self.op == "<=":
            return column <= self.value
        raise ValueError(f"unknown literal operator {self.op!r}")


@dataclass(frozen=True)
class Slice:
    literals: tuple[Literal, ...]
    coverage: float  # members matched / members
    precision: float  # members matched / (members + successes matched); 0.0 if none matched
    members: int  # members matched
    successes: int  # successes matched

    @property
    def text(self) -> str:
        """The literals joined by "and"; a feature bounded on both sides reads as one
        condition (`size = 5`, not `size ≥ 5 and size ≤ 5`; `2 ≤ depth ≤ 4`)."""
        low = {lit.feature: lit.value for lit in self.literals if lit.op == ">="}
        high = {lit.feature: lit.value for lit in self.literals if lit.op == "<="}
        parts = []
        for lit in self.literals:
            name = lit.feature
            if name not in low or name not in high:
                parts.append(lit.text)
            elif lit.op == ">=":  # the pair is said once, where its lower bound stands
                lo, hi = _number(low[name]), _number(high[name])
                parts.append(f"{name} = {lo}" if lo == hi else f"{lo} ≤ {name} ≤ {hi}")
        return " and ".join(parts) or "everything"

    def implies(self, other: Slice) -> bool:
        """This slice nests inside `other`: it has all of `other`'s literals (and maybe more)."""
        return set(other.literals) <= set(self.literals)


def candidate_literals(features: pd.DataFrame, members: np.ndarray) -> list[Literal]:
    """Each boolean column true and false; each numeric column `≥ t` and `≤ t` for t at the
    `QUANTILES` of the members' values. Columns of other types are skipped."""
    out: list[Literal] = []
    for name in features.columns:
        column = features[name]
        if pd.api.types.is_bool_dtype(column):
            out += [Literal(name, "==", True), Literal(name, "==", False)]
        elif pd.api.types.is_numeric_dtype(column) and members.any():
            values = column.to_numpy()[members]
            cuts = np.unique(np.quantile(values, QUANTILES, method="nearest"))
            out += [Literal(name, ">=", float(c)) for c in cuts]
            out += [Literal(name, "<=", float(c)) for c in cuts]
    return out


def find_slice(
    features: pd.DataFrame,
    members: np.ndarray,
    successes: np.ndarray,
    max_literals: int = 2,
    min_coverage: float = 0.6,
) -> Slice:
    """The conjunction of at most `max_literals` candidate literals that best separates the
    `members` rows from the `successes` rows (two disjoint boolean masks over `features`).

    Among conjunctions covering at least `min_coverage` of the members: the most precise, then
    the one covering more, then the shorter, then the earlier in candidate order. If none covers
    that much, the best by F1 of coverage and precision (same tie-breaks).
    """
    members = np.asarray(members, dtype=bool)
    successes = np.asarray(successes, dtype=bool)
    if members.shape != (len(features),) or successes.shape != (len(features),):
        raise ValueError("members and successes must be boolean masks over the feature rows")
    n_members = int(members.sum())
    if n_members == 0:
        return Slice((), 0.0, 0.0, 0, int(successes.sum()))

    literals = candidate_literals(features, members)
    holds = np.zeros((len(features), len(literals)), dtype=bool)
    for j, lit in enumerate(literals):
        holds[:, j] = lit.holds(features)
    # A literal no member satisfies only makes empty conjunctions; dropping it changes no answer.
    keep = holds[members].any(axis=0)
    literals = [lit for lit, k in zip(literals, keep, strict=True) if k]
    m_holds, s_holds = holds[members][:, keep], holds[successes][:, keep]
    m_float, s_float = m_holds.astype(np.float64), s_holds.astype(np.float64)
    n_lits = len(literals)

    # Conjunctions are built level by level with increasing literal indices. Level k keeps,
    # per conjunction, its parent (a level k-1 index) and its last literal; the counts of all
    # extensions of all prefixes are one matrix product of the prefixes' row masks with `holds`.
    parents: list[np.ndarray] = [np.array([-1])]
    lasts: list[np.ndarray] = [np.array([-1])]
    m_counts: list[np.ndarray] = [np.array([n_members])]
    s_counts: list[np.ndarray] = [np.array([int(successes.sum())])]
    m_prefix = np.ones((1, len(m_holds)), dtype=bool)
    s_prefix = np.ones((1, len(s_holds)), dtype=bool)
    for level in range(1, max_literals + 1):
        m_ext = m_prefix.astype(np.float64) @ m_float  # prefixes × literals, exact integer counts
        s_ext = s_prefix.astype(np.float64) @ s_float
        # extend a prefix only with later literals, and only if it still covers some member
        allowed = (np.arange(n_lits)[None, :] > lasts[-1][:, None]) & (m_counts[-1] > 0)[:, None]
        prefix, literal = np.nonzero(allowed)
        if len(prefix) == 0:
            break
        parents.append(prefix)
        lasts.append(literal)
        m_counts.append(m_ext[prefix, literal].round().astype(np.int64))
        s_counts.append(s_ext[prefix, literal].round().astype(np.int64))
        if level < max_literals:
            m_prefix = m_prefix[prefix] & m_holds.T[literal]
            s_prefix = s_prefix[prefix] & s_holds.T[literal]

    matched_m = np.concatenate(m_counts)
    matched_s = np.concatenate(s_counts)
    length = np.concatenate([np.full(len(c), k) for k, c in enumerate(m_counts)])
    coverage = matched_m / n_members
    total = matched_m + matched_s
    precision = np.divide(matched_m, total, out=np.zeros(len(total)), where=total > 0)
    f1 = np.divide(
        2 * precision * coverage,
        precision + coverage,
        out=np.zeros(len(total)),
        where=precision + coverage > 0,
    )
    eligible = coverage >= min_coverage
    primary = np.where(eligible, precision, -1.0) if eligible.any() else f1
    best = int(np.lexsort((np.arange(len(total)), length, -coverage, -primary))[0])

    chosen: list[Literal] = []
    level = int(length[best])
    index = best - sum(len(c) for c in m_counts[:level])
    while level > 0:
        chosen.append(literals[int(lasts[level][index])])
        index = int(parents[level][index])
        level -= 1
    return Slice(
        tuple(reversed(chosen)),
        float(coverage[best]),
        float(precision[best]),
        int(matched_m[best]),
        int(matched_s[best]),
    )
