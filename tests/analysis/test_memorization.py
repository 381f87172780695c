"""Memorization, consistency and influence from subset members, checked example by example
against a loop over the members with SciPy's Wilson interval and Newcombe's formula written
out; undetermined where a group is too small; at the edges (one member, all right, all
trained)."""

import numpy as np
import pytest
from scipy import stats

from genprobe.analysis.memorization import consistency, influence, memorization


def wilson(k: int, n: int) -> tuple[float, float]:
    interval = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    return interval.low, interval.high


def newcombe(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float, float]:
    """Newcombe (1998), method 10: the difference of two rates and its hybrid score interval."""
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = wilson(k1, n1), wilson(k2, n2)
    d = p1 - p2
    return d, d - np.hypot(p1 - l1, u2 - p2), d + np.hypot(u1 - p1, p2 - l2)


@pytest.fixture
def members():
    rng = np.random.default_rng(0)
    trained = rng.random((40, 12)) < 0.7
    # example 0 right only when trained on (memorized), 1 always right, the rest at random
    right = rng.random((40, 12)) < 0.5
    right[:, 0], right[:, 1] = trained[:, 0], True
    return right, trained


def test_memorization_is_the_difference_of_the_two_groups_rates_example_by_example(members):
    right, trained = members
    table = memorization(right, trained)
    for i, row in table.iterrows():
        inside, outside = trained[:, i], ~trained[:, i]
        k1, n1 = int(right[inside, i].sum()), int(inside.sum())
        k2, n2 = int(right[outside, i].sum()), int(outside.sum())
        assert (row.trained_right, row.trained_members) == (k1, n1)
        assert (row.untrained_right, row.untrained_members) == (k2, n2)
        assert (row.trained_low, row.trained_high) == pytest.approx(wilson(k1, n1))
        assert (row.untrained_low, row.untrained_high) == pytest.approx(wilson(k2, n2))
        expected = newcombe(k1, n1, k2, n2)
        got = (row.memorization, row.memorization_low, row.memorization_high)
        assert got == pytest.approx(expected)
    assert table.loc[0, "memorization"] == 1 and table.loc[0, "memorization_low"] > 0.5
    assert table.loc[1, "memorization"] == 0
    assert table.loc[1, "memorization_low"] < 0 < table.loc[1, "memorization_high"]
    assert table["determined"].all()


def test_a_group_smaller_than_the_minimum_is_undetermined_never_a_score_of_one_member():
    trained = np.ones((6, 3), dtype=bool)
    trained[0, 1] = False  # example 1: one member did not train on it
    trained[:, 2] = [False] * 5 + [True]  # example 2: one member did
    right = np.ones((6, 3), dtype=bool)
    table = memorization(right, trained, min_members=2)
    assert table["determined"].tolist() == [False, False, False]  # 0: none did not train on it
    assert table[["memorization", "memorization_low"]].isna().all().all()
    assert table["trained_rate"].tolist()[:2] == [1.0, 1.0] and np.isnan(table["trained_rate"][2])
    one = memorization(right[:1], trained[:1], min_members=1)
    assert not one["determined"].any()  # one member is in one group only


def test_consistency_counts_the_members_that_did_not_train_on_an_example(members):
    right, trained = members
    table = consistency(right, trained)
    for i, row in table.iterrows():
        outside = ~trained[:, i]
        assert row.members == outside.sum() and row.right == right[outside, i].sum()
        assert row.consistency == pytest.approx(right[outside, i].mean())
    suite = consistency(right)  # a suite's examples: no member trained on them
    assert (suite["members"] == 40).all()
    assert suite["consistency"].to_numpy() == pytest.approx(right.mean(axis=0))
    assert suite["consistency_low"].to_numpy() == pytest.approx(
        [wilson(int(k), 40)[0] for k in right.sum(axis=0)]
    )


def test_influence_of_a_training_example_on_a_test_example(members):
    _, trained = members
    test = np.stack([trained[:, 3], np.ones(40, dtype=bool)], axis=1)  # right when 3 is seen
    table = influence(test, trained, (np.array([3, 3, 4]), np.array([0, 1, 0])))
    for row in table.itertuples():
        inside = trained[:, row.train]
        k1, n1 = int(test[inside, row.test].sum()), int(inside.sum())
        k2, n2 = int(test[~inside, row.test].sum()), int((~inside).sum())
        got = (row.influence, row.influence_low, row.influence_high)
        assert got == pytest.approx(newcombe(k1, n1, k2, n2))
    assert table["influence"].tolist()[:2] == [1.0, 0.0]


def test_shapes_that_do_not_match_are_refused():
    with pytest.raises(ValueError, match="differ"):
        memorization(np.ones((3, 4), bool), np.ones((3, 5), bool))
    with pytest.raises(ValueError, match="3 members are right or wrong, 4 trained"):
        influence(np.ones((3, 4), bool), np.ones((4, 5), bool), ([0], [0]))
