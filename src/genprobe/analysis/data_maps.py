"""Per training example, its history (`training.example_history`) over the members that
trained on it: a data map (Swayamdipta et al. 2020, *Dataset Cartography*) and forgetting
events (Toneva et al. 2019, *An Empirical Study of Example Forgetting*).

Swayamdipta et al. name three regions of a map: *easy to learn* (high confidence, low
variability), *ambiguous* (high variability) and *hard to learn* (low confidence, low
variability). `region`: ambiguous for the most variable third of the examples; of the others,
easy to learn at or above their median confidence, hard to learn below it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

REGIONS = ("easy to learn", "ambiguous", "hard to learn")


def data_map(history: pd.DataFrame, trained: np.ndarray | None = None) -> pd.DataFrame:
    """One row per training example: over the members that trained on it (`trained`, (S, N)
    bool, row k the k-th seed of `history` ascending; None: all), how many; the means of its
    confidence, variability and correctness; the median first step at which it was right
    (among those ever right), the share never right, the mean number of forgetting events and
    the share forgotten at least once; its `region`."""
    seeds = np.sort(history["seed"].unique())
    examples = int(history["index"].max()) + 1
    history = history.sort_values(["seed", "index"])
    mine = np.ones((len(seeds), examples), dtype=bool) if trained is None else trained
    frame = history.assign(member=mine.ravel())[lambda t: t["member"]]
    first = frame["first_right"].where(frame["first_right"] >= 0)
    grouped = frame.assign(first=first, never=first.isna(), ever=frame["forgotten"] > 0)
    table = grouped.groupby("index").agg(
        members=("seed", "size"),
        confidence=("confidence", "mean"),
        variability=("variability", "mean"),
        correctness=("correctness", "mean"),
        first_right=("first", "median"),
        never_right=("never", "mean"),
        forgetting_events=("forgotten", "mean"),
        forgotten=("ever", "mean"),
    )
    table = table.reindex(np.arange(examples)).rename_axis("index").reset_index()
    table["members"] = table["members"].fillna(0).astype(np.int64)
    return table.assign(region=_regions(table))


def _regions(table: pd.DataFrame) -> pd.Series:
    """Ambiguous: the most variable third; of the rest, easy to learn above the median
    confidence, hard to learn below (NaN where no member trained on the example)."""
    variable = table["variability"].rank(pct=True) > 2 / 3
    confident = table["confidence"] >= table.loc[~variable, "confidence"].median()
    region = np.where(variable, REGIONS[1], np.where(confident, REGIONS[0], REGIONS[2]))
    return pd.Series(region, index=table.index).where(table["members"] > 0)
