"""A SAGGA search, end to end (Welleck et al. 2022, section 2.2): generations of mutants, an
archive of novel failures, then its analysis (the files the cluster report reads).

    seeds_0  the basis; re-added to the seeds of every generation, as in the original
    loop     the failure search's `Search` (`studies/search/loop.py`) with SAGGA's breeder:
             run generation g (shards of three stages, `generation.py`: propose on the model's
             worker, verify spread over workers, score); archive its failures with fitness >=
             tau that are novel (by canonical form); select the next seeds among them
             (`studies/search/selection.py`); stop at the archive size, the generation limit
             or the search's time budget (CPU time of this process with a wall-clock backstop,
             as the failure search's: `runs/budget.py`; checked between generations, and
             between a generation's stages and shards; the run's, over every invocation)
    analyse  cluster the archive, tag its failures, search a nearby success per cluster
             (`clusters.py`, with budgets of work of its own, not the search's time budget):
             the stages the report (`report.py`) reads, never reruns

The archive and the next seeds are functions of the generation files alone, so a killed
search, rerun with the same command, replays the finished generations from disk (skipping
their shards), continues after the last one (a generation stopped halfway keeps its model
answers and the verdicts of finished verify shards), and ends with the archive an
uninterrupted run gives (deadlines are budgets of CPU time, so machine load does not change it).
`archive.parquet` (one row per novel failure, never changed once written) and `search.json`
(stats per generation, why it stopped) are rewritten atomically after every generation. A run
made before archive.parquet holds `archive.jsonl`: a rerun of its finished search only reads
it; a search of it that goes on (resumed mid-way, or given more time) writes the whole archive
as archive.parquet, then removes archive.jsonl.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.runs.atomic import atomic_path
from genprobe.runs.budget import Budget
from genprobe.runs.executor import Executor, LocalExecutor, run_stage
from genprobe.runs.rundir import open_run
from genprobe.runs.shards import Shard, ShardStore
from genprobe.studies.sagga.clusters import analyse
from genprobe.studies.sagga.config import SaggaConfig
from genprobe.studies.sagga.generation import (
    ProposeStage,
    ScoreStage,
    VerifyStage,
    propose_shard,
    proposed_path,
    score_shard,
    verified_path,
    verify_shards,
)
from genprobe.studies.sagga.mutants import canonical_key
from genprobe.studies.sagga.results import (
    ARCHIVE,
    ARCHIVE_COLUMNS,
    JSONL_ARCHIVE,
    archive_file,
    read_state,
)
from genprobe.studies.sagga.seeds import named_basis, read_problem_file
from genprobe.studies.sagga.study import GENERATION, SAGGA
from genprobe.studies.search.embedding import make_embedder
from genprobe.studies.search.loop import Log, Parents, Search, Selection, evolve
from genprobe.tasks.integration.expression import Expr
from genprobe.under_test.settings import sent_to_workers


def basis(config: SaggaConfig) -> list[Expr]:
    if config.basis_file is not None:
        return read_problem_file(config.basis_file)
    return named_basis(config.basis)


def run_sagga(
    config: SaggaConfig,
    out: str | Path,
    log: Log = lambda message: None,
    executor: Executor | None = None,
    clock: Callable[[], float] = time.process_time,
) -> Path:
    """Run (or resume) a search in `out`, then its analysis (clusters, exploit tags, nearby
    successes); returns the run directory, which `report.write_sagga_report` reports.

    `clock` measures the time budget (`config.minutes`) of the generations: this process's CPU
    time, with a wall-clock backstop (`runs/budget.py`).
    """
    run = run_generations(config, out, log, executor, clock)
    generations = read_state(run)["generations"]
    with executor or LocalExecutor() as runner, LocalExecutor() as here:
        analyse(run, config, generations, runner, here, log)
    return run


def run_generations(
    config: SaggaConfig,
    out: str | Path,
    log: Log = lambda message: None,
    executor: Executor | None = None,
    clock: Callable[[], float] = time.process_time,
) -> Path:
    """The search alone: generations until the archive size, the generation limit or the time
    budget; returns the run directory."""
    config = config.validated()
    # the files it reads, read before any file is written
    seeds0 = list(dict.fromkeys(canonical_key(p) for p in basis(config)))
    if config.targets_file is not None:
        read_problem_file(config.targets_file)  # as the fitness will read it
    run = open_run(out, SAGGA.kind, config, starts=config.model.check)
    log(f"searching from {len(seeds0)} seeds, {config.generation_size} mutants per generation")
    with executor or LocalExecutor() as runner, LocalExecutor() as here:
        budget = Budget(config.minutes, clock)
        selection = Selection(
            config.selection, config.seed_size, config.seed, kmeans_seed=config.seed,
            clusters=config.clusters, embedder=make_embedder(config.embedding),
        )  # fmt: skip
        breeder = SaggaBreeder(config, run, runner, here, budget, log)
        search = Search(breeder, run, seeds0, selection, config.tau)
        evolve(search, range(1, config.generations + 1), config.archive_size, budget, log)
    return run


@dataclass
class SaggaBreeder:
    """SAGGA's generations (a `studies.search.loop.Breeder`): every parent (a seed) mutated
    `generation_size // seeds` times, in three stages: propose and verify on the study's
    executor, score here (where the search's embedder already is); the budget is checked after
    each shard. Novel by canonical form; the archive is `archive.parquet`."""

    config: SaggaConfig
    run: Path
    runner: Executor
    here: Executor
    budget: Budget
    log: Log
    first: int = 1
    key: str = "problem"

    @property
    def archive_file(self) -> str:
        return archive_file(self.run)  # JSONL_ARCHIVE in a run made before, until it goes on

    def __post_init__(self) -> None:
        config = sent_to_workers(self.config)
        self.tasks = ProposeStage(config), VerifyStage(config), ScoreStage(config)

    def recorded(self, generation: int) -> bool:
        return ShardStore(self.run).finished(GENERATION, f"{generation:05d}")

    def compute(self, generation: int, parents: Parents) -> bool:
        if self.recorded(generation):
            return False  # however its verification was chunked
        seeds = parents.keys
        per_seed = max(1, self.config.generation_size // len(seeds))
        propose, verify, score = self.tasks
        self.log(f"generation {generation}: mutating {len(seeds)} seeds, asking the model")
        run_stage(self.run, propose, [propose_shard(generation, seeds, per_seed)], self.runner)
        self.budget.check()
        proposed = self._read(proposed_path(generation))
        shards = verify_shards(generation, proposed["rows"], self.config.verify_chunk)
        done = 0

        def verified_one(shard: Shard) -> None:
            nonlocal done
            done += 1
            self.log(f"generation {generation}: verified {done} of {len(shards)} shards")
            self.budget.check()

        self.log(f"generation {generation}: verifying {len(shards)} shards")
        run_stage(self.run, verify, shards, self.runner, on_done=verified_one)
        self.budget.check()
        verified = [self._read(verified_path(generation, s.spec["chunk"])) for s in shards]
        run_stage(self.run, score, [score_shard(generation, proposed, verified)], self.here)
        return True

    def failed(self, frame: pd.DataFrame) -> np.ndarray:
        return (frame["status"] == "failed").to_numpy()

    def archived(self, novel: pd.DataFrame) -> pd.DataFrame:
        return novel[list(ARCHIVE_COLUMNS)]

    def stats(
        self, frame: pd.DataFrame, effort: dict[str, Any], fit: pd.DataFrame, search: Search
    ) -> dict[str, Any]:
        novel, lengths = search.archive[-1], [part["length"] for part in search.archive]
        return {
            **effort,
            "problems_found": int((frame["fitness"] > 0).sum()),
            "fitness_found": len(fit),
            "novel_found": len(novel),
            "novel_found_length": float(novel["length"].mean()) if len(novel) else None,
            "archive_size": search.archived,
            "archive_mean_length": float(np.mean(np.concatenate(lengths)))
            if search.archived
            else None,
            "next_seeds": len(search.chosen),
        }

    def write_archive(self, archive: list[pd.DataFrame]) -> None:
        columns = list(ARCHIVE_COLUMNS)
        frame = pd.concat(archive, ignore_index=True) if archive else pd.DataFrame(columns=columns)
        with atomic_path(self.run / ARCHIVE) as tmp:
            frame.to_parquet(tmp, index=False)
        (self.run / JSONL_ARCHIVE).unlink(missing_ok=True)  # a run made before: ARCHIVE holds it

    def _read(self, path: str) -> Any:
        return json.loads((self.run / path).read_text(encoding="utf-8"))
