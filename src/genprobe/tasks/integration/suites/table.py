"""The suite table: one row per problem, its columns, and its files (JSONL or Parquet).

Every suite has the same columns (`COLUMNS`), so one reader, one runner and one report serve
them all. Problems and references are prefix tokens joined by spaces, without the `sub Y'` head.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import sympy as sp

from genprobe.errors import ConfigError, DataFormatError, ParseError, UnsupportedExpressionError
from genprobe.runs.atomic import atomic_path, write_text
from genprobe.tasks.integration.expression import Expr, from_sympy, to_sympy
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.reading import read_expression
from genprobe.tasks.integration.tabular import FORMATS, is_missing, read_table, require_columns

COLUMNS = (
    "suite", "set", "template", "problem", "problem_infix", "reference", "reference_infix",
    "k1", "k2", "coeff_range", "k", "n_ops", "method", "source_rows",
)  # fmt: skip
INT_COLUMNS = ("k1", "k2", "k", "n_ops")
# what the brittleness study's tables group problems by (Welleck et al. 2022, Tables 2, 8, 9
# and Figure 2), as the probe carries them
GROUP_COLUMNS = ("set", "template", "coeff_range")
TEXT_COLUMNS = tuple(c for c in COLUMNS if c not in (*INT_COLUMNS, "source_rows"))
REQUIRED_COLUMNS = ("suite", "set", "problem")


def sympy_columns(problem: sp.Expr, reference: sp.Expr | None) -> dict[str, str | None]:
    """Problem and reference columns for SymPy expressions in `X`, in L&C's canonical shape."""
    columns = {"problem": _tokens(from_sympy(problem)), "problem_infix": str(problem)}
    columns["reference"] = None if reference is None else _tokens(from_sympy(reference))
    columns["reference_infix"] = None if reference is None else str(reference)
    return columns


def tree_columns(problem: Expr, reference: Expr | None) -> dict[str, str | None]:
    """Problem and reference columns for trees read from a file: their tokens are kept as given
    (the model saw them in that shape), the infix is SymPy's."""
    return {
        "problem": _tokens(problem),
        "problem_infix": str(to_sympy(problem)),
        "reference": None if reference is None else _tokens(reference),
        "reference_infix": None if reference is None else str(to_sympy(reference)),
    }


def _tokens(tree: Expr) -> str:
    return " ".join(to_prefix(tree))


def suite_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """A suite table from row dicts: every column of `COLUMNS` in order, missing ones null,
    text as Python objects (None when null), integer metadata as nullable integers,
    `source_rows` a list (empty if none). The same dtypes whatever the pandas version."""
    frame = pd.DataFrame(list(rows), columns=list(COLUMNS))
    for column in TEXT_COLUMNS:
        values = [None if is_missing(value) else value for value in frame[column]]
        frame[column] = pd.Series(values, index=frame.index, dtype=object)
    for column in INT_COLUMNS:
        frame[column] = frame[column].astype("Int64")
    frame["source_rows"] = [_int_list(value) for value in frame["source_rows"]]
    return frame.reset_index(drop=True)


def _int_list(value: Any) -> list[int]:
    return [] if is_missing(value) else [int(item) for item in value]


def _plain(value: Any) -> Any:
    """A JSON value for one cell: NumPy scalars as Python ones, missing values as None."""
    if is_missing(value):
        return None
    return value.item() if hasattr(value, "item") else value


def suite_path(path: str | Path) -> Path:
    """`path`, checked to name a file a suite can be written to.

    Raises:
        ConfigError: neither .jsonl nor .parquet.
    """
    path = Path(path)
    if path.suffix not in FORMATS:
        raise ConfigError("the suite file", "a .jsonl or .parquet file", str(path))
    return path


def write_suite(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a suite atomically, as JSONL or Parquet by the file's extension."""
    path = suite_path(path)
    frame = suite_frame(frame.to_dict("records"))
    if path.suffix == ".parquet":
        with atomic_path(path) as tmp:
            frame.to_parquet(tmp, index=False)
        return
    lines = (
        json.dumps({column: _plain(value) for column, value in record.items()}) + "\n"
        for record in frame.to_dict("records")
    )
    write_text(path, "".join(lines))


def parse_cell(
    path: str | Path, line: int, column: str, value: Any, skip_unsupported: bool = False
) -> Expr:
    """The tree in one cell: prefix tokens as given, or infix text put in Lample & Charton's
    canonical shape (`reading.read_expression`).

    Raises:
        DataFormatError: not a string, or not an expression of the task (names the file, line
            and column).
        UnsupportedExpressionError: with `skip_unsupported`, for a well-formed expression with a
            token the task does not use (`I`, `y`, ...): the caller skips the row.
    """
    if not isinstance(value, str):
        raise DataFormatError(path, line, f"column {column!r}: expected an expression as text")
    try:
        tree = read_expression(value, canonical=True, prose=False)
        to_sympy(tree)  # refuses powers too large to build
    except (ParseError, UnsupportedExpressionError) as error:
        if skip_unsupported and isinstance(error, UnsupportedExpressionError):
            raise
        raise DataFormatError(path, line, f"column {column!r}: {error}") from None
    return tree


def read_suite(path: str | Path) -> pd.DataFrame:
    """A suite written by `write_suite` (or by hand), checked: the required columns are there,
    every problem and reference parses. Missing metadata columns are filled with nulls.

    Raises:
        DataFormatError: naming the file, the line (row) and the column at fault.
    """
    frame = read_table(path)
    require_columns(frame, path, REQUIRED_COLUMNS)
    references = frame["reference"] if "reference" in frame else [None] * len(frame)
    for line, problem, reference in zip(frame.index, frame["problem"], references, strict=True):
        parse_cell(path, line, "problem", problem)
        if not is_missing(reference):
            parse_cell(path, line, "reference", reference)
    try:
        return suite_frame(frame.to_dict("records"))
    except (TypeError, ValueError) as error:
        raise DataFormatError(
            path, None, f"a metadata column has the wrong type: {error}"
        ) from None
