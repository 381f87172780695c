"""Statistics across seeds: summaries with bootstrap intervals, and correlations between suites.

The unit of resampling is the seed (each seed is one trained model); intervals are percentile
bootstrap intervals from `scipy.stats.bootstrap` with a fixed random state, so a report is
reproducible. Beside mean ± std, the distribution-first summaries of Agarwal et al. (2021,
"rliable"): the interquartile mean with a bootstrap interval, pooled over suites with a
stratified bootstrap (seeds resampled within each suite), and the probability that one run's
seed beats another's. `scipy.stats.bootstrap` does the resampling: with one sample per stratum
and `paired=False` it is rliable's stratified bootstrap, without rliable's extra dependencies.

An interval is left out, with its reason in words, where the bootstrap cannot give one: fewer
than `MIN_SEEDS` seeds, or seeds that make every resample give the same value (all seeds
equal, two runs whose seeds do not overlap, ranks in exactly the same order), where the
percentile interval would have zero width: a certainty that seeds cannot give. p-values come
from tests that hold for few seeds: a correlation's from `scipy.stats.permutation_test`, over
every order of the seeds where there are at most `N_RESAMPLES` (up to 7 seeds: exact), else
over that many random orders; Mann-Whitney's exact, ties included, over every split of the
seeds into the two runs (counted, not listed).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from genprobe.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd


class _SciPyStats:
    """`scipy.stats`, imported at its first use (one to two seconds): a command that reads
    a finished run's results needs none of it."""

    def __getattr__(self, name: str) -> Any:
        from scipy import stats as module

        return getattr(module, name)


stats = _SciPyStats()

N_RESAMPLES = 10_000
CONFIDENCE = 0.95
# Two seeds have three distinct resamples, and their correlation is ±1 whatever they did: an
# interval, and a correlation, across seeds needs at least three.
MIN_SEEDS = 3
FLAT = "every resample gives the same value and the bootstrap cannot bound what other seeds do"
THRESHOLD = 0.9  # by default, a seed (a member) "generalizes" to a suite at this accuracy or above


NAN = float("nan")


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    std: float  # sample standard deviation (ddof=1), as in the paper's Table 3
    min: float
    max: float
    median: float
    iqm: float  # interquartile mean: the mean of the middle 50 %
    ci_low: float  # bootstrap CI of the mean over seeds
    ci_high: float
    iqm_ci_low: float = NAN  # bootstrap CI of the IQM over seeds
    iqm_ci_high: float = NAN
    ci_reason: str | None = None  # why the mean has no interval (NaN bounds), if it has none
    iqm_ci_reason: str | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class PooledIQM:
    """The IQM of every (seed, suite) score pooled, with a bootstrap interval stratified by
    suite."""

    iqm: float
    ci_low: float
    ci_high: float
    ci_reason: str | None = None  # why there is no interval, if there is none

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Correlation:
    a: str
    b: str
    n: int
    pearson: float
    # permutation tests: over every order of the seeds up to 7 seeds, else N_RESAMPLES random ones
    pearson_p: float
    pearson_ci: tuple[float, float]
    spearman: float
    spearman_p: float
    spearman_ci: tuple[float, float]
    reason: str | None = None  # why the correlation is NaN, if it is
    pearson_ci_reason: str | None = None  # why a defined correlation has no interval
    spearman_ci_reason: str | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Difference:
    """Mean of `b` minus mean of `a`, two independent groups of seeds."""

    n_a: int
    n_b: int
    difference: float
    ci_low: float  # bootstrap CI of the difference, resampling seeds within each group
    ci_high: float
    mann_whitney_p: float  # two-sided rank test of "same distribution", exact for few seeds
    ci_reason: str | None = None  # why there is no interval, if there is none

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Share:
    """How many seeds reach a threshold, with a Wilson score interval of the share."""

    threshold: float
    k: int
    n: int
    ci_low: float
    ci_high: float

    @property
    def share(self) -> float:
        return self.k / self.n if self.n else NAN

    @property
    def header(self) -> str:
        """A report's column of shares at this threshold: `≥ 90 %`."""
        return f"≥ {100 * self.threshold:g} %"

    def __str__(self) -> str:
        """`7 of 10 [40, 89]`: how many reach the threshold, of how many, and the interval in
        percent (`–` for none)."""
        if not self.n:
            return "–"
        return f"{self.k} of {self.n} [{100 * self.ci_low:.0f}, {100 * self.ci_high:.0f}]"

    def to_dict(self) -> dict[str, float]:
        return {**asdict(self), "share": self.share}


