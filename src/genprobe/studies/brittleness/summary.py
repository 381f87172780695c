"""What a brittleness run's result files add up to: every number its report shows.

Fail@k per suite and per set under both timeout policies, the verifier's outcomes,
Unresolved@k (the search-vs-model analysis), the large search's table, how many verifications
met their deadlines (with a warning where too many did), the suites asked for that hold no
problem and why, and the share of the training data's integers per coefficient range.
`write_summary` writes it to `summary.json`, beside `examples.parquet` (the table it was taken
of); the report (`report.py`) renders it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.analysis import large_search
from genprobe.runs.atomic import atomic_path, write_json
from genprobe.runs.pool import DeadlineCounts
from genprobe.studies.brittleness import tables
from genprobe.studies.brittleness.config import recorded_setting
from genprobe.tasks.integration.suites import FAMILIES
from genprobe.tasks.integration.suites.primitives import SOLVED, is_solved
from genprobe.tasks.verdict import deadline_counts

# the suites made of problems the model solved -> the sets those come from
SOLVED_FROM = {
    "robustness-validation": ("valid_primitive",),
    "compositionality": tuple(s for family in FAMILIES.values() for s in family.sets),
}
# criterion of solved -> what the report says of a primitive the model solved
SOLVES = {
    "paper": "solves at rank 1",
    "code": "solves as the authors' code counts it (a verifier timeout passing; a simple "
    "primitive at rank 1, a validation problem at any rank of its candidates)",
}


def summarize_run(
    config: Mapping[str, Any],
    examples: pd.DataFrame,
    budget_rows: pd.DataFrame | None,
    model_deadlines: DeadlineCounts | None,
    training: Mapping[str, Any],
) -> dict[str, Any]:
    """The JSON-ready summary of a run: its recorded `config`, and its results as `results.py`
    reads them (`read_examples`, `read_budget`, `read_model_deadlines`, `read_training`)."""
    ks = config["ks"]
    problems = tables.judged(examples, config)
    summary: dict[str, Any] = {
        "fail": {
            policy: _records(tables.fail_table(problems, ["suite"], ks, policy))
            for policy in tables.POLICIES
        },
        "fail_by_set": {
            policy: _records(tables.fail_table(problems, ["suite", "set", "template"], ks, policy))
            for policy in tables.POLICIES
        },
        "outcomes": _records(tables.outcome_counts(examples)),
        "unresolved": _records(tables.unresolved(problems, ks)),
    }
    verified = _deadlines(examples)
    summary["deadlines"] = asdict(verified)
    warnings = [verified.warning("candidates verified")]
    if budget_rows is not None:
        keys = ["suite", "row"]
        per_problem = large_search.per_input(budget_rows, keys)
        ordinary = examples.set_index(keys)["first_correct_rank"]
        summary["budget"] = _records(large_search.fixes(per_problem, ordinary, max(ks), keys))
        searched = _budget_deadlines(budget_rows)
        summary["budget_deadlines"] = asdict(searched)
        warnings.append(searched.warning("candidates of the search budget verified"))
    if model_deadlines is not None:
        summary["model_deadlines"] = asdict(model_deadlines)
        warnings.append(model_deadlines.warning("problems the model was asked (its own deadline)"))
    summary["deadline_warnings"] = [w for w in warnings if w]
    solved_by = recorded_setting(config, "solved_by")
    summary["left_out"] = left_out(examples, config["suites"], solved_by)
    if "integers" in training:
        summary["training_integers"] = _integer_shares(training)
    return summary


def write_summary(run: str | Path, examples: pd.DataFrame, summary: dict[str, Any]) -> None:
    """`examples.parquet` (every problem with its candidates and verdicts) and `summary.json`."""
    with atomic_path(Path(run) / "examples.parquet") as tmp:
        examples.to_parquet(tmp, index=False)
    write_json(Path(run) / "summary.json", summary)


def left_out(
    examples: pd.DataFrame, requested: Sequence[str], solved_by: str = "paper"
) -> dict[str, str]:
    """The suites asked for that hold no problem, each with why."""
    reasons = {}
    for suite in (s for s in requested if s not in set(examples["suite"])):
        if suite in SOLVED_FROM:
            sets = SOLVED_FROM[suite]
            source = examples[examples["set"].isin(sets)]
            ranks = source[SOLVED[solved_by]]
            solved = sum(
                is_solved(solved_by, set_name, None if pd.isna(rank) else int(rank))
                for set_name, rank in zip(source["set"], ranks, strict=True)
            )
            reasons[suite] = (
                f"made of the problems of {', '.join(sets)} that the model {SOLVES[solved_by]}, "
                f"and it solved {solved} of {len(source)}"
            )
        else:
            reasons[suite] = "no problem of it was built"
    return reasons


def _deadlines(examples: pd.DataFrame) -> DeadlineCounts:
    """Candidates verified, and how many timed out on the CPU budget or the backstop."""
    return deadline_counts(
        (c["outcome"], c["method"])
        for candidates in examples["candidates"]
        for c in candidates
        if c["outcome"] is not None
    )


def _budget_deadlines(rows: pd.DataFrame) -> DeadlineCounts:
    """The search budget's distinct answers (each verified once), and how many timed out."""
    verified = rows.drop_duplicates(["suite", "row", "answer"])
    methods = verified["method"] if "method" in verified else [""] * len(verified)
    return deadline_counts(zip(verified["outcome"], methods, strict=True))


def _integer_shares(training: Mapping[str, Any]) -> dict[str, Any]:
    """The training data's positive integers per coefficient range, as percentages."""
    integers = training["integers"]
    total = integers["total"]
    share = {
        label: 100.0 * count / total if total else None
        for label, count in integers["in_range"].items()
    }
    return {"data": training["data"], "total": total, "share": share}


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows: NaN and NA as null, NumPy scalars as Python ones."""
    return [{key: _plain(value) for key, value in row.items()} for row in frame.to_dict("records")]


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value
