"""Modular arithmetic with brackets: the value modulo 5 of a fully bracketed expression."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask
from genprobe.tasks.task import NO_ANSWER

MODULUS = 5
SYMBOLS = ("+", "-", "*", "(", ")")


def expression(
    rng: np.random.Generator, length: int, mult: bool, modulus: int = MODULUS
) -> tuple[str, int]:
    """A random bracketed expression of exactly `length` characters and its value, drawn as
    NNCH's `generate_one_expression_and_result`: below 5 characters `d`, `-d`, `(d)` or `(-d)`;
    else `(left op right)` with the left part 1 .. length - 4 characters long.

    Raises:
        ValueError: length < 1.
    """
    if length < 1:
        raise ValueError(f"Can't generate expressions of length < 1. Got {length}.")
    if length < 5:
        digit = int(rng.integers(0, modulus))
        text = ("{}", "-{}", "({})", "(-{})")[length - 1].format(digit)
        return text, (-digit if "-" in text else digit) % modulus
    left_length = int(rng.integers(1, length - 3))
    left, left_value = expression(rng, left_length, mult, modulus)
    right, right_value = expression(rng, length - left_length - 3, mult, modulus)
    op = "+-*"[int(rng.integers(0, 3 if mult else 2))]
    value = {"+": left_value + right_value, "-": left_value - right_value}.get(
        op, left_value * right_value
    )
    return f"({left}{op}{right})", value % modulus


def evaluate(text: str, mult: bool = True, modulus: int = MODULUS) -> int | None:
    """The value modulo `modulus` of an expression `expression` can draw (`d`, `-d`, `(d)`,
    `(-d)` or `(left op right)`, op one of + - and, with `mult`, *); None for any other text."""
    position = 0

    def term() -> tuple[int, bool] | None:
        """The value of the term from `position` on, and whether it is a digit or `-d`."""
        nonlocal position
        char = text[position : position + 1]
        position += 1
        if char == "-":
            char = text[position : position + 1]
            position += 1
            return (-int(char), True) if char.isdigit() and int(char) < modulus else None
        if char.isdigit():
            return (int(char), True) if int(char) < modulus else None
        if char != "(":
            return None
        left = term()
        if left is None or position >= len(text):
            return None
        op = text[position]
        position += 1
        if op == ")":
            return (left[0], False) if left[1] else None
        if op not in ("+-*" if mult else "+-"):
            return None
        right = term()
        if right is None or text[position : position + 1] != ")":
            return None
        position += 1
        value = {"+": left[0] + right[0], "-": left[0] - right[0]}.get(op, left[0] * right[0])
        return value, False

    value = term()
    return None if value is None or position != len(text) else value[0] % modulus


@dataclass(frozen=True)
class ModularArithmeticBrackets(LengthTask):
    """A fully bracketed expression of digits 0-4 with + and - (and *, `mult`: NNCH's
    released configuration registers the task with it, which this follows), reduced modulo 5.

    Examples:
        ( ( 2 + 3 ) * - 4 )   -> 0
        ( - 1 - 3 )           -> 1
    """

    mult: bool = True

    input_tokens = (*(str(d) for d in range(MODULUS)), *SYMBOLS)
    output_tokens = tuple(str(d) for d in range(MODULUS))

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        index = {token: i for i, token in enumerate(self.input_tokens)}
        texts = [expression(rng, length, self.mult)[0] for _ in range(n)]
        return np.array([[index[c] for c in text] for text in texts], dtype=np.int64)

    def answer(self, x: np.ndarray) -> np.ndarray:
        texts = ("".join(self.input_tokens[i] for i in row) for row in x.tolist())
        values = (evaluate(text, self.mult) for text in texts)
        return np.array([[NO_ANSWER if v is None else v] for v in values], dtype=np.int64)

    def answer_length(self, length: int) -> int:
        return 1
