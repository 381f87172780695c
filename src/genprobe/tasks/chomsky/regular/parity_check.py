"""Parity check: whether a binary string holds an even number of ones."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask


@dataclass(frozen=True)
class ParityCheck(LengthTask):
    """The number of ones of a binary string, modulo 2.

    Examples:
        1 0 1 0 1 0 0  -> 1   (three ones)
        0 1 1 1 1      -> 0   (four ones)
    """

    input_tokens = ("0", "1")
    output_tokens = ("0", "1")

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        return rng.integers(0, 2, size=(n, length))

    def answer(self, x: np.ndarray) -> np.ndarray:
        return (x.sum(axis=1) % 2)[:, None]

    def answer_length(self, length: int) -> int:
        return 1
