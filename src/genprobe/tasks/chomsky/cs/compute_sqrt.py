"""Compute sqrt: the floor of the square root of a binary number."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask
from genprobe.tasks.task import NO_ANSWER


@dataclass(frozen=True)
class ComputeSqrt(LengthTask):
    """A non-zero binary number of L bits, most significant first (leading zeros allowed);
    the floor of its square root in ceil(L / 2) bits, most significant first.

    Examples:
        1 0 0 1 0 1  -> 1 1 0   (37: 6)
        1 1 1        -> 1 0     (7: 2)
    """

    input_tokens = ("0", "1")
    output_tokens = ("0", "1")

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        bits = rng.integers(0, 2, size=(n, length))
        zero = ~bits.any(axis=1)
        while zero.any():  # the number is at least 1: draw its bits again
            bits[zero] = rng.integers(0, 2, size=(int(zero.sum()), length))
            zero = ~bits.any(axis=1)
        return bits

    def answer(self, x: np.ndarray) -> np.ndarray:
        """The roots' bits; NO_ANSWER for the number 0, which `sample` never draws."""
        width = self.answer_length(x.shape[1])
        roots = [math.isqrt(int("".join(map(str, row)), 2)) for row in x.tolist()]
        bits = np.array([[int(b) for b in f"{r:0{width}b}"] for r in roots], dtype=np.int64)
        bits = bits.reshape(len(x), width)
        bits[~x.any(axis=1), 0] = NO_ANSWER
        return bits

    def answer_length(self, length: int) -> int:
        return math.ceil(length / 2)
