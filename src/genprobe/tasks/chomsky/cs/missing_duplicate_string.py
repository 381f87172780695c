"""Missing duplicate string: the bit hidden in a string written twice."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask
from genprobe.tasks.task import NO_ANSWER

BLANK, PAD = 2, 3  # input tokens: the hidden bit's place, and the filler of odd lengths


@dataclass(frozen=True)
class MissingDuplicateString(LengthTask):
    """A binary string of length L // 2 written twice with one bit replaced by `_`, followed by
    `.` when L is odd; the answer is the hidden bit. NNCH sets the input of length 1 to `1`
    and its answer to 1.

    Examples:
        0 1 1 0 0 _ 1 0    -> 1   (the string is 0110)
        1 0 1 _ 0 1 .      -> 1   (the string is 101)
    """

    input_tokens = ("0", "1", "_", ".")
    output_tokens = ("0", "1")

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        if length == 1:
            return np.ones((n, 1), dtype=np.int64)
        half = rng.integers(0, 2, size=(n, length // 2))
        x = np.concatenate([half, half, np.full((n, length % 2), PAD)], axis=1)
        x[np.arange(n), rng.integers(0, 2 * (length // 2), size=n)] = BLANK
        return x

    def answer(self, x: np.ndarray) -> np.ndarray:
        """The hidden bit; NO_ANSWER unless the input is as `sample` draws it: a string twice
        with one `_`, then `.` for an odd length (NNCH's `1` for length 1)."""
        if x.shape[1] == 1:  # NNCH's input `1`
            return np.where(x == 1, 1, NO_ANSWER)
        half = x.shape[1] // 2
        first, second, tail = x[:, :half], x[:, half : 2 * half], x[:, 2 * half :]
        blank = np.argmax(x == BLANK, axis=1)
        twin = np.where(blank < half, blank + half, blank - half)
        hidden = x[np.arange(len(x)), twin]
        drawn = ((x == BLANK).sum(axis=1) == 1) & (tail == PAD).all(axis=1)
        drawn &= ((first == second) | (first == BLANK) | (second == BLANK)).all(axis=1)
        drawn &= ~((first == PAD) | (second == PAD)).any(axis=1)
        return np.where(drawn, hidden, NO_ANSWER)[:, None]

    def answer_length(self, length: int) -> int:
        return 1
