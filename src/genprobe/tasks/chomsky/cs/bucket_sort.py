"""Bucket sort: the tokens of a string over a 5-letter alphabet, in increasing order."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask

ALPHABET = 5


@dataclass(frozen=True)
class BucketSort(LengthTask):
    """The input's tokens (0-4) sorted in increasing order.

    Examples:
        1 0 2 0 4 1 1 2  -> 0 0 1 1 1 2 2 4
        3 3 0            -> 0 3 3
    """

    input_tokens = tuple(str(t) for t in range(ALPHABET))
    output_tokens = input_tokens

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        return rng.integers(0, ALPHABET, size=(n, length))

    def answer(self, x: np.ndarray) -> np.ndarray:
        return np.sort(x, axis=1)
