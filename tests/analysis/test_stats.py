import numpy as np
import pytest
from scipy import stats

from genprobe.analysis.stats import correlate, summarize


def test_summary_matches_numpy_and_covers_the_mean():
    x = np.random.default_rng(0).random(50)
    s = summarize(x)
    assert s.n == 50 and s.mean == pytest.approx(x.mean()) and s.std == pytest.approx(x.std(ddof=1))
    assert (s.min, s.max, s.median) == (x.min(), x.max(), pytest.approx(np.median(x)))
    middle = np.sort(x)[12:38]
    assert s.iqm == pytest.approx(middle.mean())
    assert s.ci_low < s.mean < s.ci_high
    assert s.ci_high - s.ci_low == pytest.approx(2 * 1.96 * x.std() / np.sqrt(50), rel=0.15)
    assert summarize(x) == s  # fixed random state: reproducible


def test_constant_suite_has_a_point_interval_and_no_correlation():
    s = summarize(np.ones(7))
    assert (s.ci_low, s.ci_high, s.std) == (1.0, 1.0, 0.0)
    c = correlate("a", np.ones(7), "b", np.arange(7.0))
    assert np.isnan(c.pearson) and np.isnan(c.spearman_ci[0])


def test_correlations_and_intervals():
    rng = np.random.default_rng(1)
    x = rng.random(50)
    y = -x + 0.3 * rng.random(50)
    c = correlate("repeat", x, "long", y)
    assert c.n == 50
    assert c.pearson == pytest.approx(stats.pearsonr(x, y).statistic)
    assert c.spearman == pytest.approx(stats.spearmanr(x, y).statistic)
    assert c.pearson_ci[0] < c.pearson < c.pearson_ci[1] < 0
    assert c.spearman_ci[0] < c.spearman < c.spearman_ci[1] < 0


def test_few_seeds_still_give_finite_intervals():
    x = np.array([0.0, 0.1, 0.0, 3.7, 1.1, 0.0])
    y = np.array([0.0, 2.3, 0.0, 10.4, 9.5, 0.0])
    c = correlate("standard", x, "repeat", y)
    assert np.isfinite(c.pearson_ci).all() and c.pearson_ci[0] <= c.pearson <= c.pearson_ci[1]


def test_a_nan_correlation_says_why():
    two = correlate("repeat", np.array([0.1, 0.9]), "long", np.array([0.2, 0.4]))
    assert np.isnan(two.pearson) and np.isnan(two.pearson_ci).all()
    assert two.reason == "needs at least 3 seeds, has 2"
    flat = correlate("repeat", np.ones(4), "long", np.arange(4.0))
    assert np.isnan(flat.pearson) and flat.reason == "repeat is constant"
    both = correlate("repeat", np.ones(4), "long", np.zeros(4))
    assert both.reason == "repeat and long are constant"
    assert correlate("repeat", np.arange(4.0), "long", np.arange(4.0) ** 2).reason is None
