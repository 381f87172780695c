"""A failure search's result files and their readers (the report and the tables read only
these, each checked against its record: `ShardStore.file`).

    generations/NNNNN.parquet, .json   each generation (`generation.py`), found through the
                                       shard manifests
    archive.parquet                    the archived inputs, rows of the generation files
    search.json                        why it stopped, the effort per generation (these two
                                       the driver's shards of stage `progress`, `loop.py`)
    clusters.json, slices.parquet      the analysis (`analysis.py`; its clusters the records of
                                       the one cluster analysis, `clusters.py`): the driver's
                                       shard of stage `cluster`
    analysis/tags/*.parquet            its tags, by input, where the task tags (stage `tag`,
                                       `tags.py`): what clusters.json shows of them
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.runs.shards import ShardStore
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.loop import ARCHIVE, RESUME, STATE
from genprobe.studies.search.study import CLUSTER, GENERATION, PROGRESS
from genprobe.studies.search.study import SEARCH as STUDY

SEARCH = STATE  # search.json
CLUSTERS = "clusters.json"
SLICES = "slices.parquet"
# run -> the column (in archive.parquet, search.json's stats and clusters.json) that marks or
# counts the inputs its seeds were trained on
TRAINED_ON = {"A": "trained_on", "B": "trained_on_b"}
STAGE_OF = {ARCHIVE: PROGRESS, SEARCH: PROGRESS, CLUSTERS: CLUSTER, SLICES: CLUSTER}


def stored_config(run: str | Path) -> SearchConfig:
    """Raises RunDirError: not a failure search's run directory."""
    return SearchConfig.from_identity(STUDY.recorded(run)["config"])


def stored(run: str | Path, name: str) -> Path:
    """The result file `name` (of `STAGE_OF`), checked against its record.

    Raises:
        RunDirError: the run has none yet.
        DamagedFileError: it is not the one the run recorded.
    """
    return ShardStore(run).required(STAGE_OF[name], name, RESUME)


def read_json(run: str | Path, name: str) -> Any:
    return json.loads(stored(run, name).read_text(encoding="utf-8"))


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
    return pd.read_parquet(stored(run, ARCHIVE))


def read_slices(run: str | Path) -> pd.DataFrame:
    return pd.read_parquet(stored(run, SLICES))
