"""Even pairs: whether a binary string holds an even number of `01` and `10` pairs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask


@dataclass(frozen=True)
class EvenPairs(LengthTask):
    """Whether the unequal neighbours (01 and 10) of a binary string are even in number: 0 if
    they are, else 1 (equivalently: whether the first and last bit differ).

    Examples:
        0 0 1 1 1 0    -> 0   (one 01, one 10)
        0 1 0 1 0 0 1  -> 1   (three 01, two 10)
    """

    input_tokens = ("0", "1")
    output_tokens = ("0", "1")

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        return rng.integers(0, 2, size=(n, length))

    def answer(self, x: np.ndarray) -> np.ndarray:
        return (np.not_equal(x[:, :-1], x[:, 1:]).sum(axis=1) % 2)[:, None]

    def answer_length(self, length: int) -> int:
        return 1
