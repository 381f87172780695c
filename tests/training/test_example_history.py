"""The history of each training example over training time, against the evaluations it
gathers written out one by one (Toneva et al.'s forgetting events, Swayamdipta et al.'s data
map); and, in a trainer, against the final evaluation and across a kill."""

import itertools

import numpy as np
import pytest
from test_over_time import TRAIN, killed_at_step_5, trainer

from genprobe.training.example_history import HISTORY_COLUMNS, ExampleHistory, time_weights
from genprobe.training.over_time import score_roles


def test_each_evaluation_weighs_the_steps_it_stands_for():
    assert time_weights([0, 1, 3, 10]) == {0: 0.5, 1: 1.5, 3: 4.5, 10: 3.5}
    assert sum(time_weights([0, 2, 7, 100]).values()) == 100
    assert time_weights([5]) == {5: 1.0}


def test_the_history_is_the_evaluations_written_out():
    rng = np.random.default_rng(0)
    schedule = [0, 1, 2, 4, 8, 16]
    rights = rng.random((len(schedule), 2, 7)) < 0.5
    confidences = rng.random((len(schedule), 2, 7))
    history = ExampleHistory(2, 7, schedule)
    for step, right, confidence in zip(schedule, rights, confidences, strict=True):
        history.update(step, right, confidence)
    table = history.table([4, 9])
    assert list(table.columns) == list(HISTORY_COLUMNS) and len(table) == 14
    weights = np.array([time_weights(schedule)[s] for s in schedule])
    for row in table.itertuples():
        k = [4, 9].index(row.seed)
        seq, conf = rights[:, k, row.index], confidences[:, k, row.index]
        hits = [s for s, r in zip(schedule, seq, strict=True) if r]
        assert row.first_right == (hits[0] if hits else -1)
        assert row.forgotten == sum(a and not b for a, b in itertools.pairwise(seq))
        assert row.learned == seq[-1]
        assert row.correctness == pytest.approx(np.average(seq, weights=weights))
        mean = np.average(conf, weights=weights)
        assert row.confidence == pytest.approx(mean)
        assert row.variability == pytest.approx(np.sqrt(np.average((conf - mean) ** 2,
                                                                   weights=weights)))  # fmt: skip


def test_a_trainers_history_ends_at_its_last_evaluation_and_survives_a_kill(tmp_path):
    whole = trainer([1, 2], steps=10, eval_every=2, checkpoint=tmp_path / "a.pt")
    whole.run()
    table = whole.history.table([1, 2])
    final = score_roles(whole.model, {"train": TRAIN}, rows=16)["train"]
    assert table["learned"].tolist() == final.right.ravel().tolist()
    assert table["learned"].any() and not table["learned"].all()  # the check can fail
    assert (table["first_right"].isin([-1, 0, 2, 4, 6, 8, 10])).all()

    resumed = killed_at_step_5(tmp_path / "b.pt")
    resumed.run()
    assert resumed.history.table([1, 2]).equals(table)


def test_with_subsets_the_training_curve_is_each_members_own_subset():
    t = trainer([1, 2], steps=10, eval_every=5, subsets=True, subset_fraction=0.5)
    t.run()
    curve = t.curve()
    assert set(curve["role"]) == {"train", "train_unseen", "held_out"}
    final = score_roles(t.model, {"train": TRAIN}, rows=16)["train"]
    for k, seed in enumerate((1, 2)):
        last = curve[(curve.seed == seed) & (curve.step == 10)].set_index("role")["accuracy"]
        mine = t.trained[k]
        assert mine.sum() == len(TRAIN) // 2
        assert last["train"] == pytest.approx(final.right[k, mine].mean())
        assert last["train_unseen"] == pytest.approx(final.right[k, ~mine].mean())