@dataclass(frozen=True)
class Improvement:
    """P(a seed of run b beats a seed of run a) + ½ P(tie): 0.5 = no difference (rliable's
    probability of improvement; the Mann-Whitney U statistic over n_a · n_b)."""

    probability: float
    ci_low: float  # bootstrap CI, seeds resampled within each run
    ci_high: float
    ci_reason: str | None = None  # why there is no interval, if there is none

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Band:
    """The IQM over seeds at each of several points (evaluation steps), with its 95 % percentile
    bootstrap interval at each; arrays of one value per point."""

    iqm: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    ci_reason: list[str | None]  # per point: why it has no interval (NaN bounds), if it has none


@dataclass(frozen=True)
class MedianDifference:
    """Median of `b` minus median of `a`, two independent groups of seeds whose values may be
    censored (+inf: the event did not happen within the budget)."""

    median_a: float  # NaN where more than half of the group is censored
    median_b: float
    difference: float
    ci_low: float  # bootstrap CI, seeds resampled within each group; ±inf: beyond the budget
    ci_high: float
    reason: str | None = None  # why the difference is NaN, if it is
    ci_reason: str | None = None  # why a defined difference has no interval

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def summarize(values: np.ndarray, seed: int = 0) -> Summary:
    """Summary of one suite's accuracies over seeds.

    Raises:
        ValueError: a value is NaN or infinite (a missing seed: leave it out).
    """
    x = _finite(values)
    equal = f"all {len(x)} seeds are equal" if np.ptp(x) == 0 else None
    low, high, reason = _interval((x,), np.mean, seed, equal)
    iqm_low, iqm_high, iqm_reason = _interval((x,), _iqm, seed, equal)
    return Summary(
        n=len(x),
        mean=float(x.mean()),
        std=float(x.std(ddof=1)) if len(x) > 1 else NAN,
        min=float(x.min()),
        max=float(x.max()),
        median=float(np.median(x)),
        iqm=float(stats.trim_mean(x, 0.25)),
        ci_low=low,
        ci_high=high,
        iqm_ci_low=iqm_low,
        iqm_ci_high=iqm_high,
        ci_reason=reason,
        iqm_ci_reason=iqm_reason,
    )


def shares_at_least(table: pd.DataFrame, threshold: float) -> dict[str, Share]:
    """Per column of `table` (one row per seed or member, one column per suite), the share at
    `threshold` or above of its values (missing ones left out).

    Raises:
        ConfigError: a threshold outside [0, 1].
    """
    if not 0 <= threshold <= 1:
        raise ConfigError("threshold", "in [0, 1]", threshold)
    return {suite: share_at_least(table[suite].dropna(), threshold) for suite in table}


def share_at_least(values: np.ndarray, threshold: float) -> Share:
    """The seeds whose accuracy is at least `threshold`, with a 95 % Wilson interval."""
    x = np.asarray(values, dtype=float)
    k = int((x >= threshold).sum())
    return Share(threshold, k, len(x), *wilson_interval(k, len(x)))


