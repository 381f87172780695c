"""Reverse string: a binary string backwards."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask


@dataclass(frozen=True)
class ReverseString(LengthTask):
    """The input string read backwards (binary, as in the paper).

    Examples:
        0 1 1 0 1 0  -> 0 1 0 1 1 0
        1 1 1 0      -> 0 1 1 1
    """

    input_tokens = ("0", "1")
    output_tokens = ("0", "1")

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        return rng.integers(0, 2, size=(n, length))

    def answer(self, x: np.ndarray) -> np.ndarray:
        return x[:, ::-1]
