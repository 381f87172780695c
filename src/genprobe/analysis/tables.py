"""A table as a CSV or Parquet file, written atomically: what `genprobe export` writes each of
a run's tables with (`genprobe.studies.tables.export_tables`). In CSV a cell that holds a list
(a SAGGA mutant's answers, a composite's parts) is written as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.runs.atomic import atomic_path

FORMATS = ("csv", "parquet")


def write_table(table: pd.DataFrame, path: Path) -> Path:
    """`table` as CSV or Parquet, by `path`'s suffix, written atomically."""
    with atomic_path(path) as tmp:
        if path.suffix == ".parquet":
            table.to_parquet(tmp, index=False)
        else:
            lists = [column for column in table if table[column].dtype == object]
            table.assign(**{c: table[c].map(_json_list) for c in lists}).to_csv(tmp, index=False)
    return path


def _json_list(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return json.dumps(value) if isinstance(value, list) else value
