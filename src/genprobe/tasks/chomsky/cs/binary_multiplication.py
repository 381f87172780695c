"""Binary multiplication: the product of two binary numbers, least significant bit first."""

from __future__ import annotations

from dataclasses import dataclass

from genprobe.tasks.chomsky.cs.binary_addition import BinaryOperation, little_endian


@dataclass(frozen=True)
class BinaryMultiplication(BinaryOperation):
    """Two binary numbers, least significant bit first, around `*`; their product in the same
    notation, without trailing zeros. Inputs shorter than 3 are one number and, as NNCH sets
    them, have a fixed answer: empty for length 1, `0` for length 2.

    Examples:
        0 0 1 * 0 1 1 0 1      -> 0 0 0 1 1 0 1       (4 * 22 = 88)
        1 0 0 1 * 0 0 0 0 0 1  -> 0 0 0 0 0 1 0 0 1   (9 * 32 = 288)
    """

    input_tokens = ("0", "1", "*")
    output_tokens = ("0", "1")

    def result(self, values: list[int], length: int) -> list[int]:
        if len(values) == 1:
            return [0] * (length - 1)
        return little_endian(values[0] * values[1])
