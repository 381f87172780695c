"""The loop both failure searches run (`studies/search/loop.py`), with a breeder whose
generations are written by hand: what is archived, and which parents each generation gets."""

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from helpers import MinuteClock, rerecord

from genprobe.runs.budget import Budget
from genprobe.studies.search.embedding import make_embedder
from genprobe.studies.search.loop import (
    Parents,
    Search,
    Selection,
    evolve,
    generation_path,
    keep_archive,
)
from genprobe.studies.search.selection import next_seeds

# generation -> (input, failed, fitness) of each of its inputs
GENERATIONS = {
    1: [("a", True, 0.5), ("b", False, 0.0), ("c", True, 0.001)],
    2: [("a", True, 0.5), ("d", True, 0.2), ("e", True, 0.3)],
    3: [("d", True, 0.2), ("f", False, 0.0)],
}


@dataclass
class Written:
    """A breeder (`loop.Breeder`) whose generations are `GENERATIONS`; it keeps the parents it
    was given."""

    run: Path
    generations: dict = field(default_factory=lambda: GENERATIONS)
    first: int = 1
    key: str = "input"
    archive_file: str = "archive.parquet"
    given: dict[int, Parents] = field(default_factory=dict)
    seen: dict[int, set[str]] = field(default_factory=dict)

    def recorded(self, generation: int) -> bool:
        return (self.run / generation_path(generation, "parquet")).is_file()

    def compute(self, generation: int, parents: Parents) -> bool:
        self.given[generation], self.seen[generation] = parents, set(parents.seen)
        rows = self.generations[generation]
        frame = pd.DataFrame(rows, columns=["input", "failed", "fitness"]).assign(
            text=lambda f: f["input"]
        )
        (self.run / "generations").mkdir(exist_ok=True)
        frame.to_parquet(self.run / generation_path(generation, "parquet"))
        (self.run / generation_path(generation, "json")).write_text(json.dumps({"n": len(rows)}))
        return True

    def failed(self, frame: pd.DataFrame) -> np.ndarray:
        return frame["failed"].to_numpy()

    def archived(self, novel: pd.DataFrame) -> pd.DataFrame:
        return novel

    def stats(self, frame, effort, fit, search) -> dict:
        return {**effort, "fit": len(fit), "archive_size": search.archived}

    def write_archive(self, archive: list[pd.DataFrame]) -> None:
        keep_archive(self.run, pd.concat(archive))


def _search(tmp_path: Path, how: str, generations: dict = GENERATIONS) -> tuple[Search, Written]:
    breeder = Written(tmp_path, generations)
    selection = Selection(
        how, size=3, seed=7, clusters=3, embedder=make_embedder("char"), kmeans_seed=3
    )
    return Search(breeder, tmp_path, ["base1", "base2"], selection, tau=0.01), breeder


def test_failures_over_tau_are_archived_once_and_parents_come_from_them_then_the_base(tmp_path):
    search, breeder = _search(tmp_path, "fitness")
    stop = evolve(search, range(1, 4), archive_size=100, budget=Budget(None), log=print)
    assert stop == "generations"
    archive = pd.read_parquet(tmp_path / "archive.parquet")
    # b passed, c is under tau, a and d are found again: archived once, when first found
    assert list(archive["input"]) == ["a", "d", "e"]
    assert breeder.given[1].keys == ["base1", "base2"]
    assert breeder.given[2].keys == ["a", "base1", "base2"]  # the one of generation 1
    assert breeder.given[3].keys == ["e", "d", "base1", "base2"]  # a is not novel any more
    assert breeder.seen[3] == {"a", "b", "c", "d", "e"}
    state = json.loads((tmp_path / "search.json").read_text())
    assert state["generations"] == 3 and [s["fit"] for s in state["stats"]] == [1, 3, 1]


# eleven failures whose k-means clusters (3) depend on the seed: 4 and 8 choose apart
SPREAD = ["*+yyx", "xx", "*-+*-", "*++-", "-*x", "-+x", "*-xx-", "+x", "+++", "*+", "y**y"]
FITNESS = [1.0, 0.98, 0.69, 0.65, 0.69, 0.39, 0.14, 0.72, 0.53, 0.31, 0.49]


def test_kmeans_parents_are_chosen_with_its_seed_plus_the_generation_they_come_from(tmp_path):
    generations = {1: [(text, True, f) for text, f in zip(SPREAD, FITNESS, strict=True)], 2: []}
    search, breeder = _search(tmp_path, "kmeans", generations)
    evolve(search, range(1, 3), archive_size=100, budget=Budget(None), log=print)
    found = pd.DataFrame({"input": SPREAD, "text": SPREAD, "fitness": FITNESS})

    def chosen(seed: int) -> list[str]:
        return next_seeds(
            found, "input", ["base1", "base2"], "kmeans", make_embedder("char"), size=3,
            clusters=3, seed=seed,
        )  # fmt: skip

    assert breeder.given[2].keys == chosen(3 + 1) != chosen(7 + 1)


