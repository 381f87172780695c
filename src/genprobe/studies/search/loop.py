"""The loop of every failure search: the generic one (`search.py`) and SAGGA's
(`sagga/breeder.py`) are one `Search`, and differ only in their `Breeder`: how a
generation is made from its parents and written, and what the archive's file is.

    for each generation      check the time budget (not before the first), choose its parents,
                             compute the generation unless its files exist, take it in (its
                             novel failures with fitness >= tau join the archive), choose the
                             next parents (SAGGA's selection), write the search's state, log a
                             line
    parents                  the first generation's: the base inputs. After it, with
                             `tournament`, the winners of tournaments of two among every input
                             evaluated so far (drawn from the generation's generator, which the
                             breeder goes on drawing from); with `kmeans` or `fitness`
                             (`selection.next_seeds`), `size` of the inputs the last generation
                             archived, then every base input again
    stop                     after the last generation, at the archive size, or when the
                             budget is spent: CPU time of this process, with a wall-clock
                             backstop (`runs/budget.py`), checked here and, by a breeder,
                             inside a generation; the budget is the run's, over every
                             invocation (search.json records the seconds of each clock used)

The archive and the parents are functions of the generation files alone, so a killed search,
rerun with the same command, replays the finished generations from disk and ends with the
archive an uninterrupted run gives. A search that stopped (at its last generation, its archive
size, or with its budget spent) is finished: its rerun replays nothing and only reads; given a
larger budget (or none) it goes on.

Files: each generation is `generations/NNNNN.parquet` (one row per input) and
`generations/NNNNN.json` (its effort); `search.json` (what the search is, why it stopped, the
effort per generation) and the archive are kept again after each generation, as the driver's
shards of stage `progress` (`progress/search`, `progress/archive`: `ShardStore.keep`), and
read through their records: one damaged is named to a reader, and made again by the rerun.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from genprobe.errors import DamagedFileError
from genprobe.runs.budget import Budget, OutOfTime
from genprobe.runs.shards import Shard, ShardStore, json_bytes, parquet_bytes, unless_damaged
from genprobe.studies.search.embedding import Embedder
from genprobe.studies.search.evolve import parents as tournament
from genprobe.studies.search.sagga.study import PROGRESS
from genprobe.studies.search.selection import next_seeds

Log = Callable[[str], None]
STATE = "search.json"
ARCHIVE = "archive.parquet"  # both breeders' (SAGGA's runs made before it: `archive.jsonl`)
RESUME = "run the search (the same command resumes)"


def generation_path(generation: int, suffix: str) -> str:
    return f"generations/{generation:05d}.{suffix}"


def read_generation(run: Path, generation: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A finished generation's inputs and effort."""
    frame = pd.read_parquet(run / generation_path(generation, "parquet"))
    effort = json.loads((run / generation_path(generation, "json")).read_text(encoding="utf-8"))
    return frame, effort


@dataclass(frozen=True)
class Parents:
    """What a generation is made from."""

    keys: list[str]  # the inputs mutated (the first generation: the base inputs)
    rng: np.random.Generator  # the generation's, seeded [seed, generation]
    seen: Set[str]  # every input evaluated before (the search's own: not to be kept)


class Breeder(Protocol):
    """One kind of search's generations and archive file."""

    first: int  # the first generation: 0 evaluates the base inputs as they are, 1 mutates them
    key: str  # the column of the generation files that names an input
    archive_file: str  # the archive's file in the run directory

    def recorded(self, generation: int) -> bool:
        """Whether generation `generation`'s files are recorded and intact."""
        ...

    def compute(self, generation: int, parents: Parents) -> bool:
        """Compute generation `generation` unless it is done; returns whether it ran.

        Raises:
            OutOfTime: the budget was spent between its shards (a rerun with more goes on).
        """
        ...

    def failed(self, frame: pd.DataFrame) -> np.ndarray:
        """(n,) whether each input of a generation file failed."""
        ...

    def archived(self, novel: pd.DataFrame) -> pd.DataFrame:
        """The archive's rows of a generation's novel failures."""
        ...

    def stats(
        self, frame: pd.DataFrame, effort: dict[str, Any], fit: pd.DataFrame, search: Search
    ) -> dict[str, Any]:
        """What search.json says of a generation just taken in: its effort file, the inputs
        with fitness >= tau among its failures (`fit`), and the search after it."""
        ...

    def write_archive(self, archive: list[pd.DataFrame]) -> None:
        """Keep the archive's file (`keep_archive`) from its rows per generation (`archived`)."""
        ...


