"""What a failure search is: the finished sweep it probes, the target, and the search's sizes.
Its identity, hashed into the run directory, holds the sweep's config hash too (a sweep
retrained into the same directory is another model); the CPU-time budget, the worker threads
and the device are runtime fields, left out of it.

Example:
    SearchConfig("run:runs/parity", target="disagree:1,2", generations=20).checked()
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from genprobe.errors import ConfigError, RunDirError
from genprobe.runs.config import identity_fields
from genprobe.runs.shards import ShardStore
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.members import member_path
from genprobe.studies.seed_sensitivity.results import read_config_hash, read_sweep
from genprobe.studies.seed_sensitivity.study import TRAIN
from genprobe.tasks.task import Task

TARGETS = "most, any or disagree:SEED_A,SEED_B"


@dataclass(frozen=True)
class SearchConfig:
    """A `genprobe.runs.config.RunConfig`; `checked` validates it against its sweep."""

    RUNTIME: ClassVar[tuple[str, ...]] = ("minutes", "workers", "device")
    model: str  # run:RUN_DIR, the run directory absolute
    target: str = "most"  # most, any or disagree:A,B (`fitness.py`)
    generations: int = 20  # after generation 0, the base inputs
    population: int = 50  # parents selected per generation
    mutants: int = 4  # mutants made of each parent
    archive_size: int = 1000
    tau: float = 0.5  # the fitness an input needs to be archived
    base_split: str | None = None  # None: the task's validation split
    base_size: int = 200
    seed: int = 0
    minutes: float | None = None  # CPU minutes of this process (time.process_time)
    workers: int | None = None  # torch threads of the decoding (None: torch's default)
    device: str = "cpu"

    @property
    def run(self) -> Path:
        return Path(self.model.partition(":")[2])

    def sweep(self) -> SweepConfig:
        """The sweep's config.

        Raises:
            ConfigError: the model is not run:RUN_DIR.
            RunDirError: not a sweep's run directory, or its training has not finished.
        """
        kind, colon, path = self.model.partition(":")
        if kind != "run" or not colon or not path:
            raise ConfigError("--model", "run:RUN_DIR (a finished sweep)", self.model)
        sweep = read_sweep(path)
        trained = set(ShardStore(path).outputs(TRAIN, ".pt"))
        missing = [s for s in sweep.seeds if Path(path) / member_path(s) not in trained]
        if missing:
            raise RunDirError(
                f"{path}: seeds {', '.join(map(str, missing))} have not finished training: "
                "run the sweep to finish it"
            )
        return sweep

    def checked(self, task: Task | None = None) -> SweepConfig:
        """Every field checked, against the sweep too (its seeds, its task, which must say
        which inputs are valid); returns the sweep's config. `task`: the one asked for, which
        must be the run's own.

        Raises:
            ConfigError, RunDirError, TaskContractError: what is wrong, in one line.
        """
        for name, value in (
            ("--generations", self.generations), ("--population", self.population),
            ("--mutants", self.mutants), ("--archive-size", self.archive_size),
            ("--base-size", self.base_size),
        ):  # fmt: skip
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        if not 0 < self.tau <= 1:
            raise ConfigError("--tau", "a fitness in (0, 1]", self.tau)
        if self.minutes is not None and not self.minutes > 0:
            raise ConfigError("--minutes", "positive minutes", self.minutes)
        if self.workers is not None and self.workers < 1:
            raise ConfigError("--workers", "at least 1", self.workers)
        sweep = self.sweep()
        if task is not None and task != sweep.task:
            raise ConfigError("--task", f"the run's own task ({sweep.task!r}) or left out", task)
        members(self.target, sweep.seeds)
        sweep.task.split_spec(self.base_split or sweep.task.validation_split)
        one = sweep.task.generate(sweep.task.validation_split, 1, sweep.data_seed)
        sweep.task.valid_inputs(one.src)  # raises if the task does not say
        return sweep

    def identity(self) -> dict[str, Any]:
        identity = identity_fields(self)
        identity["model"] = f"run:{self.run.absolute()}"
        identity["sweep_hash"] = read_config_hash(self.run)
        return identity

    @classmethod
    def from_identity(cls, identity: dict[str, Any]) -> SearchConfig:
        return cls(**{k: v for k, v in identity.items() if k != "sweep_hash"})


def members(target: str, seeds: tuple[int, ...]) -> tuple[int, int] | None:
    """The member positions (seed A, seed B) of a disagree target; None for most and any.

    Raises:
        ConfigError: an unknown target, or a seed the sweep does not have.
    """
    if target in ("most", "any"):
        return None
    kind, colon, pair = target.partition(":")
    parts = pair.split(",")
    if kind != "disagree" or not colon or len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ConfigError("--target", TARGETS, target)
    a, b = (int(p) for p in parts)
    if a == b or a not in seeds or b not in seeds:
        have = ", ".join(map(str, seeds))
        raise ConfigError("--target", f"disagree between two of the run's seeds ({have})", target)
    return seeds.index(a), seeds.index(b)
