"""A failure search over every member of a model (the seeds of a finished sweep, or a language
model's prompt formats x draws x samples), end to end.

    generation 0   the base inputs (`--base-split`, `--base-size`, the sweep's data seed or,
                   for a language model, `--data-seed`)
    generation g   parents by tournament among every input evaluated so far (or, with
                   `--selection kmeans|fitness`, SAGGA's: chosen among the inputs generation
                   g - 1 archived, then every base input again), `--mutants` mutants of each
                   by the task's `mutations()` (rng [seed, g]); mutants that
                   `valid_inputs` refuses are counted per operator and dropped, as are
                   duplicates and inputs met before; the rest decoded by every member and
                   scored (`generation.py`); the new ones with fitness >= tau archived,
                   each marked where a sweep's seeds were trained on it (`trained_on`, and
                   `trained_on_b` for run B's)
    stop           after `--generations`, at `--archive-size`, or when `--minutes` of this
                   process's CPU time are spent (checked between generations)
    analyse        clusters and slices of what was found (`analysis.py`)

Every generation's mutants are a function of the generation files before it, so a killed
search, rerun with the same command, replays the finished generations from disk (their shards
are skipped) and ends with the archive an uninterrupted run gives. `archive.parquet` and
`search.json` (effort per generation, why it stopped) are rewritten atomically after each one.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.models.registry import training_inputs
from genprobe.runs.atomic import atomic_path, write_json
from genprobe.runs.budget import Budget
from genprobe.runs.executor import Executor, LocalExecutor, run_stage
from genprobe.runs.rundir import open_run
from genprobe.runs.shards import Shard
from genprobe.studies.search.analysis import analyse
from genprobe.studies.search.config import SELECTION_CLUSTERS, SearchConfig
from genprobe.studies.search.embedding import make_embedder
from genprobe.studies.search.evolve import mutate, parents
from genprobe.studies.search.generation import GenerationTask, generation_shard
from genprobe.studies.search.loop import Log, evolve, read_generation
from genprobe.studies.search.results import ARCHIVE, SEARCH, TRAINED_ON
from genprobe.studies.search.selection import next_seeds
from genprobe.studies.search.study import SEARCH as STUDY
from genprobe.tasks.probing import from_input_keys, input_keys
from genprobe.tasks.registry import task_name
from genprobe.tasks.task import Task


@dataclass
class Search:
    """What the search knows between generations: rebuilt from the generation files (a
    `loop.Generations`)."""

    config: SearchConfig
    task: Task
    run: Path
    stage: GenerationTask
    runner: Executor
    base_src: np.ndarray  # generation 0's inputs, before duplicates are dropped
    about: dict[str, Any]  # what search.json says of the search besides its progress
    evaluated: list[str] = field(default_factory=list)  # every input's key, in order
    fitness: list[float] = field(default_factory=list)
    archive: list[pd.DataFrame] = field(default_factory=list)
    stats: list[dict[str, Any]] = field(default_factory=list)
    # a column of `results.TRAINED_ON` -> the keys of the inputs that run's sweep trained on
    trained: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def archived(self) -> int:
        return sum(len(part) for part in self.archive)

    def compute(self, generation: int) -> bool:
        shard = self.base() if generation == 0 else self.offspring(generation)
        return run_stage(self.run, self.stage, [shard], self.runner)

    @property
    def base_keys(self) -> list[str]:
        return list(dict.fromkeys(input_keys(self.base_src)))

    def base(self) -> Shard:
        found = self.base_keys
        return generation_shard(0, found, ["base"] * len(found), [None] * len(found), {})

    def parents(self, generation: int, rng: np.random.Generator) -> list[str]:
        """Generation `generation`'s parents, as keys."""
        config = self.config
        if config.selection == "tournament":
            chosen = parents(np.array(self.fitness), config.population, rng)
            return [self.evaluated[i] for i in chosen]
        # SAGGA's: among the inputs the last generation archived, then the base inputs again
        return next_seeds(
            self.archive[-1], "input", self.base_keys, config.selection, make_embedder("char"),
            size=config.population, clusters=SELECTION_CLUSTERS, seed=config.seed + generation,
        )  # fmt: skip

    def offspring(self, generation: int) -> Shard:
        """Generation `generation`'s shard: the new valid mutants of its parents."""
        config = self.config
        rng = np.random.default_rng([config.seed, generation])
        parent_keys = self.parents(generation, rng)
        made = mutate(self.task, from_input_keys(parent_keys), config.mutants, rng)
        seen, duplicates = set(self.evaluated), Counter[str]()
        inputs, operator, parent = [], [], []
        for key, name, row in zip(input_keys(made.src), made.operator, made.parent, strict=True):
            if key in seen:
                duplicates[name] += 1
                continue
            seen.add(key)
            inputs.append(key)
            operator.append(name)
            parent.append(parent_keys[row])
        effort = {
            "operators": {
                name: {**counts, "duplicate": duplicates[name]}
                for name, counts in made.counts.items()
            }
        }
        return generation_shard(generation, inputs, operator, parent, effort)

    def absorb(self, generation: int) -> str:
        """Take in a finished generation: its inputs join those evaluated, the fit ones the
        archive (every input of a generation is new: duplicates were dropped before)."""
        frame, effort = read_generation(self.run, generation)
        self.evaluated += list(frame["input"])
        self.fitness += list(frame["fitness"])
        fit = frame[frame["fitness"] >= self.config.archive_tau]
        training_counts = {}
        for column, trained in self.trained.items():
            fit = fit.assign(**{column: fit["input"].isin(trained)})
            training_counts |= {
                column: int(frame["input"].isin(trained).sum()),
                f"archived_{column}": int(fit[column].sum()),
            }
        self.archive.append(fit)
        self.stats.append(
            {
                **effort,
                "failed": int((frame["failed"] > 0).sum()),
                "novel_found": len(fit),
                "archive_size": self.archived,
                "mean_fitness": float(frame["fitness"].mean()) if len(frame) else None,
                **training_counts,
            }
        )
        return f"{len(frame)} inputs, {len(fit)} archived, archive {self.archived}"

    def write_state(self, stop: str) -> None:
        archive = pd.concat(self.archive, ignore_index=True) if self.archive else None
        with atomic_path(self.run / ARCHIVE) as tmp:
            (archive if archive is not None else pd.DataFrame()).to_parquet(tmp, index=False)
        write_json(
            self.run / SEARCH,
            {**self.about, "stop": stop, "generations": len(self.stats) - 1, "stats": self.stats},
        )


