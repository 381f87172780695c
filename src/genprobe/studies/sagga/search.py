"""A SAGGA search, end to end (Welleck et al. 2022, section 2.2): generations of mutants, an
archive of novel failures, then its analysis (the files the cluster report reads).

    seeds_0  the basis; re-added to the seeds of every generation, as in the original
    loop     the failure search's `Search` (`studies/search/loop.py`) with SAGGA's breeder
             (`studies/search/sagga/`): run generation g (three stages: propose on the
             model's worker, verify spread over workers, score); archive its failures with fitness >=
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

import time
from collections.abc import Callable
from pathlib import Path

from genprobe.runs.budget import Budget
from genprobe.runs.executor import Executor, LocalExecutor
from genprobe.runs.rundir import open_run
from genprobe.studies.sagga.clusters import analyse
from genprobe.studies.sagga.config import SaggaConfig
from genprobe.studies.sagga.results import read_state
from genprobe.studies.sagga.study import SAGGA
from genprobe.studies.search.embedding import make_embedder
from genprobe.studies.search.loop import Log, Search, Selection, evolve
from genprobe.studies.search.sagga.breeder import SaggaBreeder, basis
from genprobe.studies.search.sagga.mutants import canonical_key
from genprobe.studies.search.sagga.seeds import read_problem_file


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
