"""What decimal addition declares for the probe studies: families that rewrite the operands
(in every format; the hint run moves down where a longer sum would not fit), the relation
a + b = b + a, and the operands' digits and carries as features."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from genprobe.tasks.addition import Addition, add_digits, carries, digit_count
from genprobe.tasks.probing import Family, Perturbed, Probes, Relation


@dataclass(frozen=True)
class AdditionProbes(Probes):
    task: Addition

    def families(self) -> Mapping[str, Family]:
        task = self.task
        return {
            "carry_chain": Family(
                "operands rewritten (same digits each) so that every column carries: the lowest "
                "overflows, the ones above sum to 9",
                lambda src, rng: _carry_chain(task, src, rng),
            ),
            "operand_swap": Family("a + b -> b + a", lambda src, rng: _swapped(task, src)),
            "leading_zeros": Family(
                "one operand (drawn) gets a leading zero",
                lambda src, rng: _leading_zero(task, src, rng),
            ),
            "one_more_digit": Family(
                "each operand gets one more (non-zero) leading digit",
                lambda src, rng: _one_more_digit(task, src, rng),
            ),
        }

    def relations(self) -> Mapping[str, Relation]:
        return {
            "commutativity": Relation(
                "a + b and b + a have the same sum (inputs with a != b)",
                lambda src, rng: _swapped(self.task, src),
            )
        }

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """The length, the digits of each operand, the carries and the longest carry chain (not
        the default's token counts: a count of digit 7 or of hint token c says little; 0 for
        an input that is not the task's)."""
        a, b, count, _, ok = self.task.read(np.asarray(src))
        carry = carries(a, b)
        position = np.arange(carry.shape[1])
        since = position - np.maximum.accumulate(np.where(carry, -1, position), axis=1)
        return {
            "length": self.task.length(src),
            "a digits": np.where(ok, count[0], 0),
            "b digits": np.where(ok, count[1], 0),
            "carries": np.where(ok, carry.sum(axis=1), 0),
            "carry chain": np.where(ok, since.max(axis=1, initial=0), 0),
        }


def _swapped(task: Addition, src: np.ndarray) -> Perturbed:
    a, b, count, start, ok = task.read(np.asarray(src))
    same = (count[0] == count[1]) & (a == b).all(axis=1)
    rows = np.flatnonzero(ok & ~same)
    return Perturbed(task.inputs(b[rows], a[rows], count[::-1, rows], start[rows]), rows)


def _carry_chain(task: Addition, src: np.ndarray, rng: np.random.Generator) -> Perturbed:
    a, b, count, start, ok = task.read(np.asarray(src))
    n, width = a.shape
    overlap = count.min(axis=0)[:, None] > np.arange(width)
    digit = rng.integers(1, 9, size=(n, width))  # 1..8: no operand gets a leading zero
    lowest = rng.integers(1, 10, size=n)
    a, b = np.where(overlap, digit, 9), np.where(overlap, 9 - digit, 9)
    a[:, 0], b[:, 0] = lowest, rng.integers(10 - lowest, 10)  # the lowest column overflows
    inside = np.arange(width) < count[:, :, None]  # (2, n, width)
    a, b = np.where(inside[0], a, 0), np.where(inside[1], b, 0)
    return _placed(task, a, b, count, start, ok)


def _leading_zero(task: Addition, src: np.ndarray, rng: np.random.Generator) -> Perturbed:
    a, b, count, start, ok = task.read(np.asarray(src))
    side = rng.integers(0, 2, size=len(a))
    count = count + np.stack([side == 0, side == 1])
    a, b = (np.pad(x, ((0, 0), (0, 1))) for x in (a, b))  # the new top digit is 0
    return _placed(task, a, b, count, start, ok)


def _one_more_digit(task: Addition, src: np.ndarray, rng: np.random.Generator) -> Perturbed:
    a, b, count, start, ok = task.read(np.asarray(src))
    rows = np.arange(len(a))
    a, b = (np.pad(x, ((0, 0), (0, 1))) for x in (a, b))
    a[rows, count[0]] = rng.integers(1, 10, size=len(a))
    b[rows, count[1]] = rng.integers(1, 10, size=len(b))
    return _placed(task, a, b, count + 1, start, ok)


def _placed(
    task: Addition,
    a: np.ndarray,
    b: np.ndarray,
    count: np.ndarray,
    start: np.ndarray,
    ok: np.ndarray,
) -> Perturbed:
    """The inputs of the rows that were the task's and still are: with hints, the hint run
    starts lower where the operands or the sum would run past the last hint."""
    if task.hints:
        needed = np.maximum(count.max(axis=0), digit_count(add_digits(a, b)))
        ok = ok & (needed <= task.hints)
        start = np.minimum(start, task.hints - needed)
    rows = np.flatnonzero(ok)
    return Perturbed(task.inputs(a[rows], b[rows], count[:, rows], start[rows]), rows)
