"""Primitives: integrands with known antiderivatives, read from data or results files, from which
the derived suites (`robustness-validation`, `compositionality`) are built.

A results file is what running a suite produced: JSONL or Parquet with at least the columns
`problem` (prefix tokens, as in suites), `set`, `reference` and the rank column of the criterion
(an integer, or null when no candidate passed). "Solved" has two meanings (`is_solved`): the
paper's, a pass at rank 1 with a verifier timeout failing (`first_correct_rank` == 1); and that
of the authors' code (wellecks/symbolic_generalization), where a timeout passes
(`first_generous_rank`): a simple primitive counts when its top candidate passes (`verify.py`
checks `hyps[0]`), a validation problem when any of its candidates does (`run_and_check`, top
50 of a beam of 50).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.errors import DataFormatError, UnsupportedExpressionError, check_choice
from genprobe.tasks.integration.datasets import read_dataset
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.prefix import strip_problem_prefix
from genprobe.tasks.integration.suites.table import (
    is_missing,
    parse_cell,
    read_table,
    require_columns,
)
from genprobe.tasks.lines import some_rows

RESULT_COLUMNS = ("problem", "set", "reference")
# criterion of solved -> the rank column it reads
SOLVED = {"paper": "first_correct_rank", "code": "first_generous_rank"}
# the sets whose problems the authors' code counts as solved at any rank of the candidates
ANY_RANK_SETS = frozenset({"valid_primitive"})


@dataclass(frozen=True)
class Primitive:
    """An integrand f, its antiderivative F (None if unknown), and its id: the 1-based line or
    row of the file it came from."""

    problem: Expr
    reference: Expr | None
    row: int


def parse_primitive(
    path: str | Path, row: int, problem: Any, reference: Any, skip_unsupported: bool = False
) -> Primitive:
    """A primitive from two cells (prefix tokens or infix text; the reference may be None); a
    leading `sub Y'` on a prefix problem is dropped.

    Raises:
        DataFormatError: a cell is not an expression of the task (file, row, column named).
        UnsupportedExpressionError: with `skip_unsupported`, for a token the task does not use
            (`I`, `y`, ...): the caller skips the row.
    """
    if isinstance(problem, str):
        problem = " ".join(strip_problem_prefix(problem.split()))
    trees = [
        None if value is None else parse_cell(path, row, column, value, skip_unsupported)
        for column, value in (("problem", problem), ("reference", reference))
    ]
    return Primitive(trees[0], trees[1], row)


def is_solved(criterion: str, set_name: str, rank: int | None) -> bool:
    """Whether a problem of `set_name` whose first passing rank in column `SOLVED[criterion]`
    is `rank` (None: no candidate passed) counts as solved."""
    if criterion == "code" and set_name in ANY_RANK_SETS:
        return rank is not None
    return rank == 1


def solved_primitives(
    results: str | Path | pd.DataFrame,
    sets: Collection[str] | None = None,
    criterion: str = "paper",
) -> list[Primitive]:
    """The primitives a model solved (`criterion`: a key of `SOLVED`), in row order, optionally
    only those of `sets`; each with its row as id: the row of a results file, or the index of
    a results frame.

    Raises:
        ConfigError: an unknown criterion.
        DataFormatError: a missing column, a rank that is not an integer, a solved row without
            a reference, or a cell that does not parse (file, row and column named).
    """
    check_choice("solved criterion", criterion, tuple(SOLVED))
    column = SOLVED[criterion]
    if isinstance(results, pd.DataFrame):
        frame, results_path = results, "results"
    else:
        frame, results_path = read_table(results), results
    require_columns(frame, results_path, (*RESULT_COLUMNS, column))
    primitives = []
    for row, record in zip(frame.index, frame.to_dict("records"), strict=True):
        if sets is not None and record["set"] not in sets:
            continue
        rank = _rank(results_path, row, column, record[column])
        if not is_solved(criterion, record["set"], rank):
            continue
        if not isinstance(record["reference"], str):
            raise DataFormatError(results_path, row, "column 'reference': a solved row needs one")
        primitives.append(
            parse_primitive(results_path, int(row), record["problem"], record["reference"])
        )
    return primitives


def _rank(path: str | Path, row: int, column: str, value: Any) -> int | None:
    if is_missing(value):
        return None
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole:
        raise DataFormatError(path, row, f"column {column!r}: {value!r} is no integer")
    return int(value)


def dataset_primitives(
    path: str | Path, split: str | None = None, exclude: Collection[str] = ()
) -> tuple[list[Primitive], list[tuple[int, str]]]:
    """The primitives of a dataset, and (row, reason) for the rows left out: those whose input
    or output text contains any string of `exclude`, and those outside the task's vocabulary.

    Raises:
        DataFormatError: a malformed file or expression (file and row named); no primitive
            (`lines.some_rows`).
    """
    primitives, skipped = [], []
    for row in read_dataset(path, split, bare_problems=True):
        excluded = [text for text in exclude if text in f"{row.input}\t{row.output or ''}"]
        if excluded:
            skipped.append((row.row, f"contains {excluded[0]!r}"))
            continue
        try:
            primitive = parse_primitive(path, row.row, row.input, row.output, skip_unsupported=True)
        except UnsupportedExpressionError as error:
            skipped.append((row.row, str(error)))
        else:
            primitives.append(primitive)
    return some_rows(path, primitives, skipped), skipped
