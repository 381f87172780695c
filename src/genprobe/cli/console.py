"""Shared terminal output: a rich console on stderr (stdout stays clean for --json)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)


@contextlib.contextmanager
def progress_bar(quiet: bool = False) -> Iterator[Progress]:
    """A progress bar with elapsed time, drawn from its first `update` on; `quiet` hides it.

    Drawing only once there is progress keeps an early one-line error a single line.
    """
    progress = _LazyProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
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
    def update(self, *args: Any, **kwargs: Any) -> None:
        if not self.live.is_started and not self.disable:
            self.start()
        super().update(*args, **kwargs)
