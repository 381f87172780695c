"""The deadline pool: results, errors, crashes and timeouts, under fork and spawn."""

import pytest
from helpers import HANG_CORPUS, run_hang_item, square_slowly

from genprobe.errors import ConfigError
from genprobe.verification.pool import DeadlinePool


def _index(result):
    return result.index


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_every_item_gets_one_result(start_method):
    items = [1, 2, 1000, 3, -1, -2, 4]
    with DeadlinePool(2, start_method=start_method) as pool:
        results = sorted(
            pool.run(square_slowly, items, deadline=0.5, shared=0.01), key=lambda r: r.index
        )
        assert [r.status for r in results] == [
            "done",
            "done",
            "timeout",
            "done",
            "error",
            "error",
            "done",
        ]
        assert [r.value for r in results if r.status == "done"] == [1, 4, 9, 16]
        assert "ValueError: negative" in results[4].error
        assert "died" in results[5].error
        assert results[2].seconds >= 0.5  # killed at the deadline, not before
        # killed and dead workers were replaced: the pool still works
        again = sorted(
            pool.run(square_slowly, range(6), deadline=1.0, shared=0.0), key=lambda r: r.index
        )
        assert [r.value for r in again] == [0, 1, 4, 9, 16, 25]
        assert pool.replaced == 2


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError):
        DeadlinePool(0)
    with pytest.raises(ConfigError):
        DeadlinePool(1, start_method="teleport")
    with DeadlinePool(1) as pool, pytest.raises(ConfigError):
        list(pool.run(square_slowly, [1], deadline=0, shared=0.0))


def test_hang_corpus_items_are_killed_at_their_deadline():
    deadline = 1.0
    names = list(HANG_CORPUS)
    with DeadlinePool(2, start_method="fork") as pool:
        results = list(pool.run(run_hang_item, names, deadline=deadline))
        assert pool.replaced == len(names)  # each runaway worker was killed and replaced
    assert sorted(r.index for r in results) == list(range(len(names)))
    for result in results:
        assert result.status == "timeout", names[result.index]
        assert result.seconds >= deadline
