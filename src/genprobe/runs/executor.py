"""Executors map a stage over its shards; the driver records what comes back.

A `Stage` says what a stage does: `setup` once per worker (load a model, start a verifier
pool), then `run(context, shard, scratch)` per shard, returning the shard's files. Stages hold
only picklable settings, so an executor may run them in this process, in worker processes, or
on a cluster; studies never know which. `run_stage` is the one driver loop: skip finished
shards, map the rest, write each result atomically as it arrives.

Example:
    run_stage(run_dir, DecodeStage(config), shards, LocalExecutor())
"""

from __future__ import annotations

import abc
import multiprocessing
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.managers import SyncManager
from pathlib import Path
from queue import SimpleQueue
from typing import Any, ClassVar

from genprobe.errors import ConfigError, show_warning
from genprobe.runs.interrupts import (
    CTRL_C_EXIT,
    children_ignore_ctrl_c,
    exit_with_parent,
    leave_on_ctrl_c,
)
from genprobe.runs.resume import check_state
from genprobe.runs.shards import Outputs, Shard, ShardStore


class Stage(abc.ABC):
    """What one stage does to each of its shards. Subclasses store settings only."""

    # whether shards run the model on its device: an executor gives GPUs only to such stages
    needs_device: ClassVar[bool] = False
    # files in a shard's scratch directory that `run` resumes from (`runs.resume` states): the
    # driver sets a damaged one aside before the shard runs, and says so where the user sees it
    resume_states: ClassVar[tuple[str, ...]] = ()

    def setup(self) -> Any:
        """Per-worker state made once and passed to every `run` (a loaded model, a pool)."""
        return None

    @abc.abstractmethod
    def run(self, context: Any, shard: Shard, scratch: Path) -> Outputs:
        """The shard's files (run-relative path -> bytes): a pure function of the shard's spec
        and the stage's settings. `scratch` may hold state to resume this shard."""

    def close(self, context: Any) -> None:
        """Release what `setup` made."""
        return None

    def runtime(self) -> dict[str, Any]:
        """Facts about how shards run (device, threads), recorded in each shard's manifest.

        The driver calls it once per stage, only when shards are pending and before any runs:
        the place to refuse a stage that cannot run here (a device that is not visible), so a
        finished stage never needs it.
        """
        return {}


Result = tuple[Shard, Outputs, float]  # the shard, its files, seconds it took


class Executor(abc.ABC):
    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def runtime(self, stage: Stage) -> dict[str, Any]:
        """`stage.runtime()` where the shards will run."""
        return stage.runtime()

    @contextmanager
    def channel(self) -> Iterator[Any]:
        """A queue that shards may `put` on from wherever they run and the driver may `get`
        from (progress reports)."""
        manager = SyncManager(ctx=multiprocessing.get_context("spawn"))
        with children_ignore_ctrl_c():  # the manager's server ignores it too, once it runs
            manager.start(exit_with_parent, (os.getpid(),))
        with manager:
            yield manager.Queue()

    @abc.abstractmethod
    def map(
        self, stage: Stage, shards: Sequence[Shard], scratch: Callable[[Shard], Path]
    ) -> Iterator[Result]:
        """Run `stage` on every shard; yield each result as it completes (any order)."""


class Worker:
    """Runs one stage's shards wherever it lives (this process, a pool process, a Ray actor):
    the stage's `setup` once, at the first shard, then each shard, timed.

    `setup` waits for the first shard rather than running at start: an error in it then reaches
    the driver as itself, not as a broken pool or a dead actor.
    """

    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        self._context: list[Any] = []  # `setup`'s result, once made

    def run(self, shard: Shard, scratch: Path) -> tuple[Outputs, float]:
        if not self._context:
            self._context.append(self.stage.setup())
        start = time.perf_counter()
        outputs = self.stage.run(self._context[0], shard, scratch)
        return outputs, time.perf_counter() - start

    def runtime(self) -> dict[str, Any]:
        return self.stage.runtime()

    def close(self) -> None:
        if self._context:
            self.stage.close(self._context.pop())


