"""Statistics across seeds: summaries with bootstrap intervals, and correlations between suites.

The unit of resampling is the seed (each seed is one trained model); intervals are percentile
bootstrap intervals from `scipy.stats.bootstrap` with a fixed random state, so a report is
reproducible. Beside mean ± std, the distribution-first summaries of Agarwal et al. (2021,
"rliable"): the interquartile mean with a bootstrap interval, pooled over suites with a
stratified bootstrap (seeds resampled within each suite), and the probability that one run's
seed beats another's. `scipy.stats.bootstrap` does the resampling: with one sample per stratum
and `paired=False` it is rliable's stratified bootstrap, without rliable's extra dependencies.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

N_RESAMPLES = 10_000
CONFIDENCE = 0.95
# A correlation of two seeds is ±1 whatever the seeds did, and its bootstrap has nothing to
# resample: a correlation across seeds needs at least three.
MIN_CORRELATION_SEEDS = 3


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
    iqm_ci_low: float = float("nan")  # bootstrap CI of the IQM over seeds
    iqm_ci_high: float = float("nan")

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Correlation:
    a: str
    b: str
    n: int
    pearson: float
    pearson_p: float
    pearson_ci: tuple[float, float]
    spearman: float
    spearman_p: float
    spearman_ci: tuple[float, float]
    reason: str | None = None  # why the correlation is NaN, if it is

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
    mann_whitney_p: float  # two-sided rank test of "same distribution"

    def to_dict(self) -> dict[str, float]:
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
        return self.k / self.n if self.n else float("nan")

    def to_dict(self) -> dict[str, float]:
        return {**asdict(self), "share": self.share}


@dataclass(frozen=True)
class Improvement:
    """P(a seed of run b beats a seed of run a) + ½ P(tie): 0.5 = no difference (rliable's
    probability of improvement; the Mann-Whitney U statistic over n_a · n_b)."""

    probability: float
    ci_low: float  # bootstrap CI, seeds resampled within each run
    ci_high: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def summarize(values: np.ndarray, seed: int = 0) -> Summary:
    """Summary of one suite's accuracies over seeds."""
    x = np.asarray(values, dtype=float)
    constant = len(x) > 0 and np.ptp(x) == 0
    low, high = (float(x[0]), float(x[0])) if constant else _bootstrap((x,), np.mean, seed)
    iqm_low, iqm_high = (low, high) if constant else _bootstrap((x,), _iqm, seed)
    return Summary(
        n=len(x),
        mean=float(x.mean()),
        std=float(x.std(ddof=1)) if len(x) > 1 else float("nan"),
        min=float(x.min()),
        max=float(x.max()),
        median=float(np.median(x)),
        iqm=float(stats.trim_mean(x, 0.25)),
        ci_low=low,
        ci_high=high,
        iqm_ci_low=iqm_low,
        iqm_ci_high=iqm_high,
    )


def share_at_least(values: np.ndarray, threshold: float) -> Share:
    """The seeds whose accuracy is at least `threshold`, with a 95 % Wilson interval."""
    x = np.asarray(values, dtype=float)
    k = int((x >= threshold).sum())
    if len(x) == 0:
        return Share(threshold, 0, 0, float("nan"), float("nan"))
    interval = stats.binomtest(k, len(x)).proportion_ci(CONFIDENCE, method="wilson")
    return Share(threshold, k, len(x), float(interval.low), float(interval.high))


def pooled_iqm(columns: list[np.ndarray], seed: int = 0) -> tuple[float, float, float]:
    """The IQM of every (seed, suite) score pooled, and its 95 % stratified bootstrap interval
    (seeds resampled within each suite), as rliable aggregates runs × tasks."""
    data = tuple(np.asarray(c, dtype=float) for c in columns)
    iqm = float(stats.trim_mean(np.concatenate(data), 0.25))
    if all(np.ptp(c) == 0 for c in data) or min(map(len, data)) < 2:
        return iqm, float("nan"), float("nan")
    low, high = _bootstrap(data, _pooled_iqm, seed, paired=False)
    return iqm, low, high


