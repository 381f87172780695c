"""Reading a training run's result files: its config and `metrics.jsonl` (one row per
validation: after every epoch, and at a time-budget stop, marked `partial`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.runs.checkpoint import CHECKPOINT, METRICS
from genprobe.runs.shards import ShardStore
from genprobe.studies.integration_train.study import INTEGRATION_TRAIN


def read_train_config(run: str | Path) -> dict[str, Any]:
    """The run's `IntegrationTrainConfig`, as recorded.

    Raises:
        RunDirError: `run` is not a run directory, or holds another kind of run.
    """
    return INTEGRATION_TRAIN.recorded(run)["config"]


def read_metrics(run: str | Path) -> pd.DataFrame:
    """One row per validation, in order.

    Raises:
        RunDirError: no validation was recorded yet.
        DamagedFileError: `metrics.jsonl` is not the one the run recorded.
    """
    path = ShardStore(run).required(CHECKPOINT, METRICS, "train first")
    lines = path.read_text(encoding="utf-8").splitlines()
    return pd.DataFrame([json.loads(line) for line in lines if line])
