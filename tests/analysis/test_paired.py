"""Paired comparisons of two runs on the same items, each against an independent
implementation: the multi-bootstrap against Sellam et al.'s algorithm written out as a loop
(Monte-Carlo error bounds), McNemar's against statsmodels', Holm's written out, the expected
best of k against every k-subset, TOST against SciPy's one-sided t-tests; and the edges."""

import itertools

import numpy as np
import pytest
from scipy import stats

from genprobe.analysis.paired import (
    adjusted,
    equivalence,
    expected_best,
    mcnemar,
    multi_bootstrap,
    performance_profile,
)


def runs(seed=0, members=6, items=80, gap=0.1):
    rng = np.random.default_rng(seed)
    ease = rng.random(items)  # items differ: the pairing matters
    skill_a, skill_b = rng.normal(0, 0.05, members), rng.normal(-gap, 0.05, members)
    a = rng.random((members, items)) < np.clip(ease + skill_a[:, None], 0, 1)
    b = rng.random((members, items)) < np.clip(ease + skill_b[:, None], 0, 1)
    return a, b


def sellam(a, b, paired, clusters=None, nboot=4000, seed=1):
    """The multi-bootstrap as Sellam et al.'s reference code loops it (seeds, then items)."""
    rng = np.random.default_rng(seed)
    deltas = []
    names = None if clusters is None else np.unique(clusters)
    for _ in range(nboot):
        sa = rng.integers(0, len(a), len(a))
        sb = sa if paired else rng.integers(0, len(b), len(b))
        if clusters is None:
            jj = rng.integers(0, a.shape[1], a.shape[1])
        else:
            drawn = rng.choice(names, len(names))
            jj = np.concatenate([np.flatnonzero(clusters == c) for c in drawn])
        deltas.append(
            np.mean([a[s, jj].mean() for s in sa]) - np.mean([b[s, jj].mean() for s in sb])
        )
    return np.array(deltas)


@pytest.mark.parametrize("paired", [True, False])
def test_the_multi_bootstrap_is_sellams_within_monte_carlo_error(paired):
    a, b = runs()
    seeds_a = np.arange(6)
    seeds_b = seeds_a if paired else seeds_a + 100
    ours = multi_bootstrap(a, b, seeds_a, seeds_b, resamples=4000)
    assert ours.paired_seeds == paired
    reference = sellam(a, b, paired)
    assert ours.difference == pytest.approx(a.mean() - b.mean())
    low, high = np.quantile(reference, [0.025, 0.975])
    width = high - low
    assert abs(ours.low - low) < 0.08 * width and abs(ours.high - high) < 0.08 * width
    assert ours.p_better == pytest.approx((reference > 0).mean(), abs=0.03)


def test_paired_seeds_are_matched_by_seed_whatever_the_row_order():
    a, b = runs(seed=3)
    order = np.array([3, 0, 5, 1, 4, 2])
    shuffled = multi_bootstrap(a, b[order], np.arange(6), order, seed=7)
    assert shuffled == multi_bootstrap(a, b, np.arange(6), np.arange(6), seed=7)


def test_clusters_are_drawn_whole_and_widen_the_interval_of_correlated_items():
    rng = np.random.default_rng(5)
    template = np.repeat(np.arange(8), 10)  # 8 templates of 10 items each
    shift = rng.normal(0, 0.4, 8)[template]  # items of a template go together
    a = rng.random((5, 80)) < np.clip(0.5 + shift, 0, 1)
    b = rng.random((5, 80)) < np.clip(0.5 - shift, 0, 1)
    plain = multi_bootstrap(a, b, np.arange(5), np.arange(5))
    clustered = multi_bootstrap(a, b, np.arange(5), np.arange(5), clusters=template)
    assert clustered.high - clustered.low > 1.5 * (plain.high - plain.low)
    reference = sellam(a, b, True, clusters=template, nboot=3000)
    low, high = np.quantile(reference, [0.025, 0.975])
    assert abs(clustered.low - low) < 0.1 * (high - low)
    assert abs(clustered.high - high) < 0.1 * (high - low)


