"""Shared terminal output: a rich console on stderr (stdout stays clean for --json)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)


@contextlib.contextmanager
def progress_bar(quiet: bool = False) -> Iterator[Progress]:
    """A progress bar with elapsed time; `quiet` hides it (for --json)."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )
    with progress:
        yield progress
