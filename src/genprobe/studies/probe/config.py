"""What a probe run is: the model under test (a finished sweep), the task it is probed on, the
inputs perturbed (a split, how many, from which data seed), the families and relations, and
the k of Fail@k.

Example:
    ProbeConfig("run:runs/scan", families=("add_modifier",), k=5).validated()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from genprobe.errors import ConfigError
from genprobe.models.registry import check_spec
from genprobe.runs.config import identity_fields
from genprobe.tasks.probing import chosen
from genprobe.tasks.registry import load_task
from genprobe.tasks.task import Task

MAX_K = 64


@dataclass(frozen=True)
class ProbeConfig:
    """A `genprobe.runs.config.RunConfig`; `run_probe` validates it."""

    RUNTIME: ClassVar[tuple[str, ...]] = ("device", "workers")
    model: str  # run:RUN_DIR, or an integration model (ckpt:, lc:, sympy, ...) for integration
    task: str = ""  # the task's name ("": the model's own)
    task_options: tuple[tuple[str, Any], ...] = ()
    families: tuple[str, ...] | None = None  # None: every family the task declares
    relations: tuple[str, ...] | None = None  # None: every relation it declares
    task_suites: bool = True  # also the task's own shifted suites (`Task.suites()`)
    base_split: str = ""  # the inputs perturbed ("": the task's validation split)
    size: int = 200  # inputs per suite
    data_seed: int = 0
    seed: int = 0  # the perturbations' random draws
    k: int = 1  # candidates per input: 1 greedy, more by beam search of width k
    device: str = "cpu"
    workers: int = 1

    def load_task(self) -> Task:
        return load_task(self.task, dict(self.task_options))

    def base(self, task: Task) -> str:
        return self.base_split or task.validation_split

    def validated(self) -> ProbeConfig:
        check_spec(self.model)
        task = self.load_task()
        task.split_spec(self.base(task))
        chosen(task.families(), _listed(self.families), "--families")
        chosen(task.relations(), _listed(self.relations), "--relations")
        if self.size < 1:
            raise ConfigError("--size", "at least 1", self.size)
        if not 1 <= self.k <= MAX_K:
            raise ConfigError("--k", f"1 to {MAX_K}", self.k)
        if self.workers < 1:
            raise ConfigError("--workers", "at least 1", self.workers)
        return self

    def identity(self) -> dict[str, Any]:
        identity = identity_fields(self)
        identity["task_options"] = dict(self.task_options)
        for name in ("families", "relations"):
            identity[name] = identity[name] and list(identity[name])
        return identity

    @classmethod
    def from_identity(cls, identity: dict[str, Any]) -> ProbeConfig:
        fields = dict(identity)
        fields["task_options"] = tuple(sorted(fields["task_options"].items()))
        for name in ("families", "relations"):
            fields[name] = fields[name] and tuple(fields[name])
        return cls(**fields)


def _listed(names: tuple[str, ...] | None) -> list[str] | None:
    return None if names is None else list(names)