def test_at_the_edges_an_interval_is_missing_with_its_reason():
    a, b = runs()
    one = multi_bootstrap(a[:1], b, [0], np.arange(6))
    assert np.isnan(one.low) and "at least 2 members" in one.reason
    same = multi_bootstrap(a, a, np.arange(6), np.arange(6))
    assert same.difference == 0 and np.isnan(same.low) and "same difference" in same.reason
    right = np.ones((4, 10), dtype=bool)
    assert "same difference" in multi_bootstrap(right, right, range(4), range(4, 8)).reason
    with pytest.raises(ValueError, match="not the same items"):
        multi_bootstrap(a, b[:, :5], np.arange(6), np.arange(6))


def test_mcnemar_per_matched_pair_is_statsmodels_exact_test():
    from statsmodels.stats.contingency_tables import mcnemar as reference

    a, b = runs(seed=2, gap=0.2)
    table = mcnemar(a, b, np.arange(6), np.arange(6)[::-1])  # shared seeds, any order
    assert table["seed_a"].tolist() == table["seed_b"].tolist() == list(range(6))
    for row in table.itertuples():
        x, y = a[row.seed_a], b[5 - row.seed_b]
        both, neither = int((x & y).sum()), int((~x & ~y).sum())
        counts = [[both, int((x & ~y).sum())], [int((~x & y).sum()), neither]]
        assert row.p_value == pytest.approx(reference(counts, exact=True).pvalue)
        assert (row.only_a, row.only_b) == (counts[0][1], counts[1][0])
    assert set(table["favours"]) <= {"A", "B", "neither"}
    apart = mcnemar(a, b, np.arange(6), np.arange(10, 16))  # no seed shared: k-th with k-th
    assert apart["seed_b"].tolist() == list(range(10, 16))
    assert mcnemar(a[:, :0], b[:, :0], range(6), range(6))["p_value"].eq(1).all()


def test_holm_and_benjamini_hochberg_are_the_procedures_written_out():
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.2])
    table = adjusted(p)
    known = p[~np.isnan(p)]
    order = np.argsort(known)
    holm = np.maximum.accumulate(np.minimum(1, (len(known) - np.arange(len(known))) * known[order]))
    expected = np.empty_like(known)
    expected[order] = holm
    assert table["holm"].dropna().to_numpy() == pytest.approx(expected)
    bh = np.minimum.accumulate((known[order] * len(known) / np.arange(1, len(known) + 1))[::-1])[
        ::-1
    ]
    expected[order] = np.minimum(bh, 1)
    assert table["benjamini_hochberg"].dropna().to_numpy() == pytest.approx(expected)
    assert np.isnan(table["holm"][2])


def test_the_expected_best_of_k_is_the_mean_best_over_every_k_subset():
    values = np.array([0.2, 0.9, 0.5, 0.5, 0.1, 0.7])
    for k in range(1, 7):
        best = np.mean([max(c) for c in itertools.combinations(values, k)])
        assert expected_best(values, k) == pytest.approx(best)
    assert expected_best(values, 1) == pytest.approx(values.mean())
    with pytest.raises(ValueError, match=r"k must be in 1\.\.6"):
        expected_best(values, 7)


def test_the_performance_profile_counts_members_and_suites_above_each_threshold():
    scores = np.array([[0.1, 0.9], [0.5, 0.95], [0.8, 1.0]])
    table = performance_profile(scores, np.array([0.0, 0.5, 0.9, 1.0]))
    assert table["share"].tolist() == pytest.approx([1.0, 5 / 6, 3 / 6, 1 / 6])
    assert (table["low"] <= table["share"]).all() and (table["share"] <= table["high"]).all()
    assert table["low"][0] == table["high"][0] == 1.0  # every member is above 0 in any draw


def test_tost_is_the_larger_of_scipys_two_one_sided_tests():
    rng = np.random.default_rng(4)
    a, b = rng.normal(0.90, 0.01, 12), rng.normal(0.901, 0.01, 12)
    result = equivalence(a, b, margin=0.02)
    lower = stats.ttest_ind(a + 0.02, b, equal_var=False, alternative="greater").pvalue
    upper = stats.ttest_ind(a - 0.02, b, equal_var=False, alternative="less").pvalue
    assert result.p_value == pytest.approx(max(lower, upper))
    assert result.equivalent
    assert not equivalence(a, b, margin=0.001).equivalent
    flat = equivalence(np.ones(3), np.ones(3), margin=0.01)
    assert np.isnan(flat.p_value) and flat.equivalent and "no spread" in flat.reason
    assert "at least 2" in equivalence(np.ones(1), np.ones(3), 0.01).reason
