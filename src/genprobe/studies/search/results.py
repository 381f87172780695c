"""A failure search's result files and their readers (the report and the tables read only
these).

    generations/NNNNN.parquet, .json   each generation (`generation.py`), found through the
                                       shard manifests
    archive.parquet                    the archived inputs, rows of the generation files
    search.json                        why it stopped, the effort per generation
    clusters.json, slices.parquet      the analysis (`analysis.py`; its clusters the records of
                                       the one cluster analysis, `clusters.py`)
    analysis/tags/*.parquet            its tags, by input, where the task tags (stage `tag`,
                                       `tags.py`): what clusters.json shows of them
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.errors import RunDirError
from genprobe.runs.shards import ShardStore
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.loop import STATE
from genprobe.studies.search.study import GENERATION
from genprobe.studies.search.study import SEARCH as STUDY

ARCHIVE = "archive.parquet"
SEARCH = STATE  # search.json
CLUSTERS = "clusters.json"
SLICES = "slices.parquet"
# run -> the column (in archive.parquet, search.json's stats and clusters.json) that marks or
# counts the inputs its seeds were trained on
TRAINED_ON = {"A": "trained_on", "B": "trained_on_b"}


def stored_config(run: str | Path) -> SearchConfig:
    """Raises RunDirError: not a failure search's run directory."""
    return SearchConfig.from_identity(STUDY.recorded(run)["config"])


def read_json(run: str | Path, name: str) -> Any:
    path = Path(run) / name
    if not path.exists():
        raise RunDirError(f"{run} has no {name} yet: run the search (the same command resumes)")
    return json.loads(path.read_text(encoding="utf-8"))


def positions(state: dict[str, Any]) -> dict[str, np.ndarray]:
    """Each run's member positions by its name (A, and B with --against), of search.json's
    `state`."""
    runs = state.get("runs", {"A": {"members": state["members"]}})  # searches before --against
    sizes = [len(run["members"]) for run in runs.values()]
    starts = np.cumsum([0, *sizes[:-1]])
    return {
        name: np.arange(start, start + size)
        for name, start, size in zip(runs, starts, sizes, strict=True)
    }


def read_evaluated(run: str | Path, generations: int) -> pd.DataFrame:
    """Every input of generations 0..`generations`, in the order evaluated."""
    paths = ShardStore(run).outputs(GENERATION, ".parquet")[: generations + 1]
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def read_archive(run: str | Path) -> pd.DataFrame:
    path = Path(run) / ARCHIVE
    if not path.exists():
        raise RunDirError(f"{run} has no {ARCHIVE} yet: run the search (the same command resumes)")
    return pd.read_parquet(path)


def read_slices(run: str | Path) -> pd.DataFrame:
    return pd.read_parquet(Path(run) / SLICES)
