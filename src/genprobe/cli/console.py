"""Shared terminal output: a rich console on stderr (stdout stays clean for --json).

On a terminal, progress is a live bar or spinner; elsewhere (a log file, a pipe, CI) it is plain
lines, one per message and at most one per task every `PLAIN_EVERY` seconds for bars, so a
long run never goes silent.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

console = Console(stderr=True)
PLAIN_EVERY = 30.0  # seconds between plain progress lines of a bar


def plain_line(text: str, started: float, at: float | None = None) -> None:
    """One progress line, prefixed with the minutes and seconds from `started` to `at` (now)."""
    minutes, seconds = divmod(int((time.monotonic() if at is None else at) - started), 60)
    line = f"[{minutes}:{seconds:02d}] {text}"
    console.print(line, markup=False, highlight=False, soft_wrap=True)


@contextlib.contextmanager
def status(message: str) -> Iterator[Callable[[str], None]]:
    """A spinner showing the latest message on a terminal, a plain line per message elsewhere;
    yields the function that reports a new message."""
    if console.is_terminal:
        with console.status(message) as shown:
            yield shown.update
        return
    lines = _PlainLines()
    yield lines
    lines.release()  # not after an error: its line stays the only one


class _PlainLines:
    """Plain progress lines, the first held until a second comes (or a normal end), so an
    error met early (a bad line in a data file) is still the only line."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.held: tuple[str, float] | None = None
        self.released = False

    def __call__(self, text: str) -> None:
        if not self.released and self.held is None:
            self.held = (text, time.monotonic())
            return
        self.release()
        plain_line(text, self.started)

    def release(self) -> None:
        if self.held is not None:
            plain_line(self.held[0], self.started, at=self.held[1])
            self.held = None
        self.released = True


@contextlib.contextmanager
def progress_bar(quiet: bool = False, every: float = PLAIN_EVERY) -> Iterator[Progress]:
    """A progress bar with elapsed time, drawn from its first `update` on; `quiet` hides it.
    Off a terminal it prints a plain line per task at most every `every` seconds instead.

    Drawing only once there is progress keeps an early one-line error a single line.
    """
    progress = _LazyProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        every=every,
        console=console,
        disable=quiet,
        transient=False,
    )
    try:
        yield progress
    finally:
        if progress.live.is_started:  # else stop() would still print an empty line
            progress.stop()


class _LazyProgress(Progress):
    def __init__(self, *columns: Any, every: float, **kwargs: Any) -> None:
        super().__init__(*columns, **kwargs)
        self.every = every
        self._began = time.monotonic()
        self._printed: dict[TaskID, float] = {}  # when each task's last plain line was

    def stop(self) -> None:
        if self.live.is_started:  # rich ends even a bar never drawn with a blank line off a tty
            super().stop()

    def update(self, task_id: TaskID, *args: Any, **kwargs: Any) -> None:
        super().update(task_id, *args, **kwargs)
        if self.disable:
            return
        if self.console.is_terminal:
            if not self.live.is_started:
                self.start()
            return
        now = time.monotonic()
        if now - self._printed.get(task_id, -math.inf) < self.every:
            return
        self._printed[task_id] = now
        task = self._tasks[task_id]
        done = f"{task.completed:,.0f}" + ("" if task.total is None else f" of {task.total:,.0f}")
        plain_line(f"{task.description}: {done}", self._began)
