"""What the binary-operation tables declare for the probe studies: commutativity where the
operation has it, and the operands as features."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from genprobe.tasks.binary_operation import COMMUTATIVE, BinaryOperation
from genprobe.tasks.probing import Perturbed, Probes, Relation


@dataclass(frozen=True)
class BinaryOperationProbes(Probes):
    task: BinaryOperation

    def relations(self) -> Mapping[str, Relation]:
        """`commutativity` (x y = and y x =, x != y) where the operation is commutative."""
        if self.task.operation not in COMMUTATIVE:
            return {}
        return {"commutativity": Relation("x ∘ y = y ∘ x (x != y)", self._swapped)}

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """The input length, and the operands x and y (-1 where not a number)."""
        src = np.pad(np.asarray(src), ((0, 0), (0, max(0, 2 - np.shape(src)[1]))))
        p = self.task.p
        operand = np.where((src[:, :2] >= 1) & (src[:, :2] <= p), src[:, :2] - 1, -1)
        return {"length": self.task.length(src), "x": operand[:, 0], "y": operand[:, 1]}

    def _swapped(self, src: np.ndarray, rng: np.random.Generator) -> Perturbed:
        src = np.asarray(src)
        rows = np.flatnonzero(self.valid_inputs(src) & (src[:, 0] != src[:, 1]))
        return Perturbed(src[rows][:, [1, 0, *range(2, src.shape[1])]], rows)