def test_a_tournament_draws_its_parents_from_the_generations_stream_first(tmp_path):
    search, breeder = _search(tmp_path, "tournament")
    evolve(search, range(1, 3), archive_size=100, budget=Budget(None), log=print)
    rng = np.random.default_rng([7, 2])
    drawn = rng.integers(3, size=(3, 2))  # `evolve.parents`: tournaments of two
    fitness = np.array([0.5, 0.0, 0.001])
    winners = drawn[np.arange(3), np.argmax(fitness[drawn], axis=1)]
    assert breeder.given[2].keys == [["a", "b", "c"][w] for w in winners]
    # the breeder goes on from where the tournament left the stream
    assert breeder.given[2].rng.integers(10**9) == rng.integers(10**9)


def test_the_archive_size_stops_the_search(tmp_path):
    search, _ = _search(tmp_path, "fitness")
    stop = evolve(search, range(1, 4), archive_size=2, budget=Budget(None), log=print)
    assert stop == "archive size"
    assert json.loads((tmp_path / "search.json").read_text())["generations"] == 2


def test_the_budget_is_the_runs_so_a_rerun_only_reads_and_a_larger_one_searches_on(tmp_path):
    search, _ = _search(tmp_path, "fitness")
    # read at the start, after generation 1, before generation 2 (past 1.5 minutes), at the end
    assert evolve(search, range(1, 4), 100, Budget(1.5, MinuteClock()), print) == "time budget"
    state = json.loads((tmp_path / "search.json").read_text())
    assert state["generations"] == 1 and state["search_seconds"] == 180

    def rerun(minutes):
        search, breeder = _search(tmp_path, "fitness")
        log = []
        stop = evolve(search, range(1, 4), 100, Budget(minutes, MinuteClock()), log.append)
        return stop, sorted(breeder.given), log

    stop, computed, log = rerun(1.5)
    assert (stop, computed) == ("time budget", [])  # nothing replayed, nothing computed
    assert log == [
        "the search stopped by the time budget after generation 1: reading its files (a "
        "larger --minutes searches on)"
    ]
    del state["search_seconds"]  # as written before the budget was the run's: spent
    (tmp_path / "search.json").write_text(json.dumps(state))
    rerecord(tmp_path, tmp_path / "search.json")
    assert rerun(1.5)[:2] == ("time budget", [])
    state["search_seconds"] = 180
    (tmp_path / "search.json").write_text(json.dumps(state))
    rerecord(tmp_path, tmp_path / "search.json")
    # 3 minutes more than the 3 spent: generation 2 begins at 2 of them, 3 at 4
    assert rerun(6)[:2] == ("time budget", [1, 2])
    assert json.loads((tmp_path / "search.json").read_text())["generations"] == 2
    assert rerun(None)[:2] == ("generations", [1, 2, 3])
    assert rerun(None)[:2] == ("generations", [])  # finished at its last generation


def test_the_budget_is_cpu_time_with_a_wall_clock_backstop_of_ten_times_it(tmp_path):
    """A search whose work is not this process's CPU time (a Ray cluster's, a GPU's) stops at
    the backstop, as a deadline pool's item does; the backstop is the run's too."""
    search, _ = _search(tmp_path, "fitness")
    idle = lambda: 0.0  # noqa: E731  this process's CPU time: none used
    # 1.5 minutes: a backstop of 15 minutes of wall clock, which passes 8 minutes a reading:
    # read at the start, after generation 1 (search.json), before generation 2 (16 minutes)
    wall = MinuteClock()
    budget = Budget(1.5, idle, wall=lambda: 8 * wall())
    assert evolve(search, range(1, 4), 100, budget, print) == "time budget"
    state = json.loads((tmp_path / "search.json").read_text())
    assert state["generations"] == 1 and state["search_seconds"] == 0
    assert state["search_wall_seconds"] == 24 * 60  # and the last search.json's reading
    # the same budget again only reads; without one, the search goes on
    search, breeder = _search(tmp_path, "fitness")
    assert evolve(search, range(1, 4), 100, Budget(1.5, idle), print) == "time budget"
    assert sorted(breeder.given) == []
    search, breeder = _search(tmp_path, "fitness")
    assert evolve(search, range(1, 4), 100, Budget(None, idle), print) == "generations"
    assert sorted(breeder.given) == [1, 2, 3]  # generation 1 replayed
