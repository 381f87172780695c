"""A SAGGA search, end to end (Welleck et al. 2022, section 2.2): generations of mutants, an
archive of novel failures, then its analysis (the files the cluster report reads).

    seeds_0  the basis; re-added to the seeds of every generation, as in the original
    loop     the failure search (`studies/search/search.py`: `run_search`, its `Search`
             of `loop.py`) with SAGGA's breeder (`studies/search/sagga/`): run generation g
             (three stages: propose on the model's worker, verify spread over workers,
             score); archive its failures with fitness >= tau that are novel (by canonical
             form); select the next seeds among them (`studies/search/selection.py`); stop
             at the archive size, the generation limit or the search's time budget (CPU time
             of this process with a wall-clock backstop, `runs/budget.py`; checked between
             generations, and between a generation's stages and shards; the run's, over
             every invocation)
    analyse  cluster the archive, tag its failures, search a nearby success per cluster
             (`analysis.py`, with budgets of work of its own, not the search's time budget):
             the stages the report (`report.py`) reads, never reruns

The archive and the next seeds are functions of the generation files alone, so a killed
search, rerun with the same command, replays the finished generations from disk (skipping
their shards), continues after the last one (a generation stopped halfway keeps its model
answers and the verdicts of finished verify shards), and ends with the archive an
uninterrupted run gives (deadlines are budgets of CPU time, so machine load does not change it).
`archive.parquet` (one row per novel failure, never changed once written) and `search.json`
(stats per generation, why it stopped) are kept again after every generation, the driver's
shards of stage `progress` (`studies/search/loop.py`), read through their records. A run
made before archive.parquet holds `archive.jsonl`: a rerun of its finished search only reads
it; a search of it that goes on (resumed mid-way, or given more time) writes the whole archive
as archive.parquet, then removes archive.jsonl.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from genprobe.runs.driver import writes_runs
from genprobe.runs.executor import Executor
from genprobe.studies.search.loop import Log
from genprobe.studies.search.sagga.config import SaggaConfig
from genprobe.studies.search.sagga.study import SAGGA
from genprobe.studies.search.search import run_search


@writes_runs
def run_sagga(
    config: SaggaConfig,
    out: str | Path,
    log: Log = lambda message: None,
    executor: Executor | None = None,
    clock: Callable[[], float] = time.process_time,
) -> Path:
    """Run (or resume) a search in `out`, then its analysis (clusters, exploit tags, nearby
    successes); returns the run directory, which `report.write_sagga_report` reports. The
    failure search's `run_search` with SAGGA's breeder (`SaggaConfig.as_search`), in a run
    that records `config`.

    `clock` measures the time budget (`config.minutes`) of the generations: this process's CPU
    time, with a wall-clock backstop (`runs/budget.py`).
    """
    config = config.validated()
    search = config.as_search()
    return run_search(search, out, log, executor, clock, kind=SAGGA.kind, recorded=config)
