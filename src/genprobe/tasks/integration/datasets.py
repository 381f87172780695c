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
from pathlib import Path

from genprobe.errors import ConfigError, DataFormatError
from genprobe.runs.atomic import atomic_path, write_text
from genprobe.tasks.integration.generation import Row

SPLITS = ("train", "valid", "test")
FORMATS = ("text", "jsonl", "parquet")


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
    if not (valid_fraction >= 0 and test_fraction >= 0 and valid_fraction + test_fraction < 1):
        raise ConfigError(
            "valid and test fractions", "non-negative with a sum below 1",
            (valid_fraction, test_fraction),
        )  # fmt: skip
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
    """Write `rows`; returns the paths written (each written atomically)."""
    if fmt not in FORMATS:
        raise ConfigError("format", f"one of {FORMATS}", fmt)
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


def read_text_dataset(path: str | Path) -> list[Row]:
    """Rows of a file in L&C's `count|input<TAB>output` format (the count is optional).

    Raises:
        DataFormatError: a line without a tab, or with a count that is not a number.
    """
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.rstrip("\n")
            if not line:
                continue
            head, tab, output = line.partition("\t")
            if not tab:
                raise DataFormatError(path, number, "expected 'count|input<TAB>output'")
            count_text, bar, problem = head.partition("|")
            if not bar:
                count_text, problem = "1", head
            if not count_text.isdigit():
                raise DataFormatError(path, number, f"count {count_text!r} is not a number")
            rows.append(Row(problem, output, int(count_text)))
    return rows