def wilson_interval(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of the share k / n (NaNs for n = 0)."""
    if n == 0:
        return NAN, NAN
    interval = stats.binomtest(k, n).proportion_ci(CONFIDENCE, method="wilson")
    return float(interval.low), float(interval.high)


def pooled_iqm(columns: list[np.ndarray], seed: int = 0) -> PooledIQM:
    """The IQM of every (seed, suite) score pooled, and its 95 % stratified bootstrap interval
    (seeds resampled within each suite), as rliable aggregates runs × tasks."""
    data = tuple(_finite(c) for c in columns)
    equal = "every suite's seeds are equal" if all(np.ptp(c) == 0 for c in data) else None
    low, high, reason = _interval(data, _pooled_iqm, seed, equal, paired=False)
    return PooledIQM(float(stats.trim_mean(np.concatenate(data), 0.25)), low, high, reason)


def probability_of_improvement(a: np.ndarray, b: np.ndarray, seed: int = 0) -> Improvement:
    """P(X_b > X_a) + ½ P(X_b = X_a) over seeds of two runs, with a bootstrap interval."""
    a, b = _finite(a), _finite(b)
    if not len(a) or not len(b):
        return Improvement(NAN, NAN, NAN)
    p = float(_improvement(a, b))
    apart = "the seeds do not overlap" if p in (0.0, 1.0) else None
    # In batches: each resample compares every pair of seeds.
    low, high, reason = _interval((a, b), _improvement, seed, apart, paired=False, batch=200)
    return Improvement(p, low, high, reason)


def correlate(a: str, x: np.ndarray, b: str, y: np.ndarray, seed: int = 0) -> Correlation:
    """Pearson and Spearman correlation of two suites across the same seeds (paired).

    Raises:
        ValueError: `x` and `y` differ in length, or hold NaN or infinite values.
    """
    x, y = _finite(x), _finite(y)
    if len(x) != len(y):
        raise ValueError(
            f"suites {a} and {b} have different numbers of seeds: {len(x)} != {len(y)}"
        )
    reason = None
    if len(x) < MIN_SEEDS:
        reason = f"needs at least {MIN_SEEDS} seeds, has {len(x)}"
    elif constant := [name for name, v in ((a, x), (b, y)) if np.ptp(v) == 0]:
        # A constant suite (every seed at 100 %) correlates with nothing.
        reason = f"{' and '.join(constant)} {'is' if len(constant) == 1 else 'are'} constant"
    if reason:
        return Correlation(a, b, len(x), NAN, NAN, (NAN, NAN), NAN, NAN, (NAN, NAN), reason)
    spearman = float(_spearman(x, y))
    ordered = None
    if np.isclose(abs(spearman), 1):
        order = "the same" if spearman > 0 else "reverse"
        ordered = f"the seeds rank in {order} order on {a} and {b}"
    pearson_low, pearson_high, pearson_reason = _interval((x, y), _pearson, seed)
    spearman_low, spearman_high, spearman_reason = _interval((x, y), _spearman, seed, ordered)
    return Correlation(
        a=a,
        b=b,
        n=len(x),
        pearson=float(_pearson(x, y)),
        pearson_p=_association_p(_pearson, x, y, seed),
        pearson_ci=(pearson_low, pearson_high),
        spearman=spearman,
        spearman_p=_association_p(_spearman, x, y, seed),
        spearman_ci=(spearman_low, spearman_high),
        pearson_ci_reason=pearson_reason,
        spearman_ci_reason=spearman_reason,
    )


def compare_groups(a: np.ndarray, b: np.ndarray, seed: int = 0) -> Difference:
    """Difference of means of two runs' per-seed accuracies, its bootstrap interval (seeds
    resampled within each run) and a Mann-Whitney U test."""
    a, b = _finite(a), _finite(b)
    constant = min(len(a), len(b)) > 0 and np.ptp(a) == np.ptp(b) == 0
    equal = "each group's seeds are equal" if constant else None
    low, high, reason = _interval((a, b), _difference_of_means, seed, equal, paired=False)
    return Difference(
        n_a=len(a),
        n_b=len(b),
        difference=float(b.mean() - a.mean()) if len(a) and len(b) else NAN,
        ci_low=low,
        ci_high=high,
        mann_whitney_p=_rank_test_p(a, b),
        ci_reason=reason,
    )


def iqm_band(values: np.ndarray, seed: int = 0) -> Band:
    """The IQM over seeds at each point and its 95 % percentile bootstrap interval (from
    `BAND_RESAMPLES` resamples), every point at once: `values` has one row per point and one
    column per seed (the seeds resampled together at every point: one seed is one model).

    Raises:
        ValueError: a value is NaN or infinite.
    """
    x = np.atleast_2d(_finite(values))
    points, seeds = x.shape
    iqm = _iqm(x)
    if seeds < MIN_SEEDS:
        return Band(
            iqm, np.full(points, NAN), np.full(points, NAN), [_too_few(seeds, False)] * points
        )
    # The resamples of every point at once, in batches small enough to keep memory bounded.
    batch = max(1, _BATCH_VALUES // x.size)
    low, high = _bounds((x,), _iqm, seed, batch=batch, n_resamples=BAND_RESAMPLES)
    flat = np.isclose(low, high, rtol=0, atol=1e-12)
    equal = np.ptp(x, axis=-1) == 0
    reasons = [
        (f"all {seeds} seeds are equal, so {FLAT}" if same else FLAT) if empty else None
        for empty, same in zip(flat, equal, strict=True)
    ]
    return Band(iqm, np.where(flat, NAN, low), np.where(flat, NAN, high), reasons)


# A band drawn along a curve, at every evaluation step: fewer resamples than a table's interval
# (its 2.5th percentile is the 50th of them, well within a line's width), five times faster.
BAND_RESAMPLES = 2_000
_BATCH_VALUES = 2**22  # resampled values held at once (32 MiB of floats)


def censored_median(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """The median of values where +inf marks a censored one (the event did not happen within
    the budget, which is later than every observed value): the smallest value that at least
    half of all values are at or below, +inf where more than half are censored. This is the
    Kaplan-Meier median when every censoring is at or after every event."""
    ordered = np.sort(values, axis=axis)
    return np.take(ordered, (ordered.shape[axis] + 1) // 2 - 1, axis=axis)


def censored_median_difference(a: np.ndarray, b: np.ndarray, seed: int = 0) -> MedianDifference:
    """Median of `b` minus median of `a` (`censored_median`: +inf marks a censored value) and
    its 95 % bootstrap interval, seeds resampled within each group. A resample's median may be
    censored: a bound beyond the budget is ±inf."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if np.isnan(a).any() or np.isnan(b).any() or np.isneginf(np.concatenate([a, b])).any():
        raise ValueError("censored values must be numbers or +inf (censored), not NaN or -inf")
    if not len(a) or not len(b):
        return MedianDifference(NAN, NAN, NAN, NAN, NAN, "a group has no seeds")
    median_a, median_b = (float(censored_median(x)) for x in (a, b))
    beyond = [
        f"{name} ({int(np.isinf(x).sum())} of {len(x)} censored)"
        for name, x, median in (("a", a, median_a), ("b", b, median_b))
        if np.isinf(median)
    ]
    shown = (NAN if np.isinf(m) else m for m in (median_a, median_b))
    if beyond:
        reason = f"more than half the seeds are censored in {' and '.join(beyond)}: no median"
        return MedianDifference(*shown, NAN, NAN, NAN, reason)
    low, high, reason = NAN, NAN, None
    if min(len(a), len(b)) < MIN_SEEDS:
        reason = _too_few(min(len(a), len(b)), True)
    else:
        low, high = (
            float(v) for v in _bounds((a, b), _median_difference, seed, False, None, "nearest")
        )
        if low == high:
            low, high, reason = NAN, NAN, FLAT
    return MedianDifference(*shown, median_b - median_a, low, high, None, reason)


