"""A failure search over every member of a model (the seeds of a finished sweep, or a language
model's prompt formats x draws x samples), end to end.

    generation 0   the base inputs (`--base-split`, `--base-size`, the sweep's data seed or,
                   for a language model, `--data-seed`)
    generation g   parents by tournament among every input evaluated so far (or, with
                   `--selection kmeans|fitness`, SAGGA's: chosen among the inputs generation
                   g - 1 archived, then every base input again: `loop.Search`, the loop
                   SAGGA's search runs too), `--mutants` mutants of each
                   by the task's `mutations()` (rng [seed, g]); mutants that
                   `valid_inputs` refuses are counted per operator and dropped, as are
                   duplicates and inputs met before; the rest decoded by every member and
                   scored (`generation.py`); the new ones with fitness >= tau archived,
                   each marked where a sweep's seeds were trained on it (`trained_on`, and
                   `trained_on_b` for run B's)
    stop           after `--generations`, at `--archive-size`, or when `--minutes` of this
                   process's CPU time are spent (checked between generations; over every
                   invocation of the run, so a rerun of a finished search only reads)
    analyse        clusters and slices of what was found, the inputs nearest the clusters'
                   centres tagged where the task tags (`analysis.py`; the tags in shards on
                   the study's executor, `tags.py`)

That is the task's breeder (`--breeder task`, `TaskBreeder`). With `--breeder sagga` the
generations are SAGGA's (`sagga/breeder.py`: the basis mutated, simplified and filtered, asked
of an integration model and verified by SymPy, from generation 1), and so is the analysis
(`studies/search/sagga/analysis.py`) and the report; `integration sagga` runs this search too.

Every generation's mutants are a function of the generation files before it, so a killed
search, rerun with the same command, replays the finished generations from disk (their shards
are skipped) and ends with the archive an uninterrupted run gives. `archive.parquet` and
`search.json` (effort per generation, why it stopped) are kept again after each one, the
driver's shards (`loop.py`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from genprobe.runs.budget import Budget
from genprobe.runs.config import RunConfig
from genprobe.runs.driver import writes_runs
from genprobe.runs.executor import Executor, LocalExecutor, run_stage
from genprobe.runs.rundir import open_run
from genprobe.runs.shards import Shard, ShardStore
from genprobe.studies.search.analysis import analyse
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.embedding import make_embedder
from genprobe.studies.search.evolve import mutate
from genprobe.studies.search.generation import GenerationStage, generation_shard
from genprobe.studies.search.loop import Log, Parents, Search, Selection, evolve, keep_archive
from genprobe.studies.search.results import ARCHIVE, TRAINED_ON
from genprobe.studies.search.study import GENERATION
from genprobe.studies.search.study import SEARCH as STUDY
from genprobe.tasks.probing import from_input_keys, input_keys
from genprobe.tasks.registry import task_name
from genprobe.tasks.task import Task


@dataclass
class TaskBreeder:
    """The failure search's generations (a `loop.Breeder`): the task's mutations of the parents,
    decoded and judged by every member in one shard (`generation.py`)."""

    config: SearchConfig
    task: Task
    run: Path
    stage: GenerationStage
    runner: Executor
    # a column of `results.TRAINED_ON` -> the keys of the inputs that run's sweep trained on
    trained: dict[str, frozenset[str]] = field(default_factory=dict)
    first: int = 0
    key: str = "input"
    archive_file: ClassVar[str] = ARCHIVE

    def recorded(self, generation: int) -> bool:
        return ShardStore(self.run).finished(GENERATION, f"{generation:05d}")

    def compute(self, generation: int, parents: Parents) -> bool:
        made = self.base(parents) if generation == 0 else self.offspring(generation, parents)
        return run_stage(self.run, self.stage, [made], self.runner)

    def base(self, parents: Parents) -> Shard:
        keys = parents.keys
        return generation_shard(0, keys, ["base"] * len(keys), [None] * len(keys), {})

    def offspring(self, generation: int, parents: Parents) -> Shard:
        """Generation `generation`'s shard: the new valid mutants of its parents."""
        made = mutate(self.task, from_input_keys(parents.keys), self.config.mutants, parents.rng)
        new, duplicates = set[str](), Counter[str]()
        inputs, operator, parent = [], [], []
        for key, name, row in zip(input_keys(made.src), made.operator, made.parent, strict=True):
            if key in parents.seen or key in new:
                duplicates[name] += 1
                continue
            new.add(key)
            inputs.append(key)
            operator.append(name)
            parent.append(parents.keys[row])
        effort = {
            "operators": {
                name: {**counts, "duplicate": duplicates[name]}
                for name, counts in made.counts.items()
            }
        }
        return generation_shard(generation, inputs, operator, parent, effort)

    def failed(self, frame: pd.DataFrame) -> np.ndarray:
        return (frame["failed"] > 0).to_numpy()

    def archived(self, novel: pd.DataFrame) -> pd.DataFrame:
        """Each input marked where a sweep's seeds were trained on it."""
        return novel.assign(
            **{column: novel["input"].isin(trained) for column, trained in self.trained.items()}
        )

    def stats(
        self, frame: pd.DataFrame, effort: dict[str, Any], fit: pd.DataFrame, search: Search
    ) -> dict[str, Any]:
        archived = search.archive[-1]
        training_counts = {}
        for column, trained in self.trained.items():
            training_counts |= {
                column: int(frame["input"].isin(trained).sum()),
                f"archived_{column}": int(archived[column].sum()),
            }
        return {
            **effort,
            "failed": int((frame["failed"] > 0).sum()),
            "novel_found": len(archived),
            "archive_size": search.archived,
            "mean_fitness": float(frame["fitness"].mean()) if len(frame) else None,
            **training_counts,
        }

    def write_archive(self, archive: list[pd.DataFrame]) -> None:
        keep_archive(self.run, pd.concat(archive, ignore_index=True) if archive else pd.DataFrame())


