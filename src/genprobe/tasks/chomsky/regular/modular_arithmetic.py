"""Modular arithmetic: the value modulo 5 of `+ - *` expressions without brackets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask
from genprobe.tasks.task import NO_ANSWER

MODULUS = 5
OPERATORS = ("+", "-", "*")


@dataclass(frozen=True)
class ModularArithmetic(LengthTask):
    """An expression of digits 0-4 and the operators + - * (multiplication first), reduced
    modulo 5. Inputs have odd lengths: a split of even length L holds inputs of length L - 1,
    as in NNCH.

    Examples:
        1 + 2 * 3          -> 2
        1 - 1 - 1          -> 4
        0 * 1 + 4 * 3 - 2  -> 0
    """

    input_tokens = (*(str(d) for d in range(MODULUS)), *OPERATORS)
    output_tokens = tuple(str(d) for d in range(MODULUS))

    def input_length(self, length: int) -> int:
        return length if length % 2 else length - 1

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        odd = self.input_length(length)
        x = np.zeros((n, odd), dtype=np.int64)
        x[:, ::2] = rng.integers(0, MODULUS, size=(n, (odd + 1) // 2))
        x[:, 1::2] = MODULUS + rng.integers(0, len(OPERATORS), size=(n, odd // 2))
        return x

    def answer(self, x: np.ndarray) -> np.ndarray:
        return np.array([[_value(row)] for row in x], dtype=np.int64)

    def answer_length(self, length: int) -> int:
        return 1


def _value(expression: np.ndarray) -> int:
    """Digits at even positions, operators between them; * binds before + and -. NO_ANSWER
    for anything else."""
    digits, operators = expression[::2], expression[1::2]
    if len(expression) % 2 == 0 or (digits >= MODULUS).any() or (operators < MODULUS).any():
        return NO_ANSWER
    total, term = 0, int(digits[0])
    for op, digit in zip(operators, digits[1:], strict=True):
        symbol = OPERATORS[op - MODULUS]
        if symbol == "*":
            term *= int(digit)
        else:
            total += term
            term = int(digit) if symbol == "+" else -int(digit)
    return (total + term) % MODULUS
