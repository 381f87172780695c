"""Decode and verify one shard of problems: the unit of work of a brittleness run and of
`integration evaluate`.

A shard's spec holds its problems (prefix tokens, and the known antiderivative where there is
one), so it is a pure function of its spec and the run's settings. Within a shard, problems go
to the model in batches, through the adapter every study asks an integration model with
(`IntegrationSequenceModel.answers`: a `Ranked` that keeps each answer as the model gave it),
and the verifier pool checks batch b after the model has decoded it or while it decodes batch
b + 1, whichever the worker's `schedule.Schedule` finds faster (the results are the same).
The candidates the model gave are verified in rank order, stopping after the window that
holds the first correct one (`Answers.verdicts`: the probe's judging of an integration model's
answers, `Answers.judge_with`, by the run's own verifier settings: workers, deadline, timeout
policy, where the probe's are the task's). For a model that gives log-probabilities, the
reference of every problem not solved at rank 1 is scored teacher-forced
(`IntegrationSequenceModel.score_answers`), for the search-vs-model analysis (Welleck et al.
2022, section 6).

Result rows (one per problem): suite, row, problem, reference, readable (false: the model
cannot take the problem, e.g. longer than its position table), n_candidates,
first_correct_rank and first_generous_rank (1-based ranks, or null), reference_logprob (or
null), and `candidates`: a list of {rank, answer, parsed, score, logprob, outcome, method,
seconds}, where `answer` is the prefix of a parsed candidate, else the raw output, and
`outcome` is null for candidates after the first correct one's window (not verified).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from genprobe.runs.executor import Stage
from genprobe.runs.pool import DeadlineCounts
from genprobe.runs.shards import Outputs, Shard
from genprobe.studies.brittleness.schedule import Mode, Schedule
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.prefix import from_prefix, to_prefix
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.under_test.adapters.integration_tokens import (
    Answers,
    IntegrationSequenceModel,
    load_integration_model,
)
from genprobe.under_test.settings import ModelSettings
from genprobe.verification.ranked import RankedResult

# a result file's metadata: the model's own deadline hits over its problems
# (`IntegrationSequenceModel.deadline_counts`)
MODEL_DEADLINES = "model_deadlines"

CANDIDATE = pa.struct(
    [
        ("rank", pa.int32()),
        ("answer", pa.string()),
        ("parsed", pa.bool_()),
        ("score", pa.float64()),
        ("logprob", pa.float64()),
        ("outcome", pa.string()),
        ("method", pa.string()),
        ("seconds", pa.float64()),
    ]
)
RESULT_SCHEMA = pa.schema(
    [
        ("suite", pa.string()),
        ("row", pa.int64()),
        ("problem", pa.string()),
        ("reference", pa.string()),
        ("readable", pa.bool_()),
        ("n_candidates", pa.int32()),
        ("first_correct_rank", pa.int32()),
        ("first_generous_rank", pa.int32()),
        ("reference_logprob", pa.float64()),
        ("candidates", pa.list_(CANDIDATE)),
    ]
)


@dataclass(frozen=True)
class SuiteRow:
    """A problem of a suite, with its row there and its reference antiderivative (if any)."""

    row: int
    problem: Expr
    reference: Expr | None


def shard_spec(suite: str, chunk: int, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A solve shard's spec: `rows` are {row, problem, reference} with prefix-token strings."""
    return {"suite": suite, "chunk": chunk, "rows": list(rows)}


def result_path(suite: str, chunk: int) -> str:
    return f"results/{suite}/{chunk:05d}.parquet"


def read_problems(rows: Sequence[dict[str, Any]]) -> list[SuiteRow]:
    def read(text: str | None) -> Expr | None:
        return None if text is None else from_prefix(text.split())

    return [SuiteRow(int(r["row"]), read(r["problem"]), read(r.get("reference"))) for r in rows]


class SolveContext(NamedTuple):
    """A solve worker's state, kept from shard to shard."""

    model: IntegrationSequenceModel
    verifier: Verifier
    schedule: Schedule


@dataclass(frozen=True)
class SolveStage(Stage):
    needs_device: ClassVar[bool] = True
    model: ModelSettings
    verifier: VerifierConfig
    k_max: int
    score_references: bool  # score each unsolved problem's reference (needs `can_score`)
    overlap: str = "auto"  # decode/verify schedule: auto, on or off (see `schedule`)
    notes: Any = None  # a queue (the executor's channel) that gets the schedule's choice

    def setup(self) -> SolveContext:
        note = (lambda line: None) if self.notes is None else self.notes.put
        return SolveContext(
            load_integration_model(self.model, min_beam=self.k_max),
            Verifier(self.verifier),
            Schedule(self.overlap, note=note),
        )

    def close(self, context: SolveContext) -> None:
        context.model.close()
        context.verifier.close()

    def runtime(self) -> dict[str, Any]:
        return self.model.runtime()

    def run(self, context: SolveContext, shard: Shard, scratch: Path) -> Outputs:
        spec = shard.spec
        table = solve(
            context.model,
            context.verifier,
            spec["suite"],
            read_problems(spec["rows"]),
            self.k_max,
            self.model.decoding.batch_size,
            self.score_references and context.model.can_score,
            context.schedule,
        )
        buffer = pa.BufferOutputStream()
        pq.write_table(table, buffer)
        return {result_path(spec["suite"], spec["chunk"]): buffer.getvalue().to_pybytes()}


