"""Per-example estimates from many members, each trained on its own random subset of the
training split (subset seeds, `--subsets`).

Every function takes `trained`, (S, N) bool: member s trained on training example i, and a
matrix of rightness, (S, N) for the training examples or (S, M) for a suite's, member s right
on example j. An estimate compares two groups of members: those that trained on an example
and those that did not. Each rate carries its 95 % Wilson interval; a difference of two rates
Newcombe's hybrid score interval (both by statsmodels). Where a group has fewer than
`min_members` members the estimate is undetermined (NaN, `determined` false): never a score
from one member.

- `memorization`: Feldman & Zhang (2020), *What Neural Networks Memorize and Why*: for each
  training example, P(right | trained on it) − P(right | not).
- `consistency`: Jiang et al. (2021)'s consistency score at the subset fraction: for each
  example, P(right | not trained on it) (every member, for an example outside the training
  split).
- `influence`: Feldman & Zhang's estimator of a training example's influence on a test
  example, P(test right | trained on the training example) − P(test right | not).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

MIN_MEMBERS = 5  # the fewest members in a group that an estimate is made from
CONFIDENCE = 0.95


def rates(right: np.ndarray, members: np.ndarray, min_members: int = MIN_MEMBERS) -> pd.DataFrame:
    """Per example (column), the share of `members` (S, N) bool that are `right` (S, N):
    members, right, rate and its interval (low, high); NaN where fewer than `min_members`."""
    n = members.sum(axis=0)
    k = (right & members).sum(axis=0)
    return _rates(k, n, min_members)


def memorization(
    right: np.ndarray, trained: np.ndarray, min_members: int = MIN_MEMBERS
) -> pd.DataFrame:
    """One row per training example: the rate of right answers among the members that trained
    on it (`trained_*`) and among those that did not (`untrained_*`), their difference
    (`memorization`, with `memorization_low` and `_high`), and whether both groups were big
    enough (`determined`)."""
    _check(right, trained)
    inside = rates(right, trained, min_members).add_prefix("trained_")
    outside = rates(right, ~trained, min_members).add_prefix("untrained_")
    difference = _difference(
        inside["trained_right"], inside["trained_members"],
        outside["untrained_right"], outside["untrained_members"], min_members,
    )  # fmt: skip
    return pd.concat([inside, outside, difference.add_prefix("memorization")], axis=1).assign(
        determined=lambda t: t["memorization"].notna()
    )


def consistency(
    right: np.ndarray, trained: np.ndarray | None = None, min_members: int = MIN_MEMBERS
) -> pd.DataFrame:
    """One row per example: the rate of right answers among the members that did not train on
    it (all members where `trained` is None: a suite's examples), as `consistency` with its
    interval, the members it counts, and `determined`."""
    untrained = np.ones_like(right, dtype=bool) if trained is None else ~trained
    _check(right, untrained)
    table = rates(right, untrained, min_members)
    return table.rename(columns={"rate": "consistency", "low": "consistency_low",
                                 "high": "consistency_high"}).assign(
        determined=lambda t: t["consistency"].notna()
    )  # fmt: skip


def influence(
    right: np.ndarray,
    trained: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray],
    min_members: int = MIN_MEMBERS,
) -> pd.DataFrame:
    """The influence of training example i on test example j for each of the `pairs` (train
    indices, test indices): one row per pair with train, test, influence and its interval,
    `determined`. `right` is (S, M), the members' rightness on the test examples."""
    if right.shape[0] != trained.shape[0]:
        raise ValueError(f"{right.shape[0]} members are right or wrong, {trained.shape[0]} trained")
    train, test = (np.asarray(a, dtype=np.int64) for a in pairs)
    inside, hits = trained[:, train], right[:, test]
    table = _difference(
        (hits & inside).sum(axis=0), inside.sum(axis=0),
        (hits & ~inside).sum(axis=0), (~inside).sum(axis=0), min_members,
    ).add_prefix("influence")  # fmt: skip
    return pd.concat([pd.DataFrame({"train": train, "test": test}), table], axis=1).assign(
        determined=lambda t: t["influence"].notna()
    )


def _check(right: np.ndarray, members: np.ndarray) -> None:
    if right.shape != members.shape:
        raise ValueError(f"rightness {right.shape} and membership {members.shape} differ")


def _rates(k: np.ndarray, n: np.ndarray, min_members: int) -> pd.DataFrame:
    k, n = np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64)
    enough = n >= max(min_members, 1)
    rate, low, high = (np.full(len(n), np.nan) for _ in range(3))
    rate[enough] = k[enough] / n[enough]
    low[enough], high[enough] = proportion_confint(
        k[enough], n[enough], alpha=1 - CONFIDENCE, method="wilson"
    )
    return pd.DataFrame({"members": n, "right": k, "rate": rate, "low": low, "high": high})


def _difference(
    k1: np.ndarray, n1: np.ndarray, k2: np.ndarray, n2: np.ndarray, min_members: int
) -> pd.DataFrame:
    """The difference of rates k1/n1 − k2/n2 with Newcombe's interval, columns "", "_low",
    "_high" (to be prefixed); NaN where either group is smaller than `min_members`."""
    k1, n1, k2, n2 = (np.asarray(a, dtype=np.int64) for a in (k1, n1, k2, n2))
    enough = (n1 >= max(min_members, 1)) & (n2 >= max(min_members, 1))
    difference, low, high = (np.full(len(n1), np.nan) for _ in range(3))
    k1, n1, k2, n2 = k1[enough], n1[enough], k2[enough], n2[enough]
    difference[enough] = k1 / n1 - k2 / n2
    if enough.any():
        low[enough], high[enough] = confint_proportions_2indep(
            k1, n1, k2, n2, method="newcomb", compare="diff", alpha=1 - CONFIDENCE
        )
    return pd.DataFrame({"": difference, "_low": low, "_high": high})