def run_search(
    config: SearchConfig,
    out: str | Path,
    log: Log = lambda message: None,
    executor: Executor | None = None,
    clock: Callable[[], float] = time.process_time,
) -> Path:
    """Run (or resume) a search in `out`, then its analysis; returns the run directory, which
    `report.write_search_report` reports.

    Raises:
        ConfigError, RunDirError, TaskContractError: bad input, found before anything is
            written.
    """
    searched = config.checked()  # before the run directory is made
    config = config.absolute()  # for workers elsewhere
    task = searched.a.task
    run = open_run(out, STUDY.kind, config)
    base_split = config.base_split or task.validation_split
    about = {
        "task": task_name(task), "task_options": task.options(),
        "members": searched.members, "runs": searched.runs(), "base_split": base_split,
    }  # fmt: skip
    sides = {"A": searched.a, "B": searched.b}
    trained = {
        TRAINED_ON[name]: frozenset(input_keys(inputs))
        for name, side in sides.items()
        if side is not None and (inputs := training_inputs(side.model, task)) is not None
    }
    target = searched.target(config.target)
    with executor or LocalExecutor() as runner:
        search = Search(
            config, task, run, GenerationTask(config, target, config.target_texts()), runner,
            task.generate(base_split, config.base_size, searched.a.data_seed).src, about,
            trained=trained,
        )  # fmt: skip
        evolve(
            search, range(config.generations + 1), config.archive_size,
            Budget(config.minutes, clock), log,
        )  # fmt: skip
    analyse(run, task, target, config.tag_limit)
    return run
