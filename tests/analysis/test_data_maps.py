"""A data map per training example is the members' histories averaged over the members that
trained on it, and its regions follow Swayamdipta et al.'s thirds."""

import numpy as np
import pandas as pd
import pytest

from genprobe.analysis.data_maps import REGIONS, data_map


def history(seeds=(3, 5, 8), examples=6, seed=0):
    rng = np.random.default_rng(seed)
    n = len(seeds) * examples
    first = rng.choice([-1, 0, 10, 20], n)
    return pd.DataFrame({
        "seed": np.repeat(seeds, examples), "index": np.tile(np.arange(examples), len(seeds)),
        "first_right": first, "forgotten": rng.integers(0, 3, n), "learned": first >= 0,
        "correctness": rng.random(n), "confidence": rng.random(n), "variability": rng.random(n),
    }).sample(frac=1, random_state=1)  # any row order  # fmt: skip


def test_each_example_is_averaged_over_the_members_that_trained_on_it():
    rows = history()
    trained = np.array([[1, 1, 0, 0, 1, 0], [1, 0, 1, 0, 1, 0], [0, 1, 1, 0, 1, 0]], dtype=bool)
    table = data_map(rows, trained)
    assert len(table) == 6 and table["members"].tolist() == trained.sum(axis=0).tolist()
    ordered = rows.sort_values(["seed", "index"])
    for i in (0, 1, 4):
        mine = ordered[ordered["index"] == i][trained[:, i]]
        row = table.loc[i]
        assert row["confidence"] == pytest.approx(mine["confidence"].mean())
        assert row["variability"] == pytest.approx(mine["variability"].mean())
        assert row["forgetting_events"] == pytest.approx(mine["forgotten"].mean())
        assert row["forgotten"] == pytest.approx((mine["forgotten"] > 0).mean())
        ever = mine["first_right"][mine["first_right"] >= 0]
        assert row["never_right"] == pytest.approx((mine["first_right"] < 0).mean())
        assert (np.isnan(row["first_right"]) and ever.empty) or row["first_right"] == ever.median()
    unseen = table.loc[[3, 5]]  # no member trained on them
    assert (unseen["members"] == 0).all() and unseen["confidence"].isna().all()
    assert unseen["region"].isna().all()


def test_the_regions_are_the_most_variable_third_then_confidence_above_or_below_the_median():
    table = data_map(history(seeds=(1,), examples=9, seed=4))
    assert set(table["region"]) <= set(REGIONS)
    variable = table["variability"].rank(pct=True) > 2 / 3
    assert (table.loc[variable, "region"] == "ambiguous").all() and variable.sum() == 3
    rest = table[~variable]
    median = rest["confidence"].median()
    assert (rest.loc[rest["confidence"] >= median, "region"] == "easy to learn").all()
    assert (rest.loc[rest["confidence"] < median, "region"] == "hard to learn").all()
