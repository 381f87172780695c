"""The genetic operators of the failure search: which inputs become parents, and their mutants.

    parents(fitness, population, rng)      tournaments of two among every input evaluated so
                                           far: the fitter wins (the earlier one on a tie)
    mutate(task, src, mutants, rng)        each parent `mutants` times, by an operator of the
                                           task's `Probes.mutations()` drawn per mutant; the
                                           mutants a family does not apply to, and those
                                           `valid_inputs` refuses, are counted per operator,
                                           never returned

Both draw only from `rng`, which the search seeds with [seed, generation], so a generation's
mutants are a function of the inputs evaluated before it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from genprobe.tasks.probing import padded
from genprobe.tasks.registry import task_probes
from genprobe.tasks.task import Task

TOURNAMENT = 2


def parents(fitness: np.ndarray, population: int, rng: np.random.Generator) -> np.ndarray:
    """(population,) positions in `fitness`: the winner of each tournament."""
    drawn = rng.integers(len(fitness), size=(population, TOURNAMENT))
    winner = np.argmax(np.asarray(fitness)[drawn], axis=1)  # the first of equals
    return drawn[np.arange(population), winner]


@dataclass
class Mutants:
    src: np.ndarray  # (m, L) the valid mutants, 1-based ids, 0 = padding
    parent: np.ndarray  # (m,) the row of the parents each came from
    operator: list[str]  # (m,) the operator that made each
    # per operator: mutants asked for, not applicable (the family left them out), invalid
    counts: dict[str, Counter[str]] = field(default_factory=dict)


def mutate(task: Task, src: np.ndarray, mutants: int, rng: np.random.Generator) -> Mutants:
    """`mutants` mutants of each row of `src`, those the task's `valid_inputs` accepts."""
    probes = task_probes(task)
    operators = probes.mutations()
    names = list(operators)
    rows = np.repeat(np.arange(len(src)), mutants)
    chosen = rng.integers(len(names), size=len(rows))
    parts, parent, made_by = [], [], []
    counts = {name: Counter({"asked": 0, "not applicable": 0, "invalid": 0}) for name in names}
    for index, name in enumerate(names):
        asked = rows[chosen == index]
        if not len(asked):
            continue
        moved = operators[name].perturb(src[asked], rng)
        valid = probes.valid_inputs(moved.src) if len(moved) else np.zeros(0, bool)
        counts[name].update(
            {"asked": len(asked), "not applicable": len(asked) - len(moved),
             "invalid": int((~valid).sum())}
        )  # fmt: skip
        parts += list(moved.src[valid])
        parent += list(asked[moved.origin[valid]])
        made_by += [name] * int(valid.sum())
    trimmed = [row[row > 0] for row in parts]
    return Mutants(padded(trimmed), np.array(parent, dtype=np.int64), made_by, counts)
