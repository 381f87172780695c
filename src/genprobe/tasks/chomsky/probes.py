"""What the 15 tasks of Delétang et al. (2023) declare for the probe studies: families that
replace each input by a fresh sample a few tokens longer (how far past its lengths a model
holds up, one step at a time)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask
from genprobe.tasks.probing import Family, Perturbed, Probes
from genprobe.tasks.row_edits import trim

LENGTH_STEPS = (1, 5, 20)  # the `longer_by_S` families


@dataclass(frozen=True)
class LengthProbes(Probes):
    task: LengthTask

    def families(self) -> Mapping[str, Family]:
        """`longer_by_S`: each input replaced by a fresh sample at least S tokens longer."""
        return {
            f"longer_by_{step}": Family(
                f"each input replaced by a fresh sample at least {step} tokens longer",
                lambda src, rng, step=step: _longer(self.task, src, rng, step),
            )
            for step in LENGTH_STEPS
        }


def _longer(task: LengthTask, src: np.ndarray, rng: np.random.Generator, step: int) -> Perturbed:
    """Row i: a sample of the shortest length that `sample` draws inputs of at least
    length_i + step tokens for (NNCH's modular arithmetic only draws odd lengths)."""
    length = (np.asarray(src) > 0).sum(axis=1)
    drawn = np.array([_drawn_length(task, int(n) + step) for n in length], dtype=np.int64)
    rows = np.zeros((len(src), task.input_length(int(drawn.max(initial=1)))), dtype=np.int64)
    for value in np.unique(drawn):
        where = np.flatnonzero(drawn == value)
        sampled = task.sample(rng, len(where), int(value))
        rows[where, : sampled.shape[1]] = sampled + 1
    return Perturbed(trim(rows, 0), np.arange(len(src)))


def _drawn_length(task: LengthTask, tokens: int) -> int:
    """The smallest length whose inputs have at least `tokens` tokens."""
    length = tokens
    while task.input_length(length) < tokens:
        length += 1
    return length
