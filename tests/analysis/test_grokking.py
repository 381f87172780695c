import math

import numpy as np
import pandas as pd
import pytest
from helpers import curves_frame, grokking_curves
from scipy import stats

from genprobe.analysis.grokking import (
    CENSORED,
    GROKKED,
    compare_grokking,
    grokking,
    iqm_curves,
    kaplan_meier,
    members,
)
from genprobe.analysis.stats import censored_median, censored_median_difference
from genprobe.errors import ConfigError, RunDirError

STEPS = [0, 10, 20, 30, 40]


def _members(grokked_steps: list[int | None], budget: int = 40) -> pd.DataFrame:
    """A members table of seeds that grokked at the given steps (None: did not)."""
    step = pd.Series(grokked_steps, dtype="Int64")
    return pd.DataFrame(
        {
            "seed": range(len(grokked_steps)),
            "memorized_step": pd.Series([0] * len(step), dtype="Int64"),
            "grokked_step": step,
            "delay": step,
            "grokked": step.notna().to_numpy(dtype=bool),
        }
    )


def test_grokking_is_the_first_step_held_out_accuracy_passes_and_stays():
    curves = curves_frame(
        STEPS,
        train={1: [0, 0.5, 1, 1, 1], 2: [0, 0.2, 0.995, 1, 1], 3: [0, 0, 0.5, 0.6, 0.7]},
        held_out={1: [0, 0.995, 0.5, 1, 0.99], 2: [0, 0, 0, 1, 0.98], 3: [0, 0, 0, 0, 0]},
    )
    table = members(curves, budget=40, held_out_role="held_out")
    assert table["seed"].tolist() == [1, 2, 3]
    # seed 1 passes at 10, drops at 20, passes again at 30 and stays (0.99 counts)
    assert table["memorized_step"].tolist() == [20, 20, pd.NA]
    assert table["grokked_step"].tolist() == [30, pd.NA, pd.NA]
    assert table["delay"].tolist() == [10, pd.NA, pd.NA]
    assert table["grokked"].tolist() == [True, False, False]
    assert table["outcome"].tolist() == [GROKKED, CENSORED, CENSORED]
    # a lower threshold: seed 2 now stays above it from step 30, seed 1 from step 10
    lower = members(curves, budget=40, held_out_role="held_out", threshold=0.5)
    assert lower["grokked_step"].tolist() == [10, 30, pd.NA]
    assert lower["memorized_step"].tolist() == [10, 20, 20]


def test_the_kaplan_meier_median_is_the_first_step_half_the_seeds_grokked_by():
    # 6 seeds, 3 grok (at 20, 30, 40), 3 do not: by hand the CDF is 1/6, 2/6, 3/6
    km = kaplan_meier(_members([30, None, 20, None, 40, None]), budget=40)
    np.testing.assert_allclose(km.steps, [20, 30, 40])
    np.testing.assert_allclose(km.cdf, [1 / 6, 2 / 6, 3 / 6])
    assert km.median == 40 and km.median_reason is None
    assert (km.share.k, km.share.n) == (3, 6)
    # one more censored seed: fewer than half grokked, no median, and the reason says so
    seven = kaplan_meier(_members([30, None, 20, None, 40, None, None]), budget=40)
    assert math.isnan(seven.median)
    assert seven.median_reason.startswith("only 3 of 7 seeds grokked within the budget of 40")


def test_all_censored_has_no_median_and_a_zero_cdf():
    km = kaplan_meier(_members([None, None, None, None]), budget=40)
    assert math.isnan(km.median) and "only 0 of 4" in km.median_reason
    assert km.cdf.max() == 0
    assert (km.share.k, km.share.n, km.share.ci_low) == (0, 4, 0)


def test_with_nothing_censored_the_kaplan_meier_cdf_is_the_plain_ecdf():
    steps = [30, 10, 20, 20, 40]
    km = kaplan_meier(_members(steps), budget=40)
    plain = stats.ecdf(steps).cdf
    np.testing.assert_allclose(km.steps, plain.quantiles)
    np.testing.assert_allclose(km.cdf, plain.probabilities)
    assert km.median == 20  # 3 of 5 seeds by step 20
    assert np.all(km.ci_low[:-1] <= km.cdf[:-1]) and np.all(km.cdf[:-1] <= km.ci_high[:-1])


def test_the_share_that_grokked_has_its_wilson_interval():
    share = kaplan_meier(_members([10, 20, 30, None, None]), budget=40).share
    p, n, z = 3 / 5, 5, stats.norm.ppf(0.975)
    center = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    assert share.share == p
    assert share.ci_low == pytest.approx(center - half)
    assert share.ci_high == pytest.approx(center + half)


