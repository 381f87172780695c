"""The deadline pool: results, errors, crashes, CPU-budget timeouts and wall-clock hangs, under
fork and spawn."""

import math

import pytest
from helpers import (
    HANG_CORPUS,
    frozen_objects,
    run_hang_item,
    simplify_text,
    square_slowly,
    swallow_every_time,
    swallow_once_then_spin,
)

from genprobe.errors import ConfigError
from genprobe.runs.pool import DeadlineCounts, DeadlinePool, TaskResult


def _index(result):
    return result.index


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_every_item_gets_one_result(start_method):
    items = [1, 2, 3, -1, -2, 4, 2000]
    with DeadlinePool(2, start_method=start_method) as pool:
        results = sorted(pool.run(square_slowly, items, deadline=0.5, shared=0.01), key=_index)
        statuses = ["done", "done", "done", "error", "error", "done", "timeout"]
        assert [r.status for r in results] == statuses
        assert [r.value for r in results if r.status == "done"] == [1, 4, 9, 16]
        assert "ValueError: negative" in results[3].error
        assert "died" in results[4].error
        assert results[6].seconds >= 0.5  # interrupted once it had used its CPU budget
        # the dead worker was replaced, the one over budget kept: both still work
        again = sorted(pool.run(square_slowly, range(6), deadline=1.0, shared=0.0), key=_index)
        assert [r.value for r in again] == [0, 1, 4, 9, 16, 25]
        assert pool.replaced == 1


def test_a_forked_worker_never_collects_what_it_inherited():
    # a full collection over a parent's heap would be charged to an item's CPU budget
    inherited = [[i] for i in range(100_000)]
    with DeadlinePool(1, start_method="fork") as pool:
        [result] = pool.run(frozen_objects, [0], deadline=5.0, shared=None)
    assert result.value >= len(inherited)


def test_a_worker_that_uses_no_cpu_is_killed_at_the_backstop():
    # one worker: the second item, sent ahead behind the first, runs on its replacement
    with DeadlinePool(1, start_method="fork") as pool:
        results = sorted(
            pool.run(square_slowly, [1000, 5], deadline=0.5, shared=0.0, backstop=2.0), key=_index
        )
        assert [(r.status, r.value) for r in results] == [("hang", None), ("done", 25)]
        assert results[0].seconds >= 2.0  # killed at the backstop, not before
        assert pool.replaced == 1


@pytest.mark.parametrize("function", [swallow_once_then_spin, swallow_every_time])
def test_an_item_that_swallows_the_interruption_still_times_out(function):
    with DeadlinePool(1, start_method="fork") as pool:
        [result] = pool.run(function, [1.0], deadline=0.3, shared=None)
        [after] = pool.run(square_slowly, [3], deadline=1.0, shared=0.0)
    assert result.status == "timeout"  # interrupted again, or over budget when it returned
    assert (after.status, after.value, pool.replaced) == ("done", 9, 0)  # the worker goes on


def test_deadline_counts():
    counts = DeadlineCounts()
    for status in ("done", "timeout", "hang", "error", "done"):
        counts.add(TaskResult(0, status))
    assert (counts.items, counts.over_budget, counts.hung) == (5, 1, 1)
    assert counts.share == 2 / 5
    assert DeadlineCounts().share == 0.0


def test_a_deadline_share_past_the_threshold_is_a_warning():
    assert DeadlineCounts(100, 5, 0).warning("items") is None  # 5 %: at the threshold
    line = DeadlineCounts(100, 4, 2).warning("candidates verified")
    assert line is not None and line.startswith("6 of 100 candidates verified (6.0%)")
    assert "4 over their CPU budget, 2 killed at the wall-clock backstop" in line
    assert (DeadlineCounts(1, 1, 0) + DeadlineCounts(3, 0, 1)) == DeadlineCounts(4, 1, 1)


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError):
        DeadlinePool(0)
    with pytest.raises(ConfigError):
        DeadlinePool(1, start_method="teleport")
    with DeadlinePool(1) as pool, pytest.raises(ConfigError):
        list(pool.run(square_slowly, [1], deadline=0, shared=0.0))
    with DeadlinePool(1) as pool, pytest.raises(ConfigError, match="deadline"):
        list(pool.run(square_slowly, [1], deadline=math.inf, shared=0.0))
    with DeadlinePool(1) as pool, pytest.raises(ConfigError, match="backstop"):
        list(pool.run(square_slowly, [1], deadline=1, shared=0.0, backstop=-1))


def test_hang_corpus_items_are_interrupted_at_their_cpu_budget():
    deadline = 1.0
    names = list(HANG_CORPUS)
    with DeadlinePool(1, start_method="fork", prefetch=2) as pool:
        results = list(pool.run(run_hang_item, names, deadline=deadline))
        assert sorted(r.index for r in results) == list(range(len(names)))
        for result in results:
            assert result.status == "timeout", names[result.index]
            assert result.seconds >= deadline
        # interrupted inside SymPy, the worker was kept, and it still answers right: its SymPy
        # cache holds nothing half-made, and the items prefetched behind each one ran
        assert pool.replaced == 0
        texts = ["sin(x)**2 + cos(x)**2", "(x**2 - 1)/(x - 1)", "sin(x)**2 + cos(x)**2"]
        again = sorted(pool.run(simplify_text, texts, deadline=deadline), key=_index)
        expected = [("done", "1"), ("done", "x + 1"), ("done", "1")]
        assert [(r.status, r.value) for r in again] == expected
        assert pool.replaced == 0


def test_a_worker_whose_parent_is_gone_mid_message_leaves_quietly():
    """A driver killed with SIGKILL mid-send leaves its workers a cut pipe: they exit 0,
    printing no traceback over the user's terminal."""
    import multiprocessing

    from genprobe.runs.pool import _worker_main

    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    worker = context.Process(target=_worker_main, args=(child,))
    worker.start()
    child.close()
    parent.send_bytes(b"")  # a message cut short: what the worker reads before the EOF
    parent.close()
    worker.join(timeout=60)
    assert worker.exitcode == 0
