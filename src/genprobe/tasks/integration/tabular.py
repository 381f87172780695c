"""JSONL and Parquet tables whose rows keep their 1-based line (JSONL) or row (Parquet)
number, so every error can name where it is."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.errors import DataFormatError
from genprobe.tasks.lines import json_lines, some_rows

FORMATS = (".jsonl", ".parquet")


def read_table(path: str | Path) -> pd.DataFrame:
    """The rows of a JSONL (one object per line) or Parquet file, indexed by their 1-based
    line or row.

    Raises:
        DataFormatError: unreadable, another extension, a line that is not a JSON object, no
            row.
    """
    path = Path(path)
    if path.suffix not in FORMATS:
        raise DataFormatError(path, None, "expected a .jsonl or .parquet file")
    if path.suffix == ".parquet":
        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as error:
            raise DataFormatError(path, None, f"cannot read Parquet: {error}") from None
        frame.index = range(1, len(frame) + 1)
        return some_rows(path, frame)
    numbered = some_rows(path, json_lines(path, objects=True))
    return pd.DataFrame([record for _, record in numbered], index=[n for n, _ in numbered])


def require_columns(frame: pd.DataFrame, path: str | Path, columns: Iterable[str]) -> None:
    missing = [column for column in columns if column not in frame]
    if missing:
        raise DataFormatError(path, None, f"missing column(s) {', '.join(map(repr, missing))}")


def is_missing(value: Any) -> bool:
    """A null cell: None, NaN (JSONL nulls in a numeric column) or pandas' NA."""
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