@pytest.mark.parametrize("seed", range(5))
def test_the_censored_median_is_scipys_kaplan_meier_median(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 15))
    grokked = rng.uniform(size=n) < 0.7
    steps = np.where(grokked, rng.integers(1, 100, n), np.inf)
    table = _members([int(s) if np.isfinite(s) else None for s in steps], budget=100)
    median = kaplan_meier(table, budget=100).median
    expected = censored_median(steps)
    assert (math.isnan(median) and np.isinf(expected)) or median == expected


def test_a_run_that_groks_later_has_a_positive_difference_in_median_step():
    early = _members([100, 120, 140, 160, 180, 200, None, 110])
    late = _members([400, 450, 500, 550, 600, None, None, None])
    comparison = compare_grokking(early, late)
    median = comparison.median
    assert (median.median_a, median.median_b) == (140, 550)  # the 4th of 8: half the seeds by then
    assert median.difference == 410
    assert median.ci_low <= median.difference <= median.ci_high
    assert median.ci_low > 0  # the later run is later in every resample's bulk
    assert comparison.share.difference == pytest.approx(5 / 8 - 7 / 8)
    assert compare_grokking(late, early).median.difference == -410


def test_a_median_beyond_the_budget_makes_the_difference_undefined_with_a_reason():
    never = _members([None, None, 300, None])
    result = compare_grokking(_members([10, 20, 30, 40]), never).median
    assert math.isnan(result.difference) and math.isnan(result.median_b)
    assert result.reason == (
        "more than half the seeds are censored in b (3 of 4 censored): no median"
    )


def test_a_resampled_median_beyond_the_budget_is_an_unbounded_interval():
    result = censored_median_difference(
        np.array([10.0, 20, 30, 40, 50]), np.array([10.0, 20, 30, np.inf, np.inf])
    )
    assert result.difference == 0 and result.ci_high == np.inf


def test_the_iqm_band_holds_the_iqm_and_says_why_it_is_missing_where_seeds_agree():
    curves = grokking_curves(seeds=9, budget=1000)
    bands = iqm_curves(curves, budget=1000, roles=["train", "held_out"])
    assert set(bands["role"]) == {"train", "held_out"}
    defined = bands.dropna(subset=["ci_low"])
    assert len(defined) > len(bands) / 2
    assert (defined["ci_low"] <= defined["iqm"] + 1e-12).all()
    assert (defined["iqm"] <= defined["ci_high"] + 1e-12).all()
    start = bands[bands["step"] == 0].iloc[0]  # every seed at the same accuracy at init
    assert math.isnan(start["ci_low"]) and start["ci_reason"].startswith("all 9 seeds are equal")
    held_out = curves[curves["role"] == "held_out"]
    at_end = held_out[held_out["step"] == 1000]["accuracy"]
    end = bands[(bands["role"] == "held_out") & (bands["step"] == 1000)].iloc[0]
    assert end["iqm"] == pytest.approx(stats.trim_mean(at_end, 0.25))


def test_grokking_summarizes_the_synthetic_run():
    result = grokking(grokking_curves(), budget=10_000, held_out_role="held_out")
    table = result.members
    # seed 0 passes 99 % and drops: not grokked; seeds 3, 6, 9 never pass
    assert table.loc[~table["grokked"], "seed"].tolist() == [0, 3, 6, 9]
    grokked = table[table["grokked"]]
    assert (grokked["delay"] == grokked["grokked_step"] - grokked["memorized_step"]).all()
    assert result.median_delay == np.median(grokked["delay"].to_numpy(dtype=float))
    assert result.kaplan_meier.share.k == 8


@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        ({"threshold": 1.5}, ConfigError, "grokking_threshold must be an accuracy in (0, 1]"),
        ({"held_out_role": "test"}, ConfigError, "held_out_role must be one of the curves"),
        ({"budget": 50}, RunDirError, "before the budget of 50 steps: the run is not finished"),
        ({"budget": 30}, RunDirError, "step 40, after the budget of 30"),
    ],
)
def test_bad_input_is_named(change, error, words):
    curves = curves_frame(STEPS, {1: [0, 0, 1, 1, 1]}, {1: [0, 0, 0, 1, 1]})
    arguments = {"budget": 40, "held_out_role": "held_out", "threshold": 0.99, **change}
    with pytest.raises(error, match=None) as caught:
        members(curves, **arguments)
    assert words in str(caught.value)


def test_a_seed_missing_an_evaluation_is_named():
    curves = curves_frame(STEPS, {1: [0] * 5, 2: [0] * 5}, {1: [0] * 5, 2: [0] * 5})
    curves = curves.drop(curves[(curves["seed"] == 2) & (curves["step"] == 20)].index)
    with pytest.raises(RunDirError, match=r"seeds \[2\] lack an evaluation of 'train'"):
        members(curves, budget=40, held_out_role="held_out")
