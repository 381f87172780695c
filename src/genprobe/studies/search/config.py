"""What a failure search is: the finished sweep it probes (and, with `against`, a second one
it is compared with), the target, and the search's sizes. Its identity, hashed into the run
directory, holds each sweep's config hash too (a sweep retrained into the same directory is
another model); the CPU-time budget, the worker threads and the device are runtime fields, left
out of it.

Example:
    SearchConfig("run:runs/parity", target="disagree:1,2", generations=20).checked()
    SearchConfig("run:runs/parity@1-3", target="disagree", against="run:runs/parity-wide")
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from genprobe.errors import ConfigError, RunDirError
from genprobe.models.registry import run_spec
from genprobe.runs.config import identity_fields, without_added_defaults
from genprobe.studies.seed_sensitivity.as_model import checked_seeds
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.members import unfinished_seeds
from genprobe.studies.seed_sensitivity.results import read_config_hash, read_sweep
from genprobe.tasks.registry import task_name
from genprobe.tasks.task import Task

TARGETS = "most, any or disagree:SEED_A,SEED_B"
AGAINST_TARGETS = "disagree or disagree:SEED_A,SEED_B with --against"
RUN = "run:RUN_DIR or run:RUN_DIR@SEEDS (a finished sweep)"
# settings added after runs existed (`without_added_defaults`)
ADDED_DEFAULTS = {"against": None}


@dataclass(frozen=True)
class SearchConfig:
    """A `genprobe.runs.config.RunConfig`; `checked` validates it against its sweeps."""

    RUNTIME: ClassVar[tuple[str, ...]] = ("minutes", "workers", "device")
    model: str  # run:RUN_DIR[@SEEDS] (run A), the run directory absolute
    target: str = "most"  # most, any or disagree[:A,B] (`Target`)
    generations: int = 20  # after generation 0, the base inputs
    population: int = 50  # parents selected per generation
    mutants: int = 4  # mutants made of each parent
    archive_size: int = 1000
    tau: float = 0.5  # the fitness an input needs to be archived
    base_split: str | None = None  # None: the task's validation split
    base_size: int = 200
    seed: int = 0
    against: str | None = None  # run:RUN_DIR[@SEEDS] (run B) of the same task, or None
    minutes: float | None = None  # CPU minutes of this process (time.process_time)
    workers: int | None = None  # torch threads of the decoding (None: torch's default)
    device: str = "cpu"

    def searched(self) -> Searched:
        """The sweeps and seeds searched: run A (`model`) and run B (`against`, if given).

        Raises:
            ConfigError: a model that is not run:RUN_DIR[@SEEDS], seeds the sweep does not
                have, or an `against` sweep of another task.
            RunDirError: not a sweep's run directory, or its training has not finished.
        """
        a = Side.of(self.model, "--model")
        b = None if self.against is None else Side.of(self.against, "--against")
        if b is not None and b.sweep.task != a.sweep.task:
            raise ConfigError("--against", f"a sweep of the same task ({a.task})", b.task)
        return Searched(a, b)

    def checked(self, task: Task | None = None) -> Searched:
        """Every field checked, against the sweeps too (their seeds, their task, which must
        say which inputs are valid); returns what is searched. `task`: the one asked for,
        which must be the run's own.

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
        searched = self.searched()
        sweep = searched.a.sweep
        if task is not None and task != sweep.task:
            raise ConfigError("--task", f"the run's own task ({sweep.task!r}) or left out", task)
        searched.target(self.target)
        sweep.task.split_spec(self.base_split or sweep.task.validation_split)
        one = sweep.task.generate(sweep.task.validation_split, 1, sweep.data_seed)
        sweep.task.valid_inputs(one.src)  # raises if the task does not say
        return searched

    def absolute(self) -> SearchConfig:
        """The same config with its run directories absolute (for workers elsewhere)."""
        against = None if self.against is None else absolute_spec(self.against)
        return replace(self, model=absolute_spec(self.model), against=against)

    def identity(self) -> dict[str, Any]:
        identity = identity_fields(self.absolute())
        identity["sweep_hash"] = read_config_hash(run_spec(self.model.partition(":")[2])[0])
        if self.against is not None:
            against = run_spec(self.against.partition(":")[2])[0]
            identity["against_hash"] = read_config_hash(against)
        return without_added_defaults(identity, ADDED_DEFAULTS)

    @classmethod
    def from_identity(cls, identity: dict[str, Any]) -> SearchConfig:
        hashes = ("sweep_hash", "against_hash")
        return cls(**{k: v for k, v in identity.items() if k not in hashes})


