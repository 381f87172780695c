import itertools
import math

import numpy as np
import pytest
from scipy import stats

from genprobe.analysis.stats import (
    FLAT,
    compare_groups,
    correlate,
    pooled_iqm,
    probability_of_improvement,
    summarize,
)


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


@pytest.mark.parametrize("values", [[0.4], [0.4, 0.4], [0.2, 0.6]])
def test_fewer_than_three_seeds_have_no_interval(values):
    s = summarize(np.array(values))
    assert np.isnan([s.ci_low, s.ci_high, s.iqm_ci_low, s.iqm_ci_high]).all()
    assert s.ci_reason == s.iqm_ci_reason == f"needs at least 3 seeds, has {len(values)}"


def test_the_pooled_iqm_needs_three_seeds_per_suite_as_each_suite_does():
    two = pooled_iqm([np.array([0.1, 0.5]), np.array([0.2, 0.9])])
    assert two.iqm == pytest.approx(stats.trim_mean([0.1, 0.5, 0.2, 0.9], 0.25))
    assert np.isnan([two.ci_low, two.ci_high]).all()
    assert two.ci_reason == "needs at least 3 seeds in each group, has 2"
    three = pooled_iqm([np.array([0.1, 0.5, 0.3]), np.array([0.2, 0.9, 0.4])])
    assert three.ci_low < three.iqm < three.ci_high and three.ci_reason is None


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_equal_seeds_have_no_zero_width_interval_and_say_why(value):
    s = summarize(np.full(6, value))
    assert (s.mean, s.std, s.iqm) == (value, 0.0, value)
    assert np.isnan([s.ci_low, s.ci_high, s.iqm_ci_low, s.iqm_ci_high]).all()
    assert s.ci_reason == s.iqm_ci_reason == f"all 6 seeds are equal, so {FLAT}"
    pooled = pooled_iqm([np.full(6, value), np.full(4, value)])
    assert np.isnan(pooled.ci_low) and pooled.ci_reason.startswith("every suite's seeds are equal")


def test_constant_suite_has_no_correlation():
    c = correlate("a", np.ones(7), "b", np.arange(7.0))
    assert np.isnan(c.pearson) and np.isnan(c.spearman_ci[0]) and c.reason == "a is constant"


def test_runs_whose_seeds_do_not_overlap_have_an_exact_p_and_no_certain_interval():
    a, b = np.array([0.1, 0.12, 0.15, 0.2, 0.22, 0.3]), np.array([0.5, 0.55, 0.6, 0.61, 0.7, 0.8])
    p = probability_of_improvement(a, b)
    assert p.probability == 1.0 and np.isnan([p.ci_low, p.ci_high]).all()
    assert p.ci_reason == f"the seeds do not overlap, so {FLAT}"
    d = compare_groups(a, b)
    # Exact: only this split of the 12 seeds into two groups of 6 and its mirror are as extreme.
    assert d.mann_whitney_p == pytest.approx(2 / math.comb(12, 6))
    assert d.mann_whitney_p == pytest.approx(stats.mannwhitneyu(b, a, method="exact").pvalue)
    assert d.ci_low > 0 and d.ci_reason is None  # the difference of means still varies
    ten, others = np.linspace(0.0, 0.1, 10), np.linspace(0.2, 0.3, 10)
    assert compare_groups(ten, others).mann_whitney_p == pytest.approx(2 / math.comb(20, 10))
    tied = np.r_[others[:5], others[:5]]  # with ties, still only the split and its mirror
    assert compare_groups(ten, tied).mann_whitney_p == pytest.approx(2 / math.comb(20, 10))
    overlapping = probability_of_improvement(a, np.array([0.25, 0.55, 0.6, 0.61, 0.7, 0.8]))
    assert overlapping.ci_low < overlapping.probability <= overlapping.ci_high == 1.0


def test_the_rank_test_with_ties_is_exact_over_every_split_of_few_seeds():
    a, b = np.array([0.0, 0.0, 0.5, 0.5]), np.array([0.0, 0.5, 1.0, 1.0, 1.0])
    u = stats.mannwhitneyu(b, a).statistic
    splits = [
        stats.mannwhitneyu(np.delete(pooled, list(i)), pooled[list(i)]).statistic
        for pooled in [np.concatenate([a, b])]
        for i in itertools.combinations(range(9), 4)
    ]
    exact = min(1.0, 2 * min(np.mean(np.array(splits) >= u), np.mean(np.array(splits) <= u)))
    assert compare_groups(a, b).mann_whitney_p == pytest.approx(exact)
    assert compare_groups(a, b).mann_whitney_p != pytest.approx(stats.mannwhitneyu(b, a).pvalue)


