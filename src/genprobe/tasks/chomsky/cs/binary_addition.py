"""Binary addition: the sum of two binary numbers, least significant bit first."""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask
from genprobe.tasks.task import NO_ANSWER

OPERATOR = 2  # the input token between the two numbers


def operands(rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    """NNCH's inputs of binary addition and multiplication: below length 3, one number of
    `length` bits (not all ones); else two non-zero numbers of 1 .. length - 2 and the rest of
    the bits around the operator (token 2), each little-endian (its trailing bits may be 0)."""
    if length <= 2:
        value = rng.integers(0, 2**length - 1, size=n)
        return (value[:, None] >> np.arange(length)) & 1
    first = rng.integers(1, length - 1, size=n)
    bits = rng.integers(0, 2, size=(n, length))
    position = np.arange(length)
    bits[position == first[:, None]] = OPERATOR
    for side in (position < first[:, None], position > first[:, None]):
        zero = ~(np.where(side, bits, 0).any(axis=1))
        while zero.any():  # a number must not be 0: draw its bits again
            redrawn = rng.integers(0, 2, size=(int(zero.sum()), length))
            bits[zero] = np.where(side[zero], redrawn, bits[zero])
            zero = ~(np.where(side, bits, 0).any(axis=1))
    return bits


def numbers(row: list[int]) -> list[int]:
    """The little-endian numbers of an input row, split at the operator."""
    parts, current = [], []
    for bit in [*row, OPERATOR]:
        if bit == OPERATOR:
            parts.append(sum(b << i for i, b in enumerate(current)))
            current = []
        else:
            current.append(bit)
    return parts


def little_endian(value: int, width: int = 0) -> list[int]:
    """`value`'s bits, least significant first, without trailing zeros (at least `width` of
    them, and 0 as one bit)."""
    bits = [int(b) for b in reversed(f"{value:b}")]
    return bits + [0] * (width - len(bits))


class BinaryOperation(LengthTask):
    """Two binary numbers, least significant bit first, around an operator; `result` says what
    comes out (shared by binary addition and multiplication)."""

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        return operands(rng, n, length)

    def answer(self, x: np.ndarray) -> np.ndarray:
        """The result's bits; NO_ANSWER unless the input is as `sample` draws it: below
        length 3 one number, else two non-zero numbers around one operator."""
        out = np.full((len(x), x.shape[1]), -1, dtype=np.int64)
        for row, tokens in enumerate(x.tolist()):
            parts = numbers(tokens)
            drawn = len(parts) == 1 if len(tokens) < 3 else len(parts) == 2 and all(parts)
            bits = self.result(parts, len(tokens)) if drawn else [NO_ANSWER]
            out[row, : len(bits)] = bits
        return out

    @abc.abstractmethod
    def result(self, values: list[int], length: int) -> list[int]:
        """The answer's bits for the one or two numbers of an input of `length` tokens."""


@dataclass(frozen=True)
class BinaryAddition(BinaryOperation):
    """Two binary numbers, least significant bit first, around `+`; their sum in the same
    notation, without trailing zeros (inputs shorter than 3 are one number: the answer is that
    number).

    Examples:
        0 0 1 + 0 1 1 0 1      -> 0 1 0 1 1     (4 + 22 = 26)
        1 0 0 1 + 0 0 0 0 0 1  -> 1 0 0 1 0 1   (9 + 32 = 41)
    """

    input_tokens = ("0", "1", "+")
    output_tokens = ("0", "1")

    def result(self, values: list[int], length: int) -> list[int]:
        return little_endian(sum(values))
