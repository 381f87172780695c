"""What the word-problem task declares for the probe studies: GSM-Symbolic's perturbations as
families (the same template with new names and numbers, a NoOp sentence, one more step; the new
gold answer is the task's, read from the perturbed problem), renaming as a relation (the same
numbers give the same answer), and the template, steps and answer digits as features."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from genprobe.tasks.probing import Breakdown, Family, Perturbed, Probes, Relation
from genprobe.tasks.word_problems import TEMPLATE_NAMES, TEMPLATES, Problem, WordProblems

Change = Callable[[Problem, np.random.Generator], Problem | None]


@dataclass(frozen=True)
class WordProblemProbes(Probes):
    task: WordProblems

    def families(self) -> Mapping[str, Family]:
        task = self.task
        return {
            "reinstantiate": Family(
                "the same template (extension and NoOp kept) with new people, thing and numbers",
                lambda src, rng: _changed(task, src, rng, task.redrawn),
            ),
            "noop": Family(
                "an irrelevant sentence with a number added after a statement (GSM-NoOp): the "
                "answer stays; problems that hold one already are left out",
                lambda src, rng: _changed(task, src, rng, task.with_noop),
            ),
            "one_more_step": Family(
                "the template's extension added: one more number and operation; extended "
                "problems are left out",
                lambda src, rng: _changed(task, src, rng, task.with_extension),
            ),
        }

    def relations(self) -> Mapping[str, Relation]:
        task = self.task
        return {
            "rename": Relation(
                "new people and thing, the same numbers: the same answer",
                lambda src, rng: _changed(task, src, rng, lambda p, r: task.redrawn(p, r, False)),
            )
        }

    def breakdown(self) -> Breakdown:
        """The paired drop per template (GSM-Symbolic's question: which templates break)."""
        return Breakdown("template", TEMPLATE_NAMES)

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """The length, the template (its index in TEMPLATES), the steps, the answer's digits,
        and whether the problem is extended or holds a NoOp sentence (-1 or 0 for an input
        that is not the task's)."""
        problems = self.task.parse(src)
        index = {template.name: i for i, template in enumerate(TEMPLATES)}
        rows = [
            (index[p.template.name], p.steps, len(str(p.answer)), p.extended, p.noop is not None)
            if p
            else (-1, 0, 0, 0, 0)
            for p in problems
        ]
        columns = np.array(rows, dtype=np.int64).reshape(len(problems), 5).T
        names = ("template", "steps", "answer digits", "extended", "noop")
        return {"length": self.task.length(src), **dict(zip(names, columns, strict=True))}


def _changed(
    task: WordProblems, src: np.ndarray, rng: np.random.Generator, change: Change
) -> Perturbed:
    """The problems `change` gives for the inputs that are the task's (rows it returns None
    for left out), each with the row it came from."""
    rows, moved = [], []
    for row, problem in enumerate(task.parse(src)):
        if problem is not None and (new := change(problem, rng)) is not None:
            rows.append(row)
            moved.append(new)
    return Perturbed(task.encode(moved), np.array(rows, dtype=np.int64))
