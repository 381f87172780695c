"""Few-shot draws: deterministic in (seed, draw), from the training split, never the test
input."""

import numpy as np
import pytest

from genprobe.errors import ConfigError
from genprobe.prompts import draw_shots
from genprobe.prompts.shots import POOL, shot_pool
from genprobe.tasks import load_task
from genprobe.tasks.probing import padded
from genprobe.tasks.row_edits import trim


@pytest.fixture(scope="module")
def task():
    return load_task("addition", {"format": "plain", "train_digits": 3})


def rows(ids):
    return [tuple(row[row > 0]) for row in ids]


def test_a_draw_is_the_same_for_the_same_seed_and_draw_number(task):
    test = task.generate("test", 5, seed=0).src
    first, again = draw_shots(task, 4, 2, 0, test), draw_shots(task, 4, 2, 0, test)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.src, b.src)
        np.testing.assert_array_equal(a.tgt, b.tgt)
    other_draw = draw_shots(task, 4, 3, 0, test)[0]
    other_seed = draw_shots(task, 4, 2, 1, test)[0]
    assert rows(other_draw.src) != rows(first[0].src) != rows(other_seed.src)


def test_shots_are_distinct_right_training_examples(task):
    test = task.generate("test", 1, seed=0).src
    pool = task.generate("train", POOL, seed=0)
    for draw in range(5):
        (shots,) = draw_shots(task, 8, draw, 0, test)
        assert len(shots) == 8 and len(set(rows(shots.src))) == 8
        assert set(rows(shots.src)) <= set(rows(pool.src))
        assert task.verify(shots.src, shots.tgt, (shots.tgt >= 0).sum(axis=1)).all()


def test_the_test_input_is_never_its_own_shot_and_the_order_is_kept(task):
    other = task.generate("test", 1, seed=0).src
    (drawn,) = draw_shots(task, 5, 0, 0, other)
    assert rows(other)[0] not in rows(drawn.src)
    test = padded([np.array(row) for row in (rows(other)[0], rows(drawn.src)[2])])
    kept, skipping = draw_shots(task, 5, 0, 0, test)  # the third shot drawn, as a test
    assert rows(kept.src) == rows(drawn.src)
    (next_one,) = draw_shots(task, 6, 0, 0, other)
    expected = rows(drawn.src)[:2] + rows(drawn.src)[3:] + rows(next_one.src)[5:]
    assert rows(skipping.src) == expected
    np.testing.assert_array_equal(skipping.tgt, trim(task.solve(skipping.src), -1))


def test_the_pool_holds_each_training_input_once_in_the_splits_order(task):
    pool = shot_pool(task, seed=0)
    first = task.generate("train", POOL, seed=0)
    seen = list(dict.fromkeys(rows(first.src)))
    assert rows(pool.src) == seen and len(seen) < POOL  # 1-3 digit operands repeat


def test_scan_draws_from_its_own_training_split():
    scan = load_task("scan", {"split": "length"})
    test = scan.generate("length_test", 3, seed=0).src
    train = set(rows(scan.generate("length_train", POOL, seed=0).src))
    for shots in draw_shots(scan, 3, 0, 0, test):
        assert set(rows(shots.src)) <= train


def test_no_shots_and_bad_counts(task):
    test = task.generate("test", 2, seed=0).src
    assert [len(s) for s in draw_shots(task, 0, 0, 0, test)] == [0, 0]
    available = len(shot_pool(task, 0))
    with pytest.raises(ConfigError, match=rf"shots must be an integer in 0\.\.{available - 1}"):
        draw_shots(task, available, 0, 0, test)
    with pytest.raises(ConfigError, match="shots must be"):
        draw_shots(task, -1, 0, 0, test)
    with pytest.raises(ConfigError, match="shot draw must be an integer >= 0"):
        draw_shots(task, 2, -1, 0, test)