@dataclass(frozen=True)
class Selection:
    """How parents are chosen: `tournament`, or SAGGA's `kmeans` or `fitness`."""

    how: str
    size: int  # parents (tournament), or inputs chosen before the base is re-added
    seed: int  # of each generation's generator, [seed, generation]
    # the k-means after generation g is seeded kmeans_seed + g: SAGGA's is its seed; the
    # failure search's has been its seed + 1 (seeded by the generation it chooses for)
    kmeans_seed: int
    clusters: int = 10  # of kmeans
    embedder: Embedder | None = None  # of kmeans


@dataclass
class Search:
    """What a search knows between generations, rebuilt from the generation files."""

    breeder: Breeder
    run: Path
    base: list[str]  # the base inputs, as keys: the first parents, re-added by SAGGA's selection
    selection: Selection
    tau: float
    about: dict[str, Any] = field(default_factory=dict)  # what search.json says besides progress
    evaluated: list[str] = field(default_factory=list)  # every input's key, in order
    seen: set[str] = field(default_factory=set)  # the same keys
    fitness: list[float] = field(default_factory=list)
    archive: list[pd.DataFrame] = field(default_factory=list)  # rows per generation
    keys: set[str] = field(default_factory=set)  # the inputs archived
    stats: list[dict[str, Any]] = field(default_factory=list)
    chosen: list[str] = field(default_factory=list)  # the next parents (SAGGA's selection)

    @property
    def archived(self) -> int:
        return sum(len(part) for part in self.archive)

    def compute(self, generation: int) -> bool:
        rng = np.random.default_rng([self.selection.seed, generation])
        if generation == self.breeder.first:
            keys = self.base
        elif self.selection.how == "tournament":
            drawn = tournament(np.array(self.fitness), self.selection.size, rng)
            keys = [self.evaluated[i] for i in drawn]
        else:
            keys = self.chosen
        return self.breeder.compute(generation, Parents(keys, rng, self.seen))

    def absorb(self, generation: int) -> str:
        """Take in a finished generation: its inputs join those evaluated, its novel failures
        with fitness >= tau the archive; returns what the log says of it."""
        breeder, key = self.breeder, self.breeder.key
        frame, effort = read_generation(self.run, generation)
        self.evaluated += list(frame[key])
        self.seen.update(frame[key])
        self.fitness += list(frame["fitness"])
        failed = np.asarray(breeder.failed(frame), dtype=bool)
        fit = frame[failed & (frame["fitness"] >= self.tau).to_numpy()]
        novel = fit[~fit[key].isin(self.keys)].reset_index(drop=True)
        self.archive.append(breeder.archived(novel))
        self.keys.update(novel[key])
        if self.selection.how != "tournament":
            self.chosen = next_seeds(
                novel, key, self.base, self.selection.how, self.selection.embedder,
                size=self.selection.size, clusters=self.selection.clusters,
                seed=self.selection.kmeans_seed + generation,
            )  # fmt: skip
        self.stats.append(breeder.stats(frame, effort, fit, self))
        return f"{len(frame)} inputs, {len(novel)} archived, archive {self.archived}"

    def write_state(self, stop: str, budget: Budget) -> None:
        """Write the archive and search.json (why it stopped: "running" while it runs; the
        seconds of the budget's clock, and of wall clock, used by every invocation so far)."""
        self.breeder.write_archive(self.archive)
        done = self.breeder.first + len(self.stats) - 1
        state = {
            **self.about, "stop": stop, "generations": done, "search_seconds": budget.used(),
            "search_wall_seconds": budget.used_wall(), "stats": self.stats,
        }  # fmt: skip
        ShardStore(self.run).keep(Shard(PROGRESS, "search"), {STATE: json_bytes(state)})

    def finished(
        self, state: dict[str, Any] | None, last: int, archive_size: int, budget: Budget
    ) -> bool:
        """Whether the search that wrote `state` (search.json before this invocation) stopped
        for good at these limits, with its files intact: nothing is left to compute."""
        if state is None:
            return False
        store = ShardStore(self.run)
        if unless_damaged(lambda: store.file(PROGRESS, self.breeder.archive_file)) is None:
            return False
        stop, done = state.get("stop"), state.get("generations")
        stats = state.get("stats") or [{}]
        over = {
            "generations": done == last,
            "archive size": (stats[-1].get("archive_size") or 0) >= archive_size,
            "time budget": budget.spent_before,
        }.get(stop, False)
        if not over or not isinstance(done, int) or done > last:
            return False
        return all(self.breeder.recorded(g) for g in range(self.breeder.first, done + 1))


