"""The suites of a probe run, built before any model runs: the base inputs (a split of the
task), each family's perturbation of them, each relation's partners of them, and the task's own
shifted suites. A perturbed input keeps the row of the base input it was made from (`origin`),
so a report can pair the two; an input the task does not accept is counted, never decoded.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from genprobe.studies.probe.config import ProbeConfig
from genprobe.tasks.probing import chosen
from genprobe.tasks.task import Task, trim

BASE = "base"
KINDS = ("base", "family", "relation", "task")


@dataclass(frozen=True)
class Suite:
    kind: str  # one of KINDS
    name: str  # the family's, relation's or task suite's name; "base"
    src: np.ndarray  # (n, L) input ids
    origin: np.ndarray  # (n,) the base row each input was made from; -1 for base and task
    invalid: int = 0  # perturbed inputs the task refused (not in src)

    @property
    def key(self) -> str:
        """Its name among the run's suites (shard key and file name)."""
        return self.name if self.kind == BASE else f"{self.kind}-{self.name}"


def build_suites(config: ProbeConfig, task: Task) -> list[Suite]:
    """Every suite of the run, in report order.

    Raises:
        ConfigError: a family, relation or split the task does not have.
    """
    base = _split(task, config.base(task), config)
    suites = [Suite(BASE, BASE, base, np.arange(len(base)))]
    declared = (("family", task.families(), config.families, "--families"),
                ("relation", task.relations(), config.relations, "--relations"))  # fmt: skip
    for kind, table, names, option in declared:
        for name in chosen(table, None if names is None else list(names), option):
            rng = np.random.default_rng([config.seed, zlib.crc32(f"{kind}:{name}".encode())])
            moved = getattr(table[name], "perturb" if kind == "family" else "partner")(base, rng)
            valid = task.valid_inputs(moved.src) if len(moved) else np.zeros(0, bool)
            src = trim(moved.src[valid], 0)
            suites.append(Suite(kind, name, src, moved.origin[valid], int((~valid).sum())))
    if config.task_suites:
        for name in task.suites():
            src = _split(task, name, config)
            suites.append(Suite("task", name, src, np.full(len(src), -1)))
    return suites


def _split(task: Task, split: str, config: ProbeConfig) -> np.ndarray:
    spec = task.split_spec(split)
    n = min(config.size, spec.size) if spec.finite else config.size
    return task.generate(split, n, config.data_seed).src
