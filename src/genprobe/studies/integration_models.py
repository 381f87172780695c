"""Run a model under test on integration problems: read problems and pairs, predict, score.

Files accepted (every problem and candidate as infix text or prefix tokens):
- problems: any dataset `read_dataset` reads (Lample & Charton's `count|input<TAB>output`
  lines, JSONL/Parquet with `input` or `problem` columns, as written by `integration generate`
  and `integration suite`), or text with one problem per line;
- pairs (for scoring and verifying): JSONL `{"problem": …, "candidate": …}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genprobe.errors import DataFormatError, GenprobeError, UnsupportedExpressionError
from genprobe.tasks.integration.datasets import read_dataset
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.reading import read_expression
from genprobe.tasks.lines import json_lines, some_rows
from genprobe.under_test.adapters.integration_model import Candidate


@dataclass(frozen=True)
class FileProblem:
    """A problem as a problem file gives it."""

    line: int  # 1-based line (or row) in the file
    text: str  # as given (prefix tokens joined by spaces)
    expr: Expr
    reference: str | None = None  # the dataset's antiderivative, if it has one


def read_problem_file(
    path: str | Path, split: str | None = None
) -> tuple[list[FileProblem], list[tuple[int, str]]]:
    """The problems of a file, and (line, reason) for those outside the task (skipped).

    Raises:
        DataFormatError: a row without a problem, or one that cannot be parsed (file and line);
            no problem at all (`lines.some_rows`).
    """
    problems, skipped = [], []
    for row in read_dataset(path, split, bare_problems=True):
        try:
            expr = read_expression(row.input, canonical=True, prose=False)
        except UnsupportedExpressionError as error:
            skipped.append((row.row, str(error)))
        except GenprobeError as error:
            raise DataFormatError(path, row.row, f"problem: {error}") from None
        else:
            problems.append(FileProblem(row.row, row.input, expr, row.output))
    return some_rows(path, problems, skipped), skipped


def read_pair_records(path: str | Path) -> list[tuple[int, str | list[str], str | list[str]]]:
    """(line, problem, candidate) per JSONL line, each a string or a list of prefix tokens.

    Raises:
        DataFormatError: not JSON, a missing field, a field of another type, no line.
    """
    records = []
    for number, record in json_lines(path, objects=True):
        values = [record.get(name) for name in ("problem", "candidate")]
        for name, value in zip(("problem", "candidate"), values, strict=True):
            if not (isinstance(value, str) or _is_token_list(value)):
                raise DataFormatError(
                    path, number, f"field {name!r} must be a string or a list of tokens"
                )
        records.append((number, values[0], values[1]))
    return some_rows(path, records)


def read_candidate_pairs(path: str | Path) -> list[tuple[Expr, Expr]]:
    """(problem, candidate) per JSONL line, both parsed as models read them.

    Raises:
        DataFormatError: a record `read_pair_records` refuses, or a field that does not parse.
    """
    pairs = []
    for number, *values in read_pair_records(path):
        pair = []
        for name, value in zip(("problem", "candidate"), values, strict=True):
            try:
                pair.append(read_expression(value, canonical=True, prose=False))
            except GenprobeError as error:
                raise DataFormatError(path, number, f"field {name!r}: {error}") from None
        pairs.append((pair[0], pair[1]))
    return pairs


def _is_token_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(token, str) for token in value)


def prediction_records(
    problems: Sequence[FileProblem], found: Sequence[Sequence[Candidate]]
) -> list[dict[str, Any]]:
    return [
        {
            "line": problem.line,
            "problem": problem.text,
            "candidates": [candidate.to_dict() for candidate in candidates],
        }
        for problem, candidates in zip(problems, found, strict=True)
    ]
