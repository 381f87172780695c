"""Integration datasets on disk: Lample & Charton's text format, JSONL and Parquet.

L&C's format is one pair per line, `count|input<TAB>output`, sorted by count, with inputs
starting `sub Y' `; their splits are separate files `NAME.train`, `NAME.valid`, `NAME.test`.
JSONL and Parquet hold all splits in one file with a `split` column.

Splits are assigned by a hash of the input, so the same input always lands in the same split:
a test input can never also be in train, and adding data never moves old rows between splits.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from genprobe.errors import ConfigError, DataFormatError
from genprobe.runs.atomic import atomic_path, write_text
from genprobe.tasks.integration.generation import Row
from genprobe.tasks.integration.generation_config import DatasetFiles
from genprobe.tasks.integration.tabular import FORMATS as TABLE_FORMATS
from genprobe.tasks.integration.tabular import is_missing, read_table, require_columns
from genprobe.tasks.lines import json_object, some_rows, text_lines

SPLITS = ("train", "valid", "test")
SPLIT_SUFFIXES = tuple(f".{split}" for split in SPLITS)  # the text splits NAME.train, …


def split_of(problem: str, valid_fraction: float, test_fraction: float) -> str:
    """ "train", "valid" or "test", fixed by a hash of the input text."""
    digest = hashlib.sha256(problem.encode("utf-8")).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < test_fraction:
        return "test"
    if u < test_fraction + valid_fraction:
        return "valid"
    return "train"


def _records(rows: Iterable[Row], valid_fraction: float, test_fraction: float) -> list[dict]:
    records = [
        {
            "split": split_of(row.input, valid_fraction, test_fraction),
            "count": row.count,
            "input": row.input,
            "output": row.output,
        }
        for row in rows
    ]
    # most frequent first, as in L&C's files; ties keep generation order
    return sorted(records, key=lambda record: -record["count"])


def write_dataset(
    rows: Sequence[Row],
    out: str | Path,
    fmt: str = "text",
    valid_fraction: float = 0.0,
    test_fraction: float = 0.0,
) -> list[Path]:
    """Write `rows` in the format `fmt` with the split shares given (`DatasetFiles`); returns
    the paths written (each written atomically).

    Raises:
        ConfigError: settings `DatasetFiles` refuses.
    """
    DatasetFiles(fmt, valid_fraction, test_fraction)  # refused before anything is written
    records = _records(rows, valid_fraction, test_fraction)
    out = Path(out)
    if fmt == "jsonl":
        write_text(out, "".join(json.dumps(record) + "\n" for record in records))
        return [out]
    if fmt == "parquet":
        import pandas as pd

        with atomic_path(out) as tmp:
            pd.DataFrame(records, columns=["split", "count", "input", "output"]).to_parquet(
                tmp, index=False
            )
        return [out]
    if valid_fraction == 0 and test_fraction == 0:
        write_text(out, "".join(_text_line(record) for record in records))
        return [out]
    paths = []
    for split in SPLITS:
        path = out.with_name(f"{out.name}.{split}")
        write_text(path, "".join(_text_line(r) for r in records if r["split"] == split))
        paths.append(path)
    return paths


def _text_line(record: dict) -> str:
    return f"{record['count']}|{record['input']}\t{record['output']}\n"


@dataclass(frozen=True)
class DatasetRow:
    row: int  # 1-based line of a text or JSONL file, row of a Parquet file
    input: str  # the integrand as given (prefix tokens, perhaps with `sub Y'`, or infix text)
    output: str | None  # its antiderivative, if the file gives one
    count: int = 1  # times it was generated (L&C's `count|`, a `count` column)


def read_dataset(
    path: str | Path,
    split: str | None = None,
    *,
    bare_problems: bool = False,
    may_be_empty: bool = False,
) -> list[DatasetRow]:
    """The rows of a dataset: Lample & Charton's text (`count|input<TAB>output` per line, the
    count optional), or JSONL/Parquet with an `input` (or `problem`) column and optional
    `output` (or `reference`) and `split` columns, as `generate` and `integration suite`
    write them. With `bare_problems`, a text line without a tab is a problem alone. A dataset
    without rows (of `split`) is one only `may_be_empty` allows: a split `generate` wrote empty.

    Raises:
        DataFormatError: a malformed line or row, a missing column (file and line named), no
            row (of `split`).
        ConfigError: `split` for a text file (L&C keep each split in its own file).
    """
    if Path(path).suffix in TABLE_FORMATS:
        rows = _table_rows(path, split)
        if not (rows or may_be_empty):
            raise DataFormatError(path, None, f"no rows of split {split!r}")
        return rows
    if split is not None:
        raise ConfigError("split", "used only with JSONL or Parquet datasets", split)
    rows = []
    for number, line in text_lines(path):
        head, tab, output = line.partition("\t")
        if not tab and not bare_problems:
            raise DataFormatError(path, number, "expected 'count|input<TAB>output'")
        count, bar, problem = head.partition("|")
        if bar and not count.strip().isdigit():
            raise DataFormatError(path, number, f"count {count!r} is not a number")
        rows.append(
            DatasetRow(
                number, problem if bar else head, output if tab else None, int(count) if bar else 1
            )
        )
    return rows if may_be_empty else some_rows(path, rows)


def _table_rows(path: str | Path, split: str | None) -> list[DatasetRow]:
    frame = read_table(path)
    source = "input" if "input" in frame else "problem"
    target = "output" if "output" in frame else "reference"
    require_columns(frame, path, [source] if split is None else [source, "split"])
    if split is not None:
        frame = frame[frame["split"] == split]
    rows = []
    for row, record in zip(frame.index, frame.to_dict("records"), strict=True):
        output = record.get(target)
        rows.append(
            DatasetRow(
                int(row),
                _text(path, int(row), source, record[source]),
                None if is_missing(output) else _text(path, int(row), target, output),
                _count(path, int(row), record.get("count")),
            )
        )
    return rows


def _count(path: str | Path, row: int, value: object) -> int:
    if is_missing(value):
        return 1
    # a count column with nulls in it is read as floats
    whole = isinstance(value, int | np.integer) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or value < 1:
        raise DataFormatError(path, row, "column 'count': expected an integer ≥ 1")
    return int(value)


def _text(path: str | Path, row: int, column: str, value: object) -> str:
    """A cell as text: a string as it is, a list of tokens joined by spaces."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple | np.ndarray) and all(isinstance(t, str) for t in value):
        return " ".join(value)
    raise DataFormatError(path, row, f"column {column!r}: expected text or a list of tokens")


def dataset_meta(data: str | Path) -> tuple[dict[str, Any] | None, Path]:
    """The metadata `generate` or `mix` wrote beside a dataset, and its path (the one looked
    for, where there is none): `NAME.meta.json` for NAME or its text splits `NAME.train`, …,
    else `FILE.meta.json`.

    Raises:
        DataFormatError: the file is there but not a JSON object.
    """
    data = Path(data)
    names = [data.stem, data.name] if data.suffix in SPLIT_SUFFIXES else [data.name]
    for name in names:
        path = data.with_name(f"{name}.meta.json")
        if path.is_file():
            return json_object(path), path
    return None, data.with_name(f"{names[0]}.meta.json")


def meta_max_ops(meta: dict[str, Any], path: Path) -> int:
    """The generator's `config.max_ops` in a dataset's metadata (read from `path`).

    Raises:
        DataFormatError: it is missing or not an integer ≥ 1.
    """
    config = meta.get("config")
    value = config.get("max_ops") if isinstance(config, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataFormatError(path, None, "field 'config.max_ops': expected an integer ≥ 1")
    return value
