"""The generation loop of every failure search: the generic one (`search.py`) and SAGGA's
(`studies/sagga/search.py`) differ in how a generation is made and what it archives, not in
how generations follow each other.

    for each generation      check the time budget (not before the first), compute the
                             generation unless its files exist, take them in, write the
                             search's state, log a line
    stop                     after the last generation, at the archive size, or when the
                             budget is spent (checked here and, by a search, inside a
                             generation); a rerun of the same command goes on from the files

Files: each generation is `generations/NNNNN.parquet` (one row per input) and
`generations/NNNNN.json` (its effort).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from genprobe.runs.budget import Budget, OutOfTime

Log = Callable[[str], None]


def generation_path(generation: int, suffix: str) -> str:
    return f"generations/{generation:05d}.{suffix}"


def read_generation(run: Path, generation: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A finished generation's inputs and effort."""
    frame = pd.read_parquet(run / generation_path(generation, "parquet"))
    effort = json.loads((run / generation_path(generation, "json")).read_text(encoding="utf-8"))
    return frame, effort


class Generations(Protocol):
    """One search's way of making generations and taking them in."""

    @property
    def archived(self) -> int:
        """Inputs archived so far."""
        ...

    def compute(self, generation: int) -> bool:
        """Compute generation `generation` unless it is done; returns whether it ran.

        Raises:
            OutOfTime: the budget was spent between its shards (the rerun goes on).
        """
        ...

    def absorb(self, generation: int) -> str:
        """Take in the finished generation; returns what the log says of it."""
        ...

    def write_state(self, stop: str) -> None:
        """Write the archive and the search's state ("running" or why it stopped)."""
        ...


def evolve(
    search: Generations, generations: range, archive_size: int, budget: Budget, log: Log
) -> str:
    """Run `generations` of `search`, writing its state after each and once at the end;
    returns why it stopped: "generations", "archive size" or "time budget"."""
    stop, last = "generations", None
    try:
        for generation in generations:
            if last is not None:
                budget.check()
            ran = search.compute(generation)
            said = search.absorb(generation)
            last = generation
            search.write_state("running")
            log(f"generation {generation}{'' if ran else ' (done before)'}: {said}")
            if search.archived >= archive_size:
                stop = "archive size"
                break
    except OutOfTime:
        stop = "time budget"
        after = "before a generation finished" if last is None else f"after generation {last}"
        log(f"the time budget (--minutes) is spent {after}: rerun to search on")
    search.write_state(stop)
    return stop
