"""A process pool with a CPU-time budget per item, and a wall-clock backstop for hangs.

SymPy has no timeout and a `ProcessPoolExecutor` cannot cancel a running future, so each worker
is a plain process with its own pipe. The deadline is a budget of the worker's own CPU time
(user + system, `ITIMER_PROF`), not of wall clock: a busy machine slows an item down but does not
make it run out of time, so the same inputs give the same results under any load. An item over
its budget is interrupted inside the worker (a SIGPROF handler raises, and again every
`REPEAT_SECONDS` of CPU where the item's code swallowed it; an item that returns over its
budget all the same is over it) and reported as "timeout"; the worker carries on. What the
timer cannot interrupt (a long call into C, a worker blocked on I/O) meets the wall-clock
backstop: past it the parent kills the worker, replaces it and reports "hang". A worker that
dies is reported as an "error" and replaced as well. POSIX only (Linux, macOS).

Works under the fork and spawn start methods: the function is sent by reference (it must be a
module-level function) and the shared context is sent once per worker per `run`.

Example:
    with DeadlinePool(workers=2) as pool:
        for result in pool.run(check, items, deadline=2.0, shared=settings):
            ...  # result.index, result.status, result.value
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Literal

from genprobe.errors import ConfigError, check_choice, finite
from genprobe.runs.interrupts import children_ignore_ctrl_c

# "timeout": over its CPU budget; "hang": past the wall-clock backstop, the worker killed
Status = Literal["done", "timeout", "hang", "error"]
MIN_BACKSTOP_SECONDS = 60.0
BACKSTOP_FACTOR = 10.0
# reports warn when a larger share of a study's items hit a deadline
DEADLINE_WARNING_SHARE = 0.05


@dataclass(frozen=True)
class TaskResult:
    index: int  # position of the item in the input
    status: Status
    value: Any = None
    seconds: float = 0.0  # wall clock
    error: str = ""  # for "error": the exception, or how the worker died


@dataclass
class DeadlineCounts:
    """How many items ran, and how many of them hit the CPU budget or the backstop."""

    items: int = 0
    over_budget: int = 0
    hung: int = 0

    def add(self, result: TaskResult) -> None:
        self.items += 1
        self.over_budget += result.status == "timeout"
        self.hung += result.status == "hang"

    @property
    def share(self) -> float:
        """The share of items that hit a deadline, 0 when none ran."""
        return (self.over_budget + self.hung) / self.items if self.items else 0.0

    def __add__(self, other: DeadlineCounts) -> DeadlineCounts:
        return DeadlineCounts(
            self.items + other.items, self.over_budget + other.over_budget, self.hung + other.hung
        )

    def warning(self, what: str) -> str | None:
        """A line for a report when more than `DEADLINE_WARNING_SHARE` of the items (`what`,
        e.g. "candidates verified") hit a deadline, else None."""
        if self.share <= DEADLINE_WARNING_SHARE:
            return None
        return (
            f"{self.over_budget + self.hung:,} of {self.items:,} {what} ({self.share:.1%}) hit "
            f"a deadline ({self.over_budget:,} over their CPU budget, {self.hung:,} killed at the "
            f"wall-clock backstop), more than {DEADLINE_WARNING_SHARE:.0%}: the results depend "
            "on the deadline; a longer one may change them."
        )


def default_backstop(deadline: float) -> float:
    return max(MIN_BACKSTOP_SECONDS, BACKSTOP_FACTOR * deadline)


# after the budget, SIGPROF comes again every this many CPU seconds: code that swallows the
# interruption (SymPy has bare `except:` clauses) gets it again on its way out
REPEAT_SECONDS = 0.05


class _OverBudget(BaseException):
    """Raised in a worker by SIGPROF; a BaseException so that `except Exception` in the item's
    code does not swallow it."""


class _Item:
    running = False  # SIGPROF interrupts only while an item runs


def _over_budget(signum: int, frame: Any) -> None:
    if _Item.running:
        raise _OverBudget


def _run_item(function: Callable[[Any, Any], Any], shared: Any, item: Any, budget: float) -> Any:
    """`function(shared, item)` within `budget` seconds of this process's CPU time.

    Raises:
        _OverBudget: it used up its budget, even where its code swallowed the interruption.
    """
    used = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, budget, REPEAT_SECONDS)
    _Item.running = True
    try:
        value = function(shared, item)
    finally:
        _disarm()
    if time.process_time() - used > budget:
        raise _OverBudget
    return value


def _disarm() -> None:
    _Item.running = False
    signal.setitimer(signal.ITIMER_PROF, 0)


def _worker_main(conn: Connection) -> None:
    # What the worker inherited (a forked parent's heap: torch, SymPy, a model) is never
    # garbage, but a full collection would walk all of it, 0.2-0.5 s of CPU charged to
    # whichever item it lands in: enough to time out a 0.03 s integral under a 0.5 s budget.
    # Frozen objects are left out of collections (moving them is O(1), touching none).
    gc.freeze()
    # Ctrl-C goes to the whole process group; the parent decides, workers just get killed.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGPROF, _over_budget)
    function: Callable[[Any, Any], Any] | None = None
    shared: Any = None
    parent = os.getppid()
    while True:
        # A parent killed with SIGKILL sends no "stop", and forked siblings may keep its end of
        # the pipe open, so no EOF comes either: a worker whose parent is gone leaves.
        if not conn.poll(1.0):
            if os.getppid() != parent:
                return
            continue
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent died mid-send: nobody is left to answer
            return
        kind = message[0]
        if kind == "stop":
            return
        if kind == "setup":
            function, shared = message[1], message[2]
            conn.send(("ready",))
            continue
        index, item, budget = message[1], message[2], message[3]
        start = time.perf_counter()
        try:
            value = _run_item(function, shared, item, budget)  # type: ignore[arg-type]
        except _OverBudget:
            _disarm()  # again: the interruption may have come inside the first one
            conn.send(("timeout", index, None, _since(start)))
        except Exception as error:  # reported to the parent, which decides what it means
            conn.send(("error", index, f"{type(error).__name__}: {error}", _since(start)))
        else:
            conn.send(("done", index, value, _since(start)))


def _since(start: float) -> float:
    return time.perf_counter() - start


class _Worker:
    def __init__(self, context: Any) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child,), daemon=True)
        with children_ignore_ctrl_c():  # until `_worker_main` ignores it itself
            self.process.start()
        child.close()
        self.ready = False
        # items sent and not answered yet; the first is running since `started`
        self.queue: deque[tuple[int, Any]] = deque()
        self.started = 0.0
        self.done = 0  # items finished, for recycling
        self.retiring = False  # done enough: no new items, replaced once its queue is empty

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError, BrokenPipeError):
            self.conn.send(("stop",))
        self.process.join(timeout=1)
        if self.process.is_alive():
            self.kill()
        else:
            self.conn.close()


class DeadlinePool:
    """`workers` processes; each item of `run` gets at most `deadline` seconds of CPU time.

    Args:
        workers: number of processes (at least 1).
        start_method: "fork", "spawn", "forkserver", or None for the platform default.
        max_items_per_worker: a worker is replaced after this many items, to bound the memory
            that caches (SymPy's among them) accumulate.
        prefetch: items sent ahead to each worker, so it never waits for the parent. Only the
            first is running; its backstop starts when the one before it is answered. Items
            queued behind one that is killed go back to the queue.
    """

    def __init__(
        self,
        workers: int,
        *,
        start_method: str | None = None,
        max_items_per_worker: int = 2000,
        prefetch: int = 2,
    ) -> None:
        if workers < 1:
            raise ConfigError("workers", "at least 1", workers)
        if start_method is not None:
            check_choice("start_method", start_method, multiprocessing.get_all_start_methods())
        self.workers = workers
        self.start_method = start_method
        self.max_items_per_worker = max_items_per_worker
        self.prefetch = max(1, prefetch)
        self._context = multiprocessing.get_context(start_method)
        self._pool: list[_Worker] = []
        self._setup: tuple[Any, ...] = ("setup", None, None)
        self.replaced = 0  # workers killed (hangs) or lost (crashes) so far
        self._setup_failures = 0

    def __enter__(self) -> DeadlinePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in self._pool:
            if worker.queue:
                worker.kill()
            else:
                worker.stop()
        self._pool = []

    def _spawn(self) -> _Worker:
        worker = _Worker(self._context)
        worker.conn.send(self._setup)
        return worker

    def _replace(self, worker: _Worker, *, kill: bool) -> None:
        if kill:
            worker.kill()
            self.replaced += 1
        else:
            worker.stop()
        self._pool[self._pool.index(worker)] = self._spawn()

    def run(
        self,
        function: Callable[[Any, Any], Any],
        items: Iterable[Any],
        *,
        deadline: float,
        shared: Any = None,
        backstop: float | None = None,
    ) -> Iterator[TaskResult]:
        """Apply `function(shared, item)` to every item; yield results as they complete.

        `deadline`: CPU seconds per item; `backstop`: wall-clock seconds per item after which
        its worker is killed (default `default_backstop(deadline)`). Every item yields exactly
        one `TaskResult`, in completion order (use `.index`).
        """
        if not (finite(deadline) and deadline > 0):
            raise ConfigError("deadline", "a positive number of seconds", deadline)
        backstop = default_backstop(deadline) if backstop is None else backstop
        if not (finite(backstop) and backstop > 0):
            raise ConfigError("backstop", "a positive number of seconds", backstop)
        self._setup = ("setup", function, shared)
        for worker in list(self._pool):
            if worker.queue:  # left busy by an abandoned earlier run
                self._replace(worker, kill=True)
            else:
                worker.ready = False
                worker.conn.send(self._setup)
        while len(self._pool) < self.workers:
            self._pool.append(self._spawn())
        self._setup_failures = 0
        fresh = enumerate(items)
        retry: deque[tuple[int, Any]] = deque()  # queued behind an item that was killed
        exhausted = False
        while True:
            for worker in self._pool:
                while worker.ready and len(worker.queue) < self.prefetch and not worker.retiring:
                    job = retry.popleft() if retry else None if exhausted else next(fresh, None)
                    if job is None:
                        exhausted = True
                        break
                    if not worker.queue:
                        worker.started = time.monotonic()
                    worker.queue.append(job)
                    worker.conn.send(("task", *job, deadline))
            busy = [w for w in self._pool if w.queue]
            if exhausted and not retry and not busy:
                return
            now = time.monotonic()
            timeout = min((w.started + backstop - now for w in busy), default=None)
            waiting = {w.conn: w for w in self._pool if w.queue or not w.ready}
            for conn in wait(list(waiting), timeout=max(timeout, 0) if busy else None):
                yield from self._receive(waiting[conn], retry)
            now = time.monotonic()
            for worker in [w for w in self._pool if w.queue]:
                if now - worker.started >= backstop:
                    index, _ = worker.queue.popleft()
                    retry.extendleft(reversed(worker.queue))
                    self._replace(worker, kill=True)
                    yield TaskResult(index, "hang", seconds=now - worker.started)

    def _receive(self, worker: _Worker, retry: deque) -> Iterator[TaskResult]:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            worker.process.join(timeout=1)
            code = worker.process.exitcode
            if not worker.queue:
                self._setup_failures += 1
                if self._setup_failures > 3 * self.workers:
                    raise RuntimeError(
                        f"worker processes keep dying at start (exit code {code})"
                    ) from None
                self._replace(worker, kill=True)
                return
            index, _ = worker.queue.popleft()
            retry.extendleft(reversed(worker.queue))
            self._replace(worker, kill=True)
            how = f"worker process died (exit code {code})"
            yield TaskResult(index, "error", seconds=time.monotonic() - worker.started, error=how)
            return
        if message[0] == "ready":
            worker.ready = True
            return
        status, index, payload, seconds = message
        worker.queue.popleft()
        # the next queued item started as this result was sent
        worker.started = time.monotonic()
        worker.done += 1
        if status == "error":
            yield TaskResult(index, "error", seconds=seconds, error=payload)
        else:
            yield TaskResult(index, status, value=payload, seconds=seconds)
        if worker.done >= self.max_items_per_worker:
            worker.retiring = True
        if worker.retiring and not worker.queue:
            self._replace(worker, kill=False)
