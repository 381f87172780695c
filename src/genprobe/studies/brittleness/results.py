"""Reading a brittleness run's result files: its recorded config, the suite tables, the solve
results, the two joined into one table of examples (one row per problem, with its metadata),
and the search budget's rows. Shard files are found through their manifests and checked against
their sha256 (`ShardStore.outputs`): a damaged or missing one is a `DamagedFileError` naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from genprobe.errors import RunDirError
from genprobe.runs.pool import DeadlineCounts
from genprobe.runs.shards import ShardStore
from genprobe.studies.brittleness.solve import MODEL_DEADLINES, RESULT_SCHEMA
from genprobe.studies.brittleness.study import BRITTLENESS, BUDGET, SOLVE, SUITE
from genprobe.tasks.integration.suites.table import suite_frame


def read_recorded(run: str | Path) -> dict[str, Any]:
    """The run's `config.json`: its kind, config hash and config.

    Raises:
        RunDirError: no config.json, or a run of another study.
    """
    return BRITTLENESS.recorded(run)


def read_suites(run: str | Path) -> pd.DataFrame:
    """Every suite table of the run, with `row`: the problem's position in its suite."""
    files = _recorded(run, SUITE)
    frames = []
    for file in files:
        frame = suite_frame(pd.read_parquet(file).to_dict("records"))
        frame.insert(0, "row", range(len(frame)))
        frames.append(frame)
    if not frames:
        raise RunDirError(f"{run} has no suites yet: run the study")
    return pd.concat(frames, ignore_index=True)


def read_results(run: str | Path) -> pd.DataFrame:
    """Every solved shard's rows; ranks as nullable integers."""
    files = _recorded(run, SOLVE)
    if not files:
        raise RunDirError(f"{run} has no results yet: run the study")
    table = pa.concat_tables([pq.read_table(file, schema=RESULT_SCHEMA) for file in files])
    frame = table.to_pandas()
    for column in ("first_correct_rank", "first_generous_rank", "n_candidates"):
        frame[column] = frame[column].astype("Int64")
    return frame


def read_model_deadlines(run: str | Path) -> DeadlineCounts | None:
    """The model's own deadline hits over every solved shard (`sympy`), None for a model
    without a deadline."""
    total = None
    for file in _recorded(run, SOLVE):
        recorded = (pq.read_schema(file).metadata or {}).get(MODEL_DEADLINES.encode())
        if recorded is not None:
            total = (total or DeadlineCounts()) + DeadlineCounts(**json.loads(recorded))
    return total


def read_examples(run: str | Path) -> pd.DataFrame:
    """Results joined with their suites' metadata: one row per problem solved."""
    suites = read_suites(run).drop(columns=["problem", "reference"])
    return read_results(run).merge(suites, on=["suite", "row"], how="left", validate="1:1")


def read_training(run: str | Path) -> dict[str, Any]:
    """What the model was trained on and where each fact came from (`training.Training` as
    JSON); empty for a run made before the run recorded it."""
    path = Path(run) / "training.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def read_budget(run: str | Path) -> pd.DataFrame | None:
    """The search budget's rows (`--search-budget`), or None where none was run."""
    files = _recorded(run, BUDGET)
    if not files:
        return None
    return pd.concat([pd.read_parquet(file) for file in files], ignore_index=True)


def _recorded(run: str | Path, stage: str) -> list[Path]:
    """The Parquet files the shards of `stage` recorded, checked, in path order."""
    return sorted(ShardStore(run).outputs(stage, ".parquet"))
