"""Comparing two runs on the same items: every member of each answered the same inputs, so the
comparison pairs the items, and the seeds too where the runs share them.

- `multi_bootstrap`: Sellam et al. (2022, *The MultiBERTs*)'s multi-bootstrap: each resample
  draws the seeds (the same draw for both runs where they share their seeds, else one draw for
  each) and the items (always one draw for both), and takes the difference of mean accuracy;
  with `clusters`, it draws whole clusters of items (the items of one template or perturbation
  family are not independent), a cluster bootstrap.
- `mcnemar`: McNemar's exact test for each matched pair of members on the same items.
- `adjusted`: Holm's and Benjamini-Hochberg's adjusted p-values over many suites (statsmodels).
- `performance_profile`: the share of members × suites at or above each threshold, with a
  bootstrap band over members within each suite (Agarwal et al. 2021).
- `expected_best`: the expected best of k seeds, the unbiased estimator over the n seeds run
  (Dodge et al. 2019; Tang et al. 2020, *Showing Your Work Doesn't Always Work*).
- `equivalence`: two one-sided tests (TOST, statsmodels) that two groups of accuracies differ
  by less than a margin.

Rightness is (members, items) bool, one row per member; seeds name the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
import pandas as pd

RESAMPLES = 2_000
CHUNK = 250  # resamples drawn at once: (CHUNK, items) weights in memory
CONFIDENCE = 0.95
NAN = float("nan")


@dataclass(frozen=True)
class PairedDifference:
    """Mean accuracy of A less B's over a multi-bootstrap: the difference, its percentile
    interval, P(A > B) (the share of resamples where A is ahead), the two-sided p-value
    2·min(P(Δ ≤ 0), P(Δ ≥ 0)) (Sellam et al.'s one-sided p is P(Δ ≤ 0)), whether the seeds
    were paired; `reason` where no interval can be given."""

    difference: float
    low: float
    high: float
    p_better: float
    p_value: float
    paired_seeds: bool
    resamples: int
    reason: str | None = None


def multi_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    seeds_a: np.ndarray,
    seeds_b: np.ndarray,
    clusters: np.ndarray | None = None,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> PairedDifference:
    """The multi-bootstrap of mean accuracy A − B over seeds and items (`clusters`: (M,) the
    cluster of each item, drawn whole). Seeds are paired where the runs have the same seeds
    (compared as sets; the rows are matched by seed), else drawn apart."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"A answered {a.shape[1]} items, B {b.shape[1]}: not the same items")
    difference = a.mean() - b.mean()
    paired = set(np.asarray(seeds_a).tolist()) == set(np.asarray(seeds_b).tolist())
    if paired:
        b = b[np.argsort(np.asarray(seeds_b))][np.argsort(np.argsort(np.asarray(seeds_a)))]
    reason = _too_few(len(a), len(b), a.shape[1] if clusters is None else len(np.unique(clusters)))
    if reason is not None:
        return PairedDifference(difference, NAN, NAN, NAN, NAN, paired, 0, reason)
    rng = np.random.default_rng(seed)
    deltas = np.concatenate([
        _deltas(a, b, paired, clusters, min(CHUNK, resamples - start), rng)
        for start in range(0, resamples, CHUNK)
    ])  # fmt: skip
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(deltas, [tail, 1 - tail])
    below, above = (deltas <= 0).mean(), (deltas >= 0).mean()
    p_value = min(1.0, 2 * min(below, above))
    if np.isclose(low, high, rtol=0, atol=1e-12):
        reason = "every resample gives the same difference: no interval can be drawn from it"
        return PairedDifference(difference, NAN, NAN, float((deltas > 0).mean()), NAN, paired,
                                resamples, reason)  # fmt: skip
    return PairedDifference(difference, float(low), float(high), float((deltas > 0).mean()),
                            float(p_value), paired, resamples)  # fmt: skip


def _deltas(
    a: np.ndarray,
    b: np.ndarray,
    paired: bool,
    clusters: np.ndarray | None,
    resamples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """(R,) A − B in each of `resamples` multi-bootstrap resamples."""
    weights = _item_weights(a.shape[1], clusters, resamples, rng)  # (R, M)
    draws_a = _seed_counts(len(a), resamples, rng)  # (R, Sa)
    draws_b = draws_a if paired else _seed_counts(len(b), resamples, rng)
    return _weighted_means(a, draws_a, weights) - _weighted_means(b, draws_b, weights)


def _too_few(members_a: int, members_b: int, units: int) -> str | None:
    if min(members_a, members_b) < 2:
        return f"needs at least 2 members in each run, has {members_a} and {members_b}"
    if units < 2:
        return f"needs at least 2 items (or clusters) to draw, has {units}"
    return None


def _seed_counts(members: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(R, S) how often each member is drawn in each resample (S draws with replacement)."""
    drawn = rng.integers(0, members, (resamples, members))
    return _counts(drawn, members)


def _item_weights(
    items: int, clusters: np.ndarray | None, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """(R, M) how often each item is drawn: items with replacement, or whole clusters."""
    if clusters is None:
        return _counts(rng.integers(0, items, (resamples, items)), items)
    names, cluster_of = np.unique(np.asarray(clusters), return_inverse=True)
    drawn = _counts(rng.integers(0, len(names), (resamples, len(names))), len(names))
    return drawn[:, cluster_of]


def _counts(drawn: np.ndarray, size: int) -> np.ndarray:
    """(R, size) how often each index appears in each row of `drawn`."""
    offsets = drawn + size * np.arange(len(drawn))[:, None]
    return np.bincount(offsets.ravel(), minlength=len(drawn) * size).reshape(-1, size) * 1.0


def _weighted_means(right: np.ndarray, members: np.ndarray, items: np.ndarray) -> np.ndarray:
    """(R,) per resample, the mean over its drawn members of each one's accuracy on its drawn
    items (a member drawn twice counts twice, so does an item)."""
    per_member = right @ items.T / items.sum(axis=1)  # (S, R)
    return (members * per_member.T).sum(axis=1) / members.sum(axis=1)


def mcnemar(a: np.ndarray, b: np.ndarray, seeds_a: np.ndarray, seeds_b: np.ndarray) -> pd.DataFrame:
    """One row per matched pair of members (by shared seed; where the runs share none, the
    k-th seed of each in ascending order): the items only A's member got right and only B's,
    McNemar's exact p-value (the binomial test of the discordant pairs, SciPy's), and which
    side the pair favours ("A", "B" or "neither")."""
    from scipy.stats import binomtest

    seeds_a, seeds_b = np.asarray(seeds_a), np.asarray(seeds_b)
    shared = np.intersect1d(seeds_a, seeds_b)
    if len(shared):
        pairs = [(int(np.flatnonzero(seeds_a == s)[0]), int(np.flatnonzero(seeds_b == s)[0]))
                 for s in shared]  # fmt: skip
    else:
        pairs = list(zip(np.argsort(seeds_a), np.argsort(seeds_b), strict=False))
    rows = []
    for i, j in pairs:
        only_a = int((a[i] & ~b[j]).sum())
        only_b = int((~a[i] & b[j]).sum())
        discordant = only_a + only_b
        p = binomtest(only_a, discordant, 0.5).pvalue if discordant else 1.0
        rows.append({
            "seed_a": seeds_a[i], "seed_b": seeds_b[j], "only_a": only_a, "only_b": only_b,
            "p_value": float(p),
            "favours": "A" if only_a > only_b else "B" if only_b > only_a else "neither",
        })  # fmt: skip
    return pd.DataFrame(rows)


def adjusted(p_values: np.ndarray) -> pd.DataFrame:
    """Holm's (family-wise error) and Benjamini-Hochberg's (false discovery rate) adjusted
    p-values of many tests, NaN kept out of the adjustment and in place."""
    from statsmodels.stats.multitest import multipletests

    p_values = np.asarray(p_values, dtype=np.float64)
    known = ~np.isnan(p_values)
    holm, bh = np.full(len(p_values), NAN), np.full(len(p_values), NAN)
    if known.any():
        holm[known] = multipletests(p_values[known], method="holm")[1]
        bh[known] = multipletests(p_values[known], method="fdr_bh")[1]
    return pd.DataFrame({"p_value": p_values, "holm": holm, "benjamini_hochberg": bh})


def performance_profile(
    scores: np.ndarray, thresholds: np.ndarray, resamples: int = RESAMPLES, seed: int = 0
) -> pd.DataFrame:
    """Per threshold τ, the share of members × suites (`scores`, (S, K)) scoring at least τ,
    with a 95 % band from resampling the members within each suite (rliable's stratified
    bootstrap)."""
    scores = np.asarray(scores, dtype=np.float64)
    thresholds = np.asarray(thresholds, dtype=np.float64)
    share = (scores[..., None] >= thresholds).mean(axis=(0, 1))
    rng = np.random.default_rng(seed)
    members, suites = scores.shape
    shares = []
    for start in range(0, resamples, CHUNK):
        drawn = rng.integers(0, members, (min(CHUNK, resamples - start), members, suites))
        resampled = np.take_along_axis(scores[None], drawn, axis=1)  # (R, S, K)
        shares.append((resampled[..., None] >= thresholds).mean(axis=(1, 2)))  # (R, T)
    shares = np.concatenate(shares)
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(shares, [tail, 1 - tail], axis=0)
    return pd.DataFrame({"threshold": thresholds, "share": share, "low": low, "high": high})


def expected_best(values: np.ndarray, k: int) -> float:
    """The expected maximum of k of the n `values` drawn without replacement: the unbiased
    estimator Σ_i v_(i) C(i−1, k−1) / C(n, k) over the values in ascending order."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    n = len(ordered)
    if not 1 <= k <= n:
        raise ValueError(f"k must be in 1..{n} (the seeds run), is {k}")
    weights = np.array([comb(i - 1, k - 1) for i in range(1, n + 1)], dtype=np.float64)
    return float(ordered @ weights / comb(n, k))


@dataclass(frozen=True)
class Equivalence:
    """Two one-sided tests that two groups' means differ by less than `margin`: the
    difference, TOST's p-value (the larger of the two one-sided ones) and whether it is below
    the level: equivalent within the margin."""

    difference: float
    margin: float
    p_value: float
    equivalent: bool
    reason: str | None = None


def equivalence(
    a: np.ndarray, b: np.ndarray, margin: float, paired: bool = False, level: float = 0.05
) -> Equivalence:
    """TOST of mean(a) − mean(b) within ±margin (statsmodels' `ttost_ind`, Welch's; with
    `paired`, `ttost_paired`)."""
    from statsmodels.stats.weightstats import ttost_ind, ttost_paired

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    difference = float(a.mean() - b.mean())
    if min(len(a), len(b)) < 2:
        return Equivalence(difference, margin, NAN, False, "needs at least 2 in each group")
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return Equivalence(difference, margin, NAN, abs(difference) < margin,
                           "every value in each group is the same: no spread to test")  # fmt: skip
    if paired:
        p = ttost_paired(a, b, -margin, margin)[0]
    else:
        p = ttost_ind(a, b, -margin, margin, usevar="unequal")[0]
    return Equivalence(difference, margin, float(p), bool(p < level))
