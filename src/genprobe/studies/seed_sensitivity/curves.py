"""A run's curves over training time: every member's accuracy and loss on every watched role
and its weight norm at each evaluation (`training.over_time`), one file per stacked model; and
the history of each training example per member (`training.example_history`), one file per
stacked model too."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from genprobe.errors import RunDirError
from genprobe.runs.shards import Shard, ShardStore
from genprobe.studies.seed_sensitivity.study import TRAIN
from genprobe.training.example_history import HISTORY_COLUMNS
from genprobe.training.over_time import CURVE_COLUMNS

CURVES = "curves"
HISTORY = "history"


def curve_path(shard: Shard) -> str:
    return f"{CURVES}/{shard.key}.parquet"


def history_path(shard: Shard) -> str:
    return f"{HISTORY}/{shard.key}.parquet"


def read_curves(run: str | Path) -> pd.DataFrame:
    """Every member's curve in one table (`training.over_time.CURVE_COLUMNS`), by seed and step.

    Raises:
        RunDirError: the run was not trained over time (or its training has not finished).
        DamagedFileError: a curve (or the manifest of the shard that wrote it) is missing or
            damaged.
    """
    curves = _read(run, CURVES, "curves")
    return curves[list(CURVE_COLUMNS)].sort_values(["seed", "step", "role"], ignore_index=True)


def read_history(run: str | Path) -> pd.DataFrame:
    """Every member's history of every training example in one table
    (`training.example_history.HISTORY_COLUMNS`), by seed and example.

    Raises:
        RunDirError: the run was not trained over time, its training has not finished, or it
            was trained before histories were kept.
        DamagedFileError: a history (or the manifest of the shard that wrote it) is missing or
            damaged.
    """
    history = _read(run, HISTORY, "history of its training examples")
    return history[list(HISTORY_COLUMNS)].sort_values(["seed", "index"], ignore_index=True)


def _read(run: str | Path, folder: str, what: str) -> pd.DataFrame:
    files = [f for f in ShardStore(run).outputs(TRAIN, ".parquet") if f.parent.name == folder]
    if not files:
        raise RunDirError(
            f"{Path(run).absolute()} has no {what}: it was not trained over time (--steps), or "
            "its training has not finished"
        )
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
