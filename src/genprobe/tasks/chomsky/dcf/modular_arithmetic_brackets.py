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


def evaluate(text: str, modulus: int = MODULUS) -> int | None:
    """The value of a bracketed expression modulo `modulus`; None if it is not one. Inside a
    bracket, operators apply left to right (the expressions drawn here have one per bracket)."""
    position = 0

    def operand() -> int | None:
        nonlocal position
        if position >= len(text):
            return None
        char = text[position]
        position += 1
        if char == "-":
            value = operand()
            return None if value is None else -value
        if char == "(":
            value = chain()
            if value is None or position >= len(text) or text[position] != ")":
                return None
            position += 1
            return value
        return int(char) if char.isdigit() and int(char) < modulus else None

    def chain() -> int | None:
        nonlocal position
        value = operand()
        while value is not None and position < len(text) and text[position] in "+-*":
            op = text[position]
            position += 1
            right = operand()
            if right is None:
                return None
            value = value + right if op == "+" else value - right if op == "-" else value * right
        return value

    value = chain()
    return None if value is None or position != len(text) else value % modulus


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
        values = (evaluate(text) for text in texts)
        return np.array([[NO_ANSWER if v is None else v] for v in values], dtype=np.int64)

    def answer_length(self, length: int) -> int:
        return 1
