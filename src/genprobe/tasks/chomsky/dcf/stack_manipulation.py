"""Stack manipulation: the stack that remains after a series of pushes and pops."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.chomsky.base import LengthTask
from genprobe.tasks.task import NO_ANSWER

POP, PUSH_0, PUSH_1 = 2, 3, 4  # input tokens after the stack's bits 0 and 1


@dataclass(frozen=True)
class StackManipulation(LengthTask):
    """A stack of bits (bottom to top), then actions POP, PUSH0, PUSH1 applied left to right
    (a POP on an empty stack does nothing); the answer is the final stack, top to bottom. NNCH
    ends it with a termination token and pads it with zeros to the input length + 1; here the
    decoder's end of sequence ends it, and an empty stack is an empty output.

    Examples:
        0 1 1 0 PUSH1 POP POP  -> 1 1 0
        1 1 0 POP POP POP      -> (empty)
    """

    input_tokens = ("0", "1", "POP", "PUSH0", "PUSH1")
    output_tokens = ("0", "1")

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        if length == 1:
            return rng.integers(0, 2, size=(n, 1))
        stack = rng.integers(1, length, size=n)  # initial stack sizes, 1 .. length - 1
        bits = rng.integers(0, 2, size=(n, length))
        actions = rng.integers(POP, PUSH_1 + 1, size=(n, length))
        return np.where(np.arange(length) < stack[:, None], bits, actions)

    def answer(self, x: np.ndarray) -> np.ndarray:
        """The final stacks; NO_ANSWER unless the input is bits then actions, with at least
        one bit and (from length 2 on) at least one action, as `sample` draws them."""
        out = np.full((len(x), x.shape[1]), -1, dtype=np.int64)
        bits = np.cumprod(x < POP, axis=1).sum(axis=1)  # the initial stack's size
        actions = (x >= POP).sum(axis=1)
        drawn = (bits >= 1) & (bits + actions == x.shape[1]) & ((actions >= 1) | (bits == 1))
        out[~drawn, 0] = NO_ANSWER
        for row, tokens in zip(np.flatnonzero(drawn), x[drawn].tolist(), strict=True):
            stack: list[int] = []
            for token in tokens:
                if token < POP:  # still the initial stack (the input starts with it)
                    stack.append(token)
                elif token == POP:
                    if stack:
                        stack.pop()
                else:
                    stack.append(token - PUSH_0)
            out[row, : len(stack)] = stack[::-1]
        return out
