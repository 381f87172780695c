"""Cycle navigation: where a walk of steps -1, 0, +1 on a cycle of 5 states ends."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask

CYCLE = 5


@dataclass(frozen=True)
class CycleNavigation(LengthTask):
    """The final state of a walk that starts at state 0 of a cycle of 5 states, each input a
    step left (-1), none (0) or right (+1).

    Examples:
        +1 -1 0 -1 -1  -> 3   (-2 modulo 5)
        +1 +1 +1 -1    -> 2
    """

    input_tokens = ("-1", "0", "+1")
    output_tokens = tuple(str(state) for state in range(CYCLE))

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        return rng.integers(0, 3, size=(n, length))

    def answer(self, x: np.ndarray) -> np.ndarray:
        return ((x - 1).sum(axis=1) % CYCLE)[:, None]

    def answer_length(self, length: int) -> int:
        return 1