def probability_of_improvement(a: np.ndarray, b: np.ndarray, seed: int = 0) -> Improvement:
    """P(X_b > X_a) + ½ P(X_b = X_a) over seeds of two runs, with a bootstrap interval."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(a) or not len(b):
        return Improvement(float("nan"), float("nan"), float("nan"))
    p = float(_improvement(a, b))
    if min(len(a), len(b)) < 3 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return Improvement(p, float("nan"), float("nan"))
    # In batches: each resample compares every pair of seeds.
    low, high = _bootstrap((a, b), _improvement, seed, paired=False, batch=200)
    return Improvement(p, low, high)


def correlate(a: str, x: np.ndarray, b: str, y: np.ndarray, seed: int = 0) -> Correlation:
    """Pearson and Spearman correlation of two suites across the same seeds (paired)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y):
        raise ValueError(
            f"suites {a} and {b} have different numbers of seeds: {len(x)} != {len(y)}"
        )
    enough = len(x) >= MIN_CORRELATION_SEEDS
    with warnings.catch_warnings():
        # A constant suite (every seed at 100 %) has no correlation: the result is NaN.
        warnings.simplefilter("ignore")
        pearson = stats.pearsonr(x, y) if enough else None
        spearman = stats.spearmanr(x, y) if enough else None
    reason = None
    if not enough:
        reason = f"needs at least {MIN_CORRELATION_SEEDS} seeds, has {len(x)}"
    elif np.isnan(_value(pearson, "statistic")):
        constant = [name for name, v in ((a, x), (b, y)) if np.ptp(v) == 0]
        reason = f"{' and '.join(constant)} {'is' if len(constant) == 1 else 'are'} constant"
    return Correlation(
        a=a,
        b=b,
        n=len(x),
        pearson=_value(pearson, "statistic"),
        pearson_p=_value(pearson, "pvalue"),
        pearson_ci=_bootstrap((x, y), _pearson, seed),
        spearman=_value(spearman, "statistic"),
        spearman_p=_value(spearman, "pvalue"),
        spearman_ci=_bootstrap((x, y), _spearman, seed),
        reason=reason,
    )


def compare_groups(a: np.ndarray, b: np.ndarray, seed: int = 0) -> Difference:
    """Difference of means of two runs' per-seed accuracies, its bootstrap interval (seeds
    resampled within each run) and a Mann-Whitney U test."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if min(len(a), len(b)) < 3 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        low = high = float("nan")
    else:
        low, high = _bootstrap((a, b), _difference_of_means, seed, paired=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # identical constant groups: p is NaN
        p = stats.mannwhitneyu(b, a, alternative="two-sided").pvalue if len(a) and len(b) else None
    return Difference(
        n_a=len(a),
        n_b=len(b),
        difference=float(b.mean() - a.mean()),
        ci_low=low,
        ci_high=high,
        mann_whitney_p=float("nan") if p is None else float(p),
    )


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


def _value(result: object, name: str) -> float:
    return float("nan") if result is None else float(getattr(result, name))


def _pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return stats.pearsonr(x, y, axis=axis).statistic


def _spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return _pearson(stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis), axis=axis)


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    seed: int,
    paired: bool = True,
    batch: int | None = None,
) -> tuple[float, float]:
    if paired and (len(data[0]) < 3 or any(np.ptp(d) == 0 for d in data)):
        return float("nan"), float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate resamples give NaN statistics, dropped below
        result = stats.bootstrap(
            data,
            statistic,
            paired=paired and len(data) > 1,
            vectorized=True,
            n_resamples=N_RESAMPLES,
            confidence_level=CONFIDENCE,
            method="percentile",
            random_state=np.random.default_rng(seed),
            batch=batch,
        )
    # With few seeds some resamples repeat one seed only (a correlation is then undefined):
    # the percentile interval is taken over the resamples where the statistic exists.
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.nanpercentile(result.bootstrap_distribution, [tail, 100 - tail])
    return float(low), float(high)