def keep_archive(run: Path, archive: pd.DataFrame) -> None:
    """Keep the archive (`ARCHIVE`) as the driver's shard `progress/archive`."""
    ShardStore(run).keep(Shard(PROGRESS, "archive"), {ARCHIVE: parquet_bytes(archive)})


def read_state(run: Path) -> dict[str, Any] | None:
    """search.json, None where the run has none yet.

    Raises:
        DamagedFileError: it is not the one the run recorded (or, in a run made before it was
            recorded, not readable).
    """
    path = ShardStore(run).file(PROGRESS, STATE)
    if path is None:
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # ValueError: not JSON, not UTF-8
        state = None
    if not isinstance(state, dict):
        again = "rerun the search (same run directory) to write it again"
        raise DamagedFileError(path, "is not a readable search state", again)
    return state


def spent_before(state: dict[str, Any] | None, minutes: float | None) -> tuple[float, float]:
    """Seconds of the budget's clock and of wall clock that the invocations which wrote `state`
    used. A search.json written before they were recorded that stopped by the budget used all
    of it; one written before the wall clock was recorded used none of it."""
    if state is None:
        return 0.0, 0.0
    wall = state.get("search_wall_seconds")
    wall = float(wall) if isinstance(wall, (int, float)) else 0.0
    if isinstance(seconds := state.get("search_seconds"), (int, float)):
        return float(seconds), wall
    by_time = state.get("stop") == "time budget" and minutes is not None
    return (60.0 * minutes if by_time else 0.0), wall


def evolve(search: Search, generations: range, archive_size: int, budget: Budget, log: Log) -> str:
    """Run `generations` of `search`, writing its state after each and once at the end;
    returns why it stopped: "generations", "archive size" or "time budget". The budget goes on
    from what earlier invocations spent; a search they finished is only read (one whose
    search.json is damaged is replayed to write it again)."""
    state = unless_damaged(lambda: read_state(search.run))
    budget.spent, budget.spent_wall = spent_before(state, budget.minutes)
    if search.finished(state, generations[-1], archive_size, budget):
        stop = state["stop"]
        more = " (a larger --minutes searches on)" if stop == "time budget" else ""
        log(f"the search stopped by the {stop} after generation {state['generations']}: "
            f"reading its files{more}")  # fmt: skip
        return stop
    stop, last = "generations", None
    try:
        for generation in generations:
            if last is not None:
                budget.check()
            ran = search.compute(generation)
            said = search.absorb(generation)
            last = generation
            search.write_state("running", budget)
            log(f"generation {generation}{'' if ran else ' (done before)'}: {said}")
            if search.archived >= archive_size:
                stop = "archive size"
                break
    except OutOfTime:
        stop = "time budget"
        after = "before a generation finished" if last is None else f"after generation {last}"
        log(f"the time budget (--minutes) is spent {after}: a larger --minutes searches on")
    search.write_state(stop, budget)
    return stop