def solve(
    model: IntegrationSequenceModel,
    verifier: Verifier,
    suite: str,
    problems: Sequence[SuiteRow],
    k_max: int,
    batch_size: int,
    score_references: bool,
    schedule: Schedule | None = None,
) -> pa.Table:
    """Top-`k_max` candidates of every problem, verified in rank order (see module docs), the
    batches decoded and verified as `schedule` says (default: a new `auto` one)."""
    schedule = schedule or Schedule()
    before = model.deadline_counts()
    decoded: list[tuple[Sequence[SuiteRow], np.ndarray, Answers]] = []
    verdicts: list[np.ndarray] = []
    with ThreadPoolExecutor(1, thread_name_prefix="verify") as background:
        # the batch decoded last, not verified yet: its problems and their candidates
        pending: tuple[list[Expr], Answers] = ([], model.answers([], k_max))
        # one step more than there are batches: step i decodes batch i and verifies batch i - 1
        for start in range(0, len(problems) + batch_size, batch_size):
            batch = problems[start : start + batch_size]
            integrands = [p.problem for p in batch]
            with schedule.step(decoded=len(batch), verified=len(pending[0])) as mode:
                verifying = background.submit(pending[1].verdicts, pending[0], verifier.verify_many)
                if mode is Mode.IN_TURN:
                    verdicts.append(verifying.result())
                answers = model.answers(integrands, k_max)
                if mode is Mode.OVERLAPPED:
                    verdicts.append(verifying.result())
            if batch:
                decoded.append((batch, model.reads(integrands), answers))
            pending = (integrands, answers)
    solved = [
        (problem, {"suite": suite, **row})
        for (batch, readable, answers), judged in zip(decoded, verdicts[1:], strict=True)
        for problem, row in zip(batch, _rows(batch, readable, answers, judged[0]), strict=True)
    ]
    if score_references:
        todo = [
            (problem, row)
            for problem, row in solved
            if row["readable"] and problem.reference is not None and row["first_correct_rank"] != 1
        ]
        scores = model.score_answers(
            [problem.problem for problem, _ in todo], [problem.reference for problem, _ in todo]
        )
        for (_, row), logprob in zip(todo, scores[0], strict=True):
            row["reference_logprob"] = float(logprob)
    rows = [row for _, row in solved]
    table = pa.Table.from_pylist(rows, schema=RESULT_SCHEMA)
    after = model.deadline_counts()
    if before is None or after is None:
        return table
    hits = DeadlineCounts(
        after.items - before.items, after.over_budget - before.over_budget, after.hung - before.hung
    )
    return table.replace_schema_metadata({MODEL_DEADLINES: json.dumps(asdict(hits))})


def _rows(
    problems: Sequence[SuiteRow], readable: np.ndarray, ranked: Answers, verdicts: np.ndarray
) -> list[dict[str, Any]]:
    """The result rows of a batch (see module docs; `reference_logprob` still null)."""
    rows = []
    for i, problem in enumerate(problems):
        result = RankedResult([v for v in verdicts[i] if v is not None])
        n_candidates = int(ranked.finished[0, i].sum())
        records = []
        for rank in range(n_candidates):
            verdict = verdicts[i, rank]
            logprob = ranked.logprob[0, i, rank]
            records.append(
                {
                    "rank": rank + 1,
                    "answer": ranked.text[0, i, rank],
                    "parsed": isinstance(ranked.answers[0, i, rank], Expr),
                    "score": float(ranked.score[0, i, rank]),
                    "logprob": None if np.isnan(logprob) else float(logprob),
                    "outcome": None if verdict is None else verdict.outcome.value,
                    "method": None if verdict is None else verdict.method,
                    "seconds": None if verdict is None else round(verdict.seconds, 6),
                }
            )
        rows.append(
            {
                "row": problem.row,
                "problem": " ".join(to_prefix(problem.problem)),
                "reference": None
                if problem.reference is None
                else " ".join(to_prefix(problem.reference)),
                "readable": bool(readable[i]),
                "n_candidates": n_candidates,
                "first_correct_rank": result.first_correct,
                "first_generous_rank": result.first_generous,
                "reference_logprob": None,
                "candidates": records,
            }
        )
    return rows
