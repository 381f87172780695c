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
from genprobe.models.adapters.prompted import PromptGrid
from genprobe.models.registry import check_spec
from genprobe.runs.config import identity_fields, without_added_defaults
from genprobe.tasks.probing import chosen
from genprobe.tasks.registry import load_task
from genprobe.tasks.task import Task

MAX_K = 64
# settings added after runs existed (`without_added_defaults`)
ADDED_DEFAULTS = {"formats": 1, "shots": 0, "shot_draws": 1, "samples": 0, "prompt_seed": 0}


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
    # a language model's members (`models.adapters.prompted.PromptGrid`)
    formats: int = 1
    shots: int = 0
    shot_draws: int = 1
    samples: int = 0
    prompt_seed: int = 0
    device: str = "cpu"
    workers: int = 1

    def load_task(self) -> Task:
        return load_task(self.task, dict(self.task_options))

    def base(self, task: Task) -> str:
        return self.base_split or task.validation_split

    def prompts(self) -> PromptGrid:
        return PromptGrid(self.formats, self.shots, self.shot_draws, self.samples, self.prompt_seed)

    def validated(self) -> ProbeConfig:
        kind = check_spec(self.model)
        grid = self.prompts()
        if "prompts" not in kind.settings and grid != PromptGrid():
            raise ConfigError(
                "--formats/--shots/--shot-draws/--samples/--prompt-seed",
                "left out for a model that is not a language model (hf:, openai:)", self.model
            )  # fmt: skip
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
        return without_added_defaults(identity, ADDED_DEFAULTS)

    @classmethod
    def from_identity(cls, identity: dict[str, Any]) -> ProbeConfig:
        fields = {**ADDED_DEFAULTS, **identity}
        fields["task_options"] = tuple(sorted(fields["task_options"].items()))
        for name in ("families", "relations"):
            fields[name] = fields[name] and tuple(fields[name])
        return cls(**fields)


def _listed(names: tuple[str, ...] | None) -> list[str] | None:
    return None if names is None else list(names)
