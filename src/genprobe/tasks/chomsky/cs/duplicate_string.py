"""Duplicate string: a binary string written twice."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask


@dataclass(frozen=True)
class DuplicateString(LengthTask):
    """The input string twice, without a separator (binary, as in the paper).

    Examples:
        1 0 1     -> 1 0 1 1 0 1
        1 1 1 1   -> 1 1 1 1 1 1 1 1
    """

    input_tokens = ("0", "1")
    output_tokens = ("0", "1")

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        return rng.integers(0, 2, size=(n, length))

    def answer(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x, x], axis=1)

    def answer_length(self, length: int) -> int:
        return 2 * length
