"""Unseen local structures: the count per member and input is the brute-force count of sets,
and the AUC is the share of (failure, success) pairs that the count orders right, ties half."""

import numpy as np
import pytest

from genprobe.analysis.structures import failure_by_unseen, unseen_counts


def test_the_unseen_count_is_what_no_training_input_of_the_member_held():
    rng = np.random.default_rng(0)
    names = [f"s{i}" for i in range(12)]
    train = [tuple(rng.choice(names, rng.integers(0, 4))) for _ in range(30)]
    queries = [tuple(rng.choice(names, rng.integers(0, 5))) for _ in range(20)]
    queries.append(("never seen", "s1"))
    trained = rng.random((4, 30)) < 0.3
    got = unseen_counts(train, trained, queries)
    assert got.shape == (4, 21)
    for s in range(4):
        seen = {name for i in np.flatnonzero(trained[s]) for name in train[i]}
        assert got[s].tolist() == [len(set(q) - seen) for q in queries]
    nothing = np.zeros((1, 30), dtype=bool)
    assert unseen_counts(train, nothing, queries)[0].tolist() == [len(set(q)) for q in queries]


def brute_auc(failed, score):
    pairs = [(a, b) for a in score[failed] for b in score[~failed]]
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in pairs) / len(pairs)


def test_failure_with_and_without_and_the_auc_per_member():
    unseen = np.array([[0, 0, 1, 2, 0, 3], [1, 0, 0, 0, 2, 0]])
    right = np.array(
        [[True, False, False, False, True, True], [True, True, True, True, True, True]]
    )
    table = failure_by_unseen(unseen, right)
    first = table.iloc[0]
    assert (first["examples"], first["with_unseen"]) == (6, 3)
    assert first["failure_with"] == pytest.approx(2 / 3)  # counts 1, 2, 3: wrong, wrong, right
    assert first["failure_without"] == pytest.approx(1 / 3)
    assert first["auc"] == pytest.approx(brute_auc(~right[0], unseen[0]))
    assert np.isnan(table.iloc[1]["auc"])  # it failed none: no AUC
    asked = np.array([[True, True, True, True, False, False], [False] * 5 + [True]])
    masked = failure_by_unseen(unseen, right, asked)
    assert masked["examples"].tolist() == [4, 1]
    assert masked.iloc[0]["auc"] == pytest.approx(brute_auc(~right[0, :4], unseen[0, :4]))
    assert np.isnan(masked.iloc[1]["failure_with"])  # its one input holds no unseen structure
