"""Solve equation: the value of x modulo 5 in a bracketed equation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask
from genprobe.tasks.chomsky.dcf.modular_arithmetic_brackets import MODULUS, evaluate, expression
from genprobe.tasks.task import NO_ANSWER


@dataclass(frozen=True)
class SolveEquation(LengthTask):
    """A bracketed expression of + and - (no *, so that x has one solution) with one digit
    replaced by x, then `=` and its value; the answer is x. Drawn as NNCH draws it: an
    expression of length L - 2, then from a random position the next digit becomes x. Inputs
    shorter than 3 are all zeros with answer 0, as in NNCH.

    Examples:
        ( x + 3 ) = 1      -> 3
        ( ( 2 - x ) + 4 ) = 0  -> 1
    """

    input_tokens = (*(str(d) for d in range(MODULUS)), "+", "-", "(", ")", "x", "=")
    output_tokens = tuple(str(d) for d in range(MODULUS))

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        if length < 3:
            return np.zeros((n, length), dtype=np.int64)
        index = {token: i for i, token in enumerate(self.input_tokens)}
        rows = []
        for _ in range(n):
            text, value = expression(rng, length - 2, mult=False)
            at = int(rng.integers(0, len(text)))
            while not text[at].isdigit():
                at = (at + 1) % (length - 2)
            rows.append([index[c] for c in f"{text[:at]}x{text[at + 1 :]}={value}"])
        return np.array(rows, dtype=np.int64)

    def answer(self, x: np.ndarray) -> np.ndarray:
        return np.array([[self._solution(row)] for row in x.tolist()], dtype=np.int64)

    def answer_length(self, length: int) -> int:
        return 1

    def _solution(self, row: list[int]) -> int:
        """The value of x that makes the equation hold; 0 for NNCH's all-zero short inputs,
        NO_ANSWER for anything else without one."""
        text = "".join(self.input_tokens[i] for i in row)
        if set(text) == {"0"} and len(text) < 3:
            return 0
        left, equals, right = text.partition("=")
        if not equals or left.count("x") != 1 or right not in self.output_tokens:
            return NO_ANSWER
        for value in range(MODULUS):
            if evaluate(left.replace("x", str(value)), mult=False) == int(right):
                return value
        return NO_ANSWER