def _median_difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # both censored: inf - inf, unknown, dropped
        return censored_median(b, axis) - censored_median(a, axis)


def _finite(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if not np.isfinite(x).all():
        raise ValueError(f"values over seeds must be finite (leave a missing seed out): {x}")
    return x


def _iqm(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return stats.trim_mean(x, 0.25, axis=axis)


def _pooled_iqm(*columns: np.ndarray, axis: int = -1) -> np.ndarray:
    return stats.trim_mean(np.concatenate(columns, axis=axis), 0.25, axis=axis)


def _improvement(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    wins = (b[..., :, None] > a[..., None, :]).mean(axis=(-2, -1))
    ties = (b[..., :, None] == a[..., None, :]).mean(axis=(-2, -1))
    return wins + 0.5 * ties


def _difference_of_means(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(b, axis=axis) - np.mean(a, axis=axis)


def _pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return stats.pearsonr(x, y, axis=axis).statistic


def _spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return _pearson(stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis), axis=axis)


def _association_p(
    statistic: Callable[..., np.ndarray], x: np.ndarray, y: np.ndarray, seed: int
) -> float:
    """Two-sided permutation p of "no association" between paired seeds: over every order of
    the seeds of `x` against `y` where there are at most N_RESAMPLES (exact: 720 at 6 seeds),
    else over N_RESAMPLES random orders. Not SciPy's large-sample p, which is 0 at ρ = ±1
    however few the seeds and however many of them tie."""
    result = stats.permutation_test(
        (x,),
        lambda shuffled, axis=-1: statistic(shuffled, y, axis=axis),
        permutation_type="pairings",
        vectorized=True,
        n_resamples=N_RESAMPLES,
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def _rank_test_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney p of "same distribution", exact at any number of seeds, ties
    included: the share of all splits of the pooled seeds into groups of b's and a's sizes whose
    rank sum of the b group is as far out as the observed one (`_rank_sum_counts`)."""
    if not len(a) or not len(b):
        return NAN
    doubled = np.rint(2 * stats.rankdata(np.concatenate([b, a]))).astype(int)  # midranks x2
    counts = _rank_sum_counts(doubled, b.size)
    observed = int(doubled[: b.size].sum())
    splits = counts.sum()
    below, above = counts[: observed + 1].sum() / splits, counts[observed:].sum() / splits
    return float(min(1.0, 2 * min(below, above)))


def _rank_sum_counts(ranks: np.ndarray, size: int) -> np.ndarray:
    """How many subsets of `size` of `ranks` (non-negative integers) have each sum: counting
    the splits instead of listing them (184,756 at 10 seeds against 10)."""
    counts = np.zeros((size + 1, int(ranks.sum()) + 1))
    counts[0, 0] = 1.0
    for rank in ranks:  # counts[k, s] += counts[k - 1, s - rank], from the counts before it
        counts[1:, rank:] += counts[:-1, : counts.shape[1] - rank].copy()
    return counts[size]


def _interval(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    seed: int,
    equal: str | None = None,
    paired: bool = True,
    batch: int | None = None,
) -> tuple[float, float, str | None]:
    """The percentile bootstrap interval of `statistic`, or NaN bounds and why there is none:
    too few seeds, or every resample giving the same value (`equal`: why they do, if known)."""
    seeds = min(len(d) for d in data)
    if seeds < MIN_SEEDS:
        return NAN, NAN, _too_few(seeds, len(data) > 1 and not paired)
    low, high = _bounds(data, statistic, seed, paired, batch)
    if np.isclose(low, high, rtol=0, atol=1e-12):
        return NAN, NAN, f"{equal}, so {FLAT}" if equal else FLAT
    return float(low), float(high), None


def _too_few(seeds: int, groups: bool) -> str:
    return f"needs at least {MIN_SEEDS} seeds{' in each group' if groups else ''}, has {seeds}"


def _bounds(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    seed: int,
    paired: bool = True,
    batch: int | None = None,
    method: str = "linear",
    n_resamples: int = N_RESAMPLES,
) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % percentile bootstrap bounds of `statistic` over the seeds (the last axis of
    each array in `data`), for every index of the leading axes at once. `method`: how
    `np.nanpercentile` picks between resamples ("nearest" keeps infinite values apart)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate resamples give NaN statistics, dropped below
        result = stats.bootstrap(
            data,
            statistic,
            paired=paired and len(data) > 1,
            vectorized=True,
            n_resamples=n_resamples,
            confidence_level=CONFIDENCE,
            method="percentile",
            rng=np.random.default_rng(seed),
            batch=batch,
            axis=-1,  # the seeds
        )
        # With few seeds some resamples repeat one seed only (a correlation is then undefined):
        # the percentile interval is taken over the resamples where the statistic exists.
        tail = 100 * (1 - CONFIDENCE) / 2
        low, high = np.nanpercentile(
            result.bootstrap_distribution, [tail, 100 - tail], axis=-1, method=method
        )
    return low, high
