"""A run's curves over training time: every member's accuracy and loss on every watched role
and its weight norm at each evaluation (`training.over_time`), one file per stacked model."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from genprobe.errors import RunDirError
from genprobe.runs.shards import Shard, ShardStore
from genprobe.studies.seed_sensitivity.study import TRAIN
from genprobe.training.over_time import CURVE_COLUMNS

CURVES = "curves"


def curve_path(shard: Shard) -> str:
    return f"{CURVES}/{shard.key}.parquet"


def curve_bytes(curve: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    curve.to_parquet(buffer, index=False)
    return buffer.getvalue()


def read_curves(run: str | Path) -> pd.DataFrame:
    """Every member's curve in one table (`training.over_time.CURVE_COLUMNS`), by seed and step.

    Raises:
        RunDirError: the run was not trained over time (or its training has not finished).
        DamagedFileError: a curve (or the manifest of the shard that wrote it) is missing or
            damaged.
    """
    files = [f for f in ShardStore(run).outputs(TRAIN, ".parquet") if f.parent.name == CURVES]
    if not files:
        raise RunDirError(
            f"{Path(run).absolute()} has no curves: it was not trained over time (--steps), or "
            "its training has not finished"
        )
    curves = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    return curves[list(CURVE_COLUMNS)].sort_values(["seed", "step", "role"], ignore_index=True)