@writes_runs
def run_search(
    config: SearchConfig,
    out: str | Path,
    log: Log = lambda message: None,
    executor: Executor | None = None,
    clock: Callable[[], float] = time.process_time,
    *,
    kind: str = STUDY.kind,
    recorded: RunConfig | None = None,
) -> Path:
    """Run (or resume) a search in `out`, then its analysis; returns the run directory, which
    `report.write_search_report` reports. `kind` and `recorded`: the run's kind and the config
    its directory records (by default the failure search's, `config`); a SAGGA run records
    its `SaggaConfig` (`studies/search/sagga/run.py`).

    Raises:
        ConfigError, RunDirError, TaskContractError: bad input, found before anything is
            written.
    """
    with executor or LocalExecutor() as runner, LocalExecutor() as here:
        if config.breeder == "sagga":
            run, search, budget, analysis = _sagga(
                config, out, kind, recorded, runner, here, clock, log
            )
        else:
            run, search, budget, analysis = _task(config, out, kind, recorded, runner, clock, log)
        generations = range(search.breeder.first, config.generations + 1)
        evolve(search, generations, config.archive_size, budget, log)
        analysis()
    return run


def _task(
    config: SearchConfig, out: str | Path, kind: str, recorded: RunConfig | None,
    runner: Executor, clock: Callable[[], float], log: Log,
) -> tuple[Path, Search, Budget, Callable[[], object]]:  # fmt: skip
    """The run, the search with the task's breeder, its budget (started last) and its
    analysis (`analysis.py`: its tags on `runner`)."""
    searched = config.checked()  # before the run directory is made
    config = config.absolute()  # for workers elsewhere
    task = searched.a.task
    run = open_run(out, kind, recorded or config, starts=searched.check)
    base_split = config.base_split or task.validation_split
    about = {
        "task": task_name(task), "task_options": task.options(),
        "members": searched.members, "runs": searched.runs(), "base_split": base_split,
    }  # fmt: skip
    sides = {"A": searched.a, "B": searched.b}
    trained = {
        TRAINED_ON[name]: frozenset(input_keys(inputs))
        for name, side in sides.items()
        if side is not None and (inputs := side.model.training_inputs(task)) is not None
    }
    target = searched.target(config.target)
    base = task.generate(base_split, config.base_size, searched.a.data_seed).src
    stage = GenerationStage(config, target, config.target_texts())
    search = Search(
        TaskBreeder(config, task, run, stage, runner, trained), run,
        list(dict.fromkeys(input_keys(base))), _selection(config, 1), config.archive_tau, about,
    )  # fmt: skip
    budget = Budget(config.minutes, clock)

    def analysis() -> bool:
        return analyse(run, task, target, config.tag_limit, runner, config.workers, log)

    return run, search, budget, analysis


def _sagga(
    config: SearchConfig, out: str | Path, kind: str, recorded: RunConfig | None,
    runner: Executor, here: Executor, clock: Callable[[], float], log: Log,
) -> tuple[Path, Search, Budget, Callable[[], object]]:  # fmt: skip
    """The run, the search with SAGGA's breeder (propose and verify on `runner`, score
    `here`), its budget (started once the run is open), and its analysis
    (`studies/search/sagga/analysis.py`: clusters here, tags and nearby successes on `runner`)."""
    from genprobe.studies.search.sagga.analysis import analyse as analyse_sagga
    from genprobe.studies.search.sagga.breeder import SaggaBreeder, basis
    from genprobe.studies.search.sagga.mutants import canonical_key
    from genprobe.studies.search.sagga.results import read_state
    from genprobe.studies.search.sagga.seeds import read_problem_file

    config = config.validated()
    # the files it reads, read before any file is written
    seeds0 = list(dict.fromkeys(canonical_key(p) for p in basis(config)))
    if config.targets_file is not None:
        read_problem_file(config.targets_file)  # as the fitness will read it
    if recorded is None:
        config = config.absolute()
    run = open_run(out, kind, recorded or config, starts=config.model.check)
    log(f"searching from {len(seeds0)} seeds, {config.generation_size} mutants per generation")
    budget = Budget(config.minutes, clock)
    breeder = SaggaBreeder(config, run, runner, here, budget, log)
    search = Search(breeder, run, seeds0, _selection(config, 0), config.archive_tau)

    def analysis() -> None:
        generations = read_state(run)["generations"]
        analyse_sagga(run, config, generations, runner, here, log)

    return run, search, budget, analysis


def _selection(config: SearchConfig, kmeans_offset: int) -> Selection:
    """How the parents are chosen. The k-means after generation g is seeded `seed + g` for
    SAGGA's breeder, `seed + 1 + g` for the task's (the generation it chooses for), as each
    search was before they shared this loop."""
    return Selection(
        config.selection, config.population, config.seed,
        kmeans_seed=config.seed + kmeans_offset, clusters=config.clusters,
        embedder=make_embedder(config.embedding),
    )  # fmt: skip
