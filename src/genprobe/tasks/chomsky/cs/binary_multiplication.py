"""Binary multiplication: the product of two binary numbers, least significant bit first."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask
from genprobe.tasks.chomsky.cs.binary_addition import little_endian, numbers, operands
from genprobe.tasks.task import NO_ANSWER


@dataclass(frozen=True)
class BinaryMultiplication(LengthTask):
    """Two binary numbers, least significant bit first, around `*`; their product in the same
    notation, without trailing zeros. Inputs shorter than 3 are one number and, as NNCH sets
    them, have a fixed answer: empty for length 1, `0` for length 2.

    Examples:
        0 0 1 * 0 1 1 0 1      -> 0 0 0 1 1 0 1       (4 * 22 = 88)
        1 0 0 1 * 0 0 0 0 0 1  -> 0 0 0 0 0 1 0 0 1   (9 * 32 = 288)
    """

    input_tokens = ("0", "1", "*")
    output_tokens = ("0", "1")

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        return operands(rng, n, length)

    def answer(self, x: np.ndarray) -> np.ndarray:
        out = np.full((len(x), x.shape[1]), -1, dtype=np.int64)
        for row, tokens in enumerate(x.tolist()):
            parts = numbers(tokens)
            if len(parts) == 1:
                bits = [0] * (len(tokens) - 1)
            else:
                bits = little_endian(parts[0] * parts[1]) if len(parts) == 2 else [NO_ANSWER]
            out[row, : len(bits)] = bits
        return out
