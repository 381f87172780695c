"""A process pool with a hard wall-clock deadline per item.

SymPy has no timeout, alarms cannot interrupt C code and only work in the main thread, and a
`ProcessPoolExecutor` cannot cancel a running future. So each worker is a plain process with its
own pipe: an item that overruns its deadline gets its process killed and replaced, and is
reported as timed out; a worker that dies is reported as crashed and replaced as well.

Works under the fork and spawn start methods: the function is sent by reference (it must be a
module-level function) and the shared context is sent once per worker per `run`.

Example:
    with DeadlinePool(workers=2) as pool:
        for result in pool.run(check, items, deadline=2.0, shared=settings):
            ...  # result.index, result.status ("done" / "timeout" / "error"), result.value
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Literal

from genprobe.errors import ConfigError, check_choice

Status = Literal["done", "timeout", "error"]


@dataclass(frozen=True)
class TaskResult:
    index: int  # position of the item in the input
    status: Status
    value: Any = None
    seconds: float = 0.0
    error: str = ""  # for "error": the exception, or how the worker died


def _worker_main(conn: Connection) -> None:
    # Ctrl-C goes to the whole process group; the parent decides, workers just get killed.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
        message = conn.recv()
        kind = message[0]
        if kind == "stop":
            return
        if kind == "setup":
            function, shared = message[1], message[2]
            conn.send(("ready",))
            continue
        index, item = message[1], message[2]
        start = time.perf_counter()
        try:
            value = function(shared, item)  # type: ignore[misc]
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
    """`workers` processes; each item of `run` gets at most `deadline` seconds of wall clock.

    Args:
        workers: number of processes (at least 1).
        start_method: "fork", "spawn", "forkserver", or None for the platform default.
        max_items_per_worker: a worker is replaced after this many items, to bound the memory
            that caches (SymPy's among them) accumulate.
        prefetch: items sent ahead to each worker, so it never waits for the parent. Only the
            first is running; its deadline starts when the one before it is answered. Items
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
        self.replaced = 0  # workers killed (timeouts) or lost (crashes) so far
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
    ) -> Iterator[TaskResult]:
        """Apply `function(shared, item)` to every item; yield results as they complete.

        Every item yields exactly one `TaskResult`, in completion order (use `.index`).
        """
        if not deadline > 0:
            raise ConfigError("deadline", "a positive number of seconds", deadline)
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
                    worker.conn.send(("task", *job))
            busy = [w for w in self._pool if w.queue]
            if exhausted and not retry and not busy:
                return
            now = time.monotonic()
            timeout = min((w.started + deadline - now for w in busy), default=None)
            waiting = {w.conn: w for w in self._pool if w.queue or not w.ready}
            for conn in wait(list(waiting), timeout=max(timeout, 0) if busy else None):
                yield from self._receive(waiting[conn], retry)
            now = time.monotonic()
            for worker in [w for w in self._pool if w.queue]:
                if now - worker.started >= deadline:
                    index, _ = worker.queue.popleft()
                    retry.extendleft(reversed(worker.queue))
                    self._replace(worker, kill=True)
                    yield TaskResult(index, "timeout", seconds=now - worker.started)

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
        if status == "done":
            yield TaskResult(index, "done", value=payload, seconds=seconds)
        else:
            yield TaskResult(index, "error", seconds=seconds, error=payload)
        if worker.done >= self.max_items_per_worker:
            worker.retiring = True
        if worker.retiring and not worker.queue:
            self._replace(worker, kill=False)