def test_the_rank_test_with_ties_is_exact_at_ten_seeds_against_ten():
    rng = np.random.default_rng(3)
    a, b = rng.choice([0.0, 0.5, 1.0], 10), rng.choice([0.0, 0.5, 0.9, 1.0], 10)
    ranks = stats.rankdata(np.concatenate([b, a]))
    sums = ranks[np.array(list(itertools.combinations(range(20), 10)))].sum(axis=1)
    observed = ranks[:10].sum()  # every split listed: 184,756 rank sums of the first group
    exact = min(1.0, 2 * min(np.mean(sums >= observed - 1e-9), np.mean(sums <= observed + 1e-9)))
    assert compare_groups(a, b).mann_whitney_p == pytest.approx(exact)


def test_a_perfect_rank_correlation_of_six_seeds_has_its_exact_p_and_no_certain_interval():
    x = np.array([0.1, 0.3, 0.2, 0.6, 0.5, 0.9])
    c = correlate("repeat", x, "long", 1 - x**2)
    assert c.spearman == pytest.approx(-1) and stats.spearmanr(x, 1 - x**2).pvalue == 0.0
    # Of the 720 orders of the seeds only this one and its reverse reach |rho| = 1.
    assert c.spearman_p == pytest.approx(2 / 720)
    assert np.isnan(c.spearman_ci).all()
    assert c.spearman_ci_reason == f"the seeds rank in reverse order on repeat and long, so {FLAT}"
    assert c.pearson_ci[0] < c.pearson < c.pearson_ci[1] and c.pearson_ci_reason is None


def test_correlation_p_values_enumerate_every_order_of_few_seeds():
    rng = np.random.default_rng(7)
    x, y = rng.random(6), rng.random(6)
    c = correlate("a", x, "b", y)
    orders = [np.array(order) for order in itertools.permutations(x)]
    for statistic, p in ((stats.pearsonr, c.pearson_p), (stats.spearmanr, c.spearman_p)):
        observed = statistic(x, y).statistic
        null = np.array([statistic(order, y).statistic for order in orders])
        tail = min(np.mean(null >= observed - 1e-12), np.mean(null <= observed + 1e-12))
        assert p == pytest.approx(min(1.0, 2 * tail))  # two-sided as SciPy's tests are


@pytest.mark.parametrize(
    "call",
    [
        lambda x: summarize(x),
        lambda x: pooled_iqm([x, np.ones(3)]),
        lambda x: compare_groups(np.ones(3), x),
        lambda x: probability_of_improvement(x, np.ones(3)),
        lambda x: correlate("a", x, "b", np.arange(4.0)),
    ],
)
def test_a_missing_seed_is_refused_not_averaged_into_nan(call):
    with pytest.raises(ValueError, match="leave a missing seed out"):
        call(np.array([0.1, np.nan, 0.3, 0.4]))


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
    # Too many orders of 50 seeds to enumerate: 10,000 random ones, none as extreme.
    assert c.pearson_p == c.spearman_p == pytest.approx(2 / 10_001)


def test_a_tied_correlation_of_ten_seeds_is_not_certain():
    # Two seeds stalled on every suite (parity, LSTM): ρ = 1, but 1 in 45 orders of the seeds
    # lines the two up as well; SciPy's large-sample p says 0.
    x = np.array([1, 1, 1, 0.475, 1, 1, 0.475, 1, 1, 1])
    y = np.where(x == 1, 1, 0.455)
    c = correlate("test", x, "length_41", y)
    assert c.spearman == pytest.approx(1) and stats.spearmanr(x, y).pvalue == 0.0
    assert c.spearman_p == pytest.approx(2 / 45, abs=0.01)  # random orders: Monte Carlo error
    assert c.pearson_p == pytest.approx(2 / 45, abs=0.01)
    assert np.isnan(c.spearman_ci).all() and np.isnan(c.pearson_ci).all()


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