class LocalExecutor(Executor):
    """Shards on this machine: in this process (`workers=1`, the default: one model, loaded
    once, using every core through its own threads), or spread over `workers` processes, each
    with its own `setup` (e.g. single-threaded members of a seed sweep).

    Used as a context manager, an in-process executor keeps each stage's `setup` until the
    block ends, so a study that runs one shard per call (a search, generation by generation)
    loads its model once.
    """

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ConfigError("workers", "at least 1", workers)
        self.workers = workers
        self._kept: dict[int, Worker] | None = None  # id(stage) -> its worker, in a `with` block

    def __enter__(self) -> LocalExecutor:
        self._kept = {}
        return self

    def __exit__(self, *exc: object) -> None:
        kept, self._kept = self._kept or {}, None
        for worker in kept.values():
            worker.close()

    @contextmanager
    def channel(self) -> Iterator[Any]:
        if self.workers > 1:
            with super().channel() as channel:
                yield channel
        else:  # every shard runs in this process: no manager process to start
            yield SimpleQueue()

    def map(
        self, stage: Stage, shards: Sequence[Shard], scratch: Callable[[Shard], Path]
    ) -> Iterator[Result]:
        if not shards:
            return
        if self.workers > 1 and len(shards) > 1:
            yield from self._in_processes(stage, shards, scratch)
            return
        kept = self._kept is not None
        worker = self._kept.setdefault(id(stage), Worker(stage)) if kept else Worker(stage)
        try:
            for shard in shards:
                yield shard, *worker.run(shard, scratch(shard))
        finally:
            if not kept:
                worker.close()

    def _in_processes(
        self, stage: Stage, shards: Sequence[Shard], scratch: Callable[[Shard], Path]
    ) -> Iterator[Result]:
        pool = ProcessPoolExecutor(
            min(self.workers, len(shards)),
            mp_context=multiprocessing.get_context("spawn"),  # no forked torch or thread state
            initializer=_start_worker,
            initargs=(stage, os.getpid()),
        )
        try:
            with children_ignore_ctrl_c():  # the pool starts its processes as work comes
                futures = {
                    pool.submit(_run_in_worker, shard, scratch(shard)): shard for shard in shards
                }
            for future in as_completed(futures):
                try:
                    outputs, seconds = future.result()
                except BrokenProcessPool:
                    # A worker that left on Ctrl-C can break the pool before the driver's own
                    # SIGINT is handled (a loaded machine): the interrupt is what happened.
                    if left_on_ctrl_c(pool):
                        raise KeyboardInterrupt from None
                    raise
                yield futures[future], outputs, seconds
        finally:
            # On an error or an interrupt, shards not started yet are dropped rather than run
            # for results nobody would record (on Ctrl-C the workers have left already).
            pool.shutdown(wait=True, cancel_futures=True)


def left_on_ctrl_c(pool: ProcessPoolExecutor, wait: float = 5.0) -> bool:
    """Whether a worker of a broken `pool` ended because of Ctrl-C
    (`interrupts.leave_on_ctrl_c`). Its exit code is known only once it is reaped, which the
    pool's own thread is doing as this runs: wait up to `wait` seconds for every worker's (the
    driver's own Ctrl-C, if it is on its way, interrupts the wait)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    deadline = time.monotonic() + wait
    while any(p.exitcode is None for p in processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    return any(p.exitcode == CTRL_C_EXIT for p in processes)


_WORKER: Worker | None = None  # a pool process's


def _start_worker(stage: Stage, parent: int) -> None:
    global _WORKER
    exit_with_parent(parent)
    leave_on_ctrl_c()
    warnings.showwarning = show_warning  # a shard's warning as the driver shows its own
    _WORKER = Worker(stage)


def _run_in_worker(shard: Shard, scratch: Path) -> tuple[Outputs, float]:
    assert _WORKER is not None, "worker used before its initializer ran"
    return _WORKER.run(shard, scratch)


@contextmanager
def relayed(executor: Executor, handle: Callable[[Any], None] | None) -> Iterator[Any]:
    """A queue (the executor's channel) that shards may `put` items on wherever they run; a
    thread here hands each item to `handle` until the block ends. None when `handle` is None:
    there is nobody to tell."""
    if handle is None:
        yield None
        return
    with executor.channel() as queue:

        def relay() -> None:
            while (item := queue.get()) is not None:
                handle(item)

        thread = threading.Thread(target=relay, daemon=True)
        thread.start()
        try:
            yield queue
        finally:
            queue.put(None)
            thread.join()


def run_stage(
    run: str | Path,
    stage: Stage,
    shards: Sequence[Shard],
    executor: Executor | None = None,
    on_done: Callable[[Shard], None] | None = None,
) -> int:
    """Run the shards of one stage that are not done yet; returns how many ran.

    Each result is written (files, then manifest) as soon as it arrives, so an interrupted
    stage loses at most the shards in flight. A stage with nothing pending calls nothing of
    `stage`, not even `runtime`.
    """
    store = ShardStore(run)
    pending = store.pending(shards)
    if not pending:
        _finish(store, shards)
        return 0
    executor = executor or LocalExecutor()
    facts = executor.runtime(stage)
    for shard in pending:
        for name in stage.resume_states:
            restart = f"shard {shard.name} starts again from the beginning"
            check_state(store.scratch(shard) / name, restart)
    for shard, outputs, seconds in executor.map(stage, pending, store.scratch):
        store.record(shard, outputs, {**facts, "seconds": round(seconds, 3)})
        store.clear_scratch(shard)
        if on_done is not None:
            on_done(shard)
    _finish(store, shards)
    return len(pending)


def _finish(store: ShardStore, shards: Sequence[Shard]) -> None:
    """Record which shards each stage of `shards` has, now that all of them are done."""
    for stage in sorted({shard.stage for shard in shards}):
        store.finish(stage, [shard for shard in shards if shard.stage == stage])
