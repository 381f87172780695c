"""What sparse parity declares for the probe studies: its ones, and the ones among the k
relevant bits, as features (instead of a count per token)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.tasks.probing import Probes
from genprobe.tasks.sparse_parity import SparseParity


@dataclass(frozen=True)
class SparseParityProbes(Probes):
    task: SparseParity

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """The input length, its ones, and the ones among the k relevant bits."""
        n = self.task.n
        bits = np.pad(np.asarray(src), ((0, 0), (0, max(0, n - np.shape(src)[1])))) == 2
        return {
            "length": self.task.length(src),
            "ones": bits.sum(axis=1),
            "relevant ones": bits[:, self.task.relevant].sum(axis=1),
        }
