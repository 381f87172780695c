"""A sweep's results, read only from the files its shards recorded, and `metrics.json`.

Predictions and training summaries are found through the shard manifests, so a file that no
finished shard lists is never counted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.errors import RunDirError
from genprobe.runs.atomic import write_json
from genprobe.runs.shards import ShardStore
from genprobe.studies.seed_sensitivity import predict, train
from genprobe.studies.seed_sensitivity.config import SUITES


def read_predictions(run: str | Path) -> pd.DataFrame:
    """Every recorded prediction: seed, suite, index, input, output, valid.

    Raises:
        RunDirError: no suite has been evaluated yet.
    """
    files = ShardStore(run).outputs(predict.STAGE)
    if not files:
        raise RunDirError(f"{run} has no predictions yet")
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def read_training(run: str | Path) -> dict[str, Any]:
    """Per seed (as a string): epochs, best epoch, validation accuracy per epoch."""
    summaries: dict[str, Any] = {}
    for path in ShardStore(run).outputs(train.STAGE):
        if path.suffix == ".json":
            summaries.update(json.loads(path.read_text(encoding="utf-8")))
    return summaries


def accuracy_table(predictions: pd.DataFrame) -> pd.DataFrame:
    """One row per seed, one column per suite (the study's suites first), accuracy in [0, 1]."""
    table = predictions.groupby(["seed", "suite"])["valid"].mean().unstack("suite")
    own = [suite for suite in SUITES if suite in table.columns]
    return table[own + sorted(set(table.columns) - set(own))]


def write_metrics(run: str | Path) -> dict[str, Any]:
    """Per-seed accuracy on every evaluated suite plus the training summary → metrics.json."""
    run = Path(run)
    predictions = read_predictions(run)
    accuracy = accuracy_table(predictions)
    training = read_training(run)
    per_seed = {
        str(seed): {
            "accuracy": {suite: float(value) for suite, value in row.dropna().items()},
            "training": training.get(str(seed)),
        }
        for seed, row in accuracy.iterrows()
    }
    n_examples = predictions.groupby("suite")["index"].nunique()
    metrics = {
        "suites": list(accuracy.columns),
        "n_examples": n_examples.to_dict(),
        "seeds": per_seed,
    }
    write_json(run / "metrics.json", metrics)
    return metrics


def incomplete_suites(metrics: dict[str, Any]) -> list[str]:
    """The suites some seed has no accuracy on (added with `evaluate --src` before the run grew
    by more seeds)."""
    seeds = metrics["seeds"].values()
    return [suite for suite in metrics["suites"] if any(suite not in s["accuracy"] for s in seeds)]