def absolute_spec(spec: str) -> str:
    """run:RUN_DIR[@SEEDS] with the directory absolute and the seeds listed one by one."""
    path, seeds = run_spec(spec.partition(":")[2])
    chosen = "" if seeds is None else "@" + ",".join(map(str, seeds))
    return f"run:{Path(path).absolute()}{chosen}"


@dataclass(frozen=True)
class Side:
    """A finished sweep under search and the seeds of it chosen."""

    run: Path
    sweep: SweepConfig
    seeds: tuple[int, ...]

    @property
    def task(self) -> str:
        options = "".join(f" {k}={v}" for k, v in self.sweep.task.options().items())
        return f"{task_name(self.sweep.task)}{options}"

    @classmethod
    def of(cls, spec: str, option: str) -> Side:
        """Raises ConfigError or RunDirError (see `SearchConfig.searched`)."""
        kind, colon, argument = spec.partition(":")
        if kind != "run" or not colon or not argument:
            raise ConfigError(option, RUN, spec)
        try:
            path, chosen = run_spec(argument)
        except ConfigError as error:
            raise ConfigError(option, error.expected, error.got) from None
        sweep = read_sweep(path)
        unfinished = unfinished_seeds(path)
        if unfinished:
            raise RunDirError(
                f"{path}: seeds {', '.join(map(str, unfinished))} have not finished training: "
                "run the sweep to finish it"
            )
        if chosen is None:
            return cls(Path(path), sweep, sweep.seeds)
        return cls(Path(path), sweep, checked_seeds(sweep, chosen, option))


@dataclass(frozen=True)
class Target:
    """An input's fitness (`generation.fitness`): `most`, the share of members failing it;
    `any`, 1 if one fails it; `disagree`, the share of members `right` that get it right less
    the share of members `wrong` that do, or 0 if that is negative (for one member each: 1 if
    the first is right and the second is not)."""

    how: str
    right: tuple[int, ...] = ()  # member positions
    wrong: tuple[int, ...] = ()


@dataclass(frozen=True)
class Searched:
    """Run A's seeds, and run B's after them (`against`): the members, in this order."""

    a: Side
    b: Side | None = None

    def runs(self) -> dict[str, dict[str, Any]]:
        """Each run by name (A, and B with `against`) as search.json records it: its directory
        and its members' labels (`seed=3`, or with two runs `A:seed=3` and `B:seed=3`)."""
        sides = {"A": self.a} if self.b is None else {"A": self.a, "B": self.b}
        prefix = (lambda name: "") if self.b is None else (lambda name: f"{name}:")
        return {
            name: {
                "run": str(side.run.absolute()),
                "members": [f"{prefix(name)}seed={seed}" for seed in side.seeds],
            }
            for name, side in sides.items()
        }

    @property
    def members(self) -> list[str]:
        """Every member's label, run A's first."""
        return [label for run in self.runs().values() for label in run["members"]]

    def target(self, target: str) -> Target:
        """Raises ConfigError: an unknown target, one that needs --against or does not take
        it, or a seed the run does not have."""
        two, other = self.b is not None, self.b or self.a
        if target in ("most", "any") and not two:
            return Target(target)
        offset = len(self.a.seeds) if two else 0  # where run B's members start
        if target == "disagree" and two:
            everyone = range(offset + len(other.seeds))
            return Target("disagree", tuple(everyone[:offset]), tuple(everyone[offset:]))
        kind, colon, pair = target.partition(":")
        parts = pair.split(",")
        if (
            kind != "disagree"
            or not colon
            or len(parts) != 2
            or not all(p.isdigit() for p in parts)
        ):
            raise ConfigError("--target", AGAINST_TARGETS if two else TARGETS, target)
        a, b = (int(p) for p in parts)
        if a not in self.a.seeds or b not in other.seeds or (a == b and not two):
            said = (
                f"a seed of the run ({_listed(self.a)}), then one of --against's ({_listed(other)})"
                if two
                else f"disagree between two of the run's seeds ({_listed(self.a)})"
            )
            raise ConfigError("--target", said, target)
        return Target("disagree", (self.a.seeds.index(a),), (offset + other.seeds.index(b),))


def _listed(side: Side) -> str:
    return ", ".join(map(str, side.seeds))
