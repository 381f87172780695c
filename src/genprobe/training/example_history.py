"""What became of each training example over training time, per member (training with a step
budget, `over_time`), gathered at each evaluation without keeping the evaluations themselves:

    first_right   the first evaluated step at which the member answered it right (-1: never)
    forgotten     forgetting events (Toneva et al. 2019): right at one evaluation, wrong at the
                  next
    learned       right at the last evaluation
    correctness, confidence, variability
                  its data map (Swayamdipta et al. 2020): the share of training time it was
                  right, and the mean and standard deviation over training time of the
                  probability of its target (per token, the geometric mean)

"Over training time": each evaluation weighs the steps it stands for (half the gap to the one
before and to the one after), so that a log-spaced schedule does not count the first few
hundred steps more than the last thousands.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

HISTORY_COLUMNS = (
    "seed", "index", "first_right", "forgotten", "learned", "correctness", "confidence",
    "variability",
)  # fmt: skip
_SUMS = ("right_time", "confidence_time", "squares_time")


def time_weights(schedule: Sequence[int]) -> dict[int, float]:
    """Each evaluated step's share of training time: half the gap to its neighbours (the first
    and the last, half the gap to their one neighbour); 1 for a schedule of one step."""
    points = sorted(schedule)
    if len(points) == 1:
        return {points[0]: 1.0}
    padded = [points[0], *points, points[-1]]
    return {p: (padded[i + 2] - padded[i]) / 2 for i, p in enumerate(points)}


class ExampleHistory:
    """The history of `examples` training examples for `members` members, evaluated at the
    steps of `schedule`."""

    def __init__(self, members: int, examples: int, schedule: Sequence[int]) -> None:
        self.weights = time_weights(schedule)
        self.first_right = np.full((members, examples), -1, dtype=np.int64)
        self.forgotten = np.zeros((members, examples), dtype=np.int64)
        self.last_right = np.zeros((members, examples), dtype=bool)
        self.sums = {name: np.zeros((members, examples)) for name in _SUMS}
        self.time = 0.0

    def update(self, step: int, right: np.ndarray, confidence: np.ndarray) -> None:
        """Add the evaluation at `step`: (S, N) whether each answer is right, and the
        probability of each target."""
        if self.time:  # a first evaluation forgets nothing
            self.forgotten += self.last_right & ~right
        self.first_right[(self.first_right < 0) & right] = step
        self.last_right = right.copy()
        weight = self.weights[step]
        self.sums["right_time"] += weight * right
        self.sums["confidence_time"] += weight * confidence
        self.sums["squares_time"] += weight * confidence.astype(np.float64) ** 2
        self.time += weight

    def table(self, seeds: Sequence[int]) -> pd.DataFrame:
        """One row per member (`seeds`, in row order) × example: `HISTORY_COLUMNS`."""
        members, examples = self.first_right.shape
        time = max(self.time, np.finfo(float).tiny)
        mean = self.sums["confidence_time"] / time
        spread = np.sqrt(np.maximum(self.sums["squares_time"] / time - mean**2, 0.0))
        return pd.DataFrame({
            "seed": np.repeat(np.asarray(seeds, dtype=np.int64), examples),
            "index": np.tile(np.arange(examples), members),
            "first_right": self.first_right.ravel(),
            "forgotten": self.forgotten.ravel(),
            "learned": self.last_right.ravel(),
            "correctness": (self.sums["right_time"] / time).ravel(),
            "confidence": mean.ravel(),
            "variability": spread.ravel(),
        })  # fmt: skip

    def state(self) -> dict[str, torch.Tensor | float]:
        """What resuming needs, as tensors (a resume point loads with `weights_only`)."""
        arrays = {"first_right": self.first_right, "forgotten": self.forgotten,
                  "last_right": self.last_right, **self.sums}  # fmt: skip
        return {**{k: torch.from_numpy(v.copy()) for k, v in arrays.items()}, "time": self.time}

    def restore(self, state: dict[str, torch.Tensor | float]) -> None:
        self.first_right = state["first_right"].cpu().numpy()
        self.forgotten = state["forgotten"].cpu().numpy()
        self.last_right = state["last_right"].cpu().numpy()
        self.sums = {name: state[name].cpu().numpy() for name in _SUMS}
        self.time = float(state["time"])
