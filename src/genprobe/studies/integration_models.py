"""Run a model under test on integration problems: read problems, predict, score, and
evaluate Fail@k with the verifier.

Files accepted (every problem and candidate as infix text or prefix tokens):
- problems: JSONL (`{"problem": …}` or a bare JSON string per line), Parquet or JSONL written by
  `genprobe integration generate` (`input` column, optional `split`), or text: one problem per
  line, or Lample & Charton's `count|input<TAB>output` lines;
- pairs (for scoring): JSONL `{"problem": …, "candidate": …}`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genprobe.errors import DataFormatError, GenprobeError, UnsupportedExpressionError
from genprobe.models.base import Candidate, Model
from genprobe.studies.integration_files import json_lines, text_lines
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.reading import read_expression
from genprobe.tasks.integration.verifier import Verifier


@dataclass(frozen=True)
class Problem:
    line: int  # 1-based line (or row) in the file
    text: str  # as given (prefix tokens joined by spaces)
    expr: Expr
    reference: str | None = None  # the dataset's antiderivative, if it has one


def _field_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(token, str) for token in value):
        return " ".join(value)
    return None


def _records(path: Path, split: str | None) -> list[tuple[int, Any, Any]]:
    """(line, problem value, reference value) for each row of a problem file."""
    if path.suffix == ".parquet":
        import pandas as pd

        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as error:
            raise DataFormatError(path, None, f"cannot read Parquet: {error}") from None
        if split is not None and "split" in frame:
            frame = frame[frame["split"] == split]
        column = "input" if "input" in frame else "problem"
        if column not in frame:
            raise DataFormatError(path, None, "no 'input' or 'problem' column")
        references = frame["output"] if "output" in frame else [None] * len(frame)
        return [
            (int(row) + 1, value, ref)
            for row, value, ref in zip(frame.index, frame[column], references, strict=True)
        ]
    out = []
    if path.suffix == ".jsonl":
        for number, record in json_lines(path):
            if not isinstance(record, dict):
                out.append((number, record, None))
            elif split is None or record.get("split", split) == split:
                value = record.get("problem", record.get("input"))
                out.append((number, value, record.get("output", record.get("reference"))))
        return out
    for number, line in text_lines(path):
        head, tab, reference = line.partition("\t")
        count, bar, problem = head.partition("|")
        text = problem if bar and count.strip().isdigit() else head
        out.append((number, text, reference if tab else None))
    return out


def read_problems(
    path: str | Path, split: str | None = None
) -> tuple[list[Problem], list[tuple[int, str]]]:
    """The problems of a file, and (line, reason) for those outside the task (skipped).

    Raises:
        DataFormatError: a row without a problem, or one that cannot be parsed (file and line).
    """
    path = Path(path)
    problems, skipped = [], []
    for line, value, reference in _records(path, split):
        text = _field_text(value)
        if text is None:
            raise DataFormatError(path, line, "expected a problem as a string or token list")
        try:
            problems.append(
                Problem(line, text, read_expression(text, canonical=True), _field_text(reference))
            )
        except UnsupportedExpressionError as error:
            skipped.append((line, str(error)))
        except GenprobeError as error:
            raise DataFormatError(path, line, f"problem: {error}") from None
    return problems, skipped


def read_pairs(path: str | Path) -> list[tuple[Expr, Expr]]:
    """(problem, candidate) per JSONL line, both parsed.

    Raises:
        DataFormatError: not JSON, a missing field, or a field that cannot be parsed.
    """
    pairs = []
    for number, record in json_lines(path, objects=True):
        pair = []
        for name in ("problem", "candidate"):
            text = _field_text(record.get(name))
            if text is None:
                raise DataFormatError(path, number, f"field {name!r}: a string or token list")
            try:
                pair.append(read_expression(text, canonical=True))
            except GenprobeError as error:
                raise DataFormatError(path, number, f"field {name!r}: {error}") from None
        pairs.append((pair[0], pair[1]))
    return pairs


def prediction_records(
    problems: Sequence[Problem], found: Sequence[Sequence[Candidate]]
) -> list[dict[str, Any]]:
    return [
        {
            "line": problem.line,
            "problem": problem.text,
            "candidates": [candidate.to_dict() for candidate in candidates],
        }
        for problem, candidates in zip(problems, found, strict=True)
    ]


@dataclass(frozen=True)
class Evaluation:
    rows: list[dict[str, Any]]  # one per problem (see `evaluate`)
    summary: dict[str, Any]


def evaluate(
    model: Model,
    problems: Sequence[Problem],
    ks: Sequence[int],
    verifier: Verifier,
) -> Evaluation:
    """Fail@k for each k: a problem fails at k when none of its k best candidates passes the
    verifier (under its timeout policy).

    Candidates are verified rank by rank, and a problem's later candidates are not verified
    once one has passed, so Fail@50 costs little more than Fail@1 on a good model.
    """
    k_max = max(ks)
    start = time.perf_counter()
    found = model.candidates([problem.expr for problem in problems], k_max)
    model_seconds = time.perf_counter() - start
    first_pass: list[int | None] = [None] * len(problems)
    outcomes: list[list[str]] = [[] for _ in problems]
    for rank in range(k_max):
        todo = [i for i, cands in enumerate(found) if first_pass[i] is None and rank < len(cands)]
        if not todo:
            break
        pairs = [(problems[i].expr, found[i][rank].answer) for i in todo]
        verdicts = verifier.verify_many(pairs)
        for i, verdict in zip(todo, verdicts, strict=True):
            outcomes[i].append(verdict.outcome.value)
            if verdict.passed:
                first_pass[i] = rank + 1
    rows = []
    for problem, candidates, passed_at, seen in zip(
        problems, found, first_pass, outcomes, strict=True
    ):
        best = candidates[0].to_dict() if candidates else {}
        row = {
            "line": problem.line,
            "problem": problem.text,
            "problem_prefix": " ".join(to_prefix(problem.expr)),
            "reference": problem.reference,
            "n_candidates": len(candidates),
            "first_pass_rank": passed_at,
            "outcomes": seen,
            "top1": best.get("infix") or best.get("raw"),
            "top1_prefix": best.get("prefix"),
            "top1_score": best.get("score"),
            "top1_logprob": best.get("logprob"),
        }
        for k in ks:
            row[f"fail@{k}"] = passed_at is None or passed_at > k
        rows.append(row)
    n = len(rows)
    summary = {
        "model": model.describe(),
        "n_problems": n,
        "policy": verifier.config.policy.value,
        "fail_at": {str(k): sum(r[f"fail@{k}"] for r in rows) / n if n else None for k in ks},
        "model_seconds": round(model_seconds, 3),
        "seconds": round(time.perf_counter() - start, 3),
    }
    return Evaluation(rows, summary)
