"""Odds first: the string's odd positions, then its even positions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask


@dataclass(frozen=True)
class OddsFirst(LengthTask):
    """s1 s3 s5 … then s2 s4 s6 … (1-based positions), binary as in the paper. This is the
    paper's definition and that of NNCH's docstring; NNCH's code puts s2 s4 … first (0-based
    odd indices), the mirror image of the same task.

    Examples:
        0 0 1 1 0 1 0 1  -> 0 1 0 0 0 1 1 1
        1 1 0            -> 1 0 1
    """

    input_tokens = ("0", "1")
    output_tokens = ("0", "1")

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        return rng.integers(0, 2, size=(n, length))

    def answer(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x[:, ::2], x[:, 1::2]], axis=1)
