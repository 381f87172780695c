"""The `decode` stage: every member of the model decodes one suite, or one chunk of it
(`--shard-size`), greedy, and beam search for Fail@k, or with `--temperature` the distinct
outputs among k samples; the task's verifier
judges every candidate, and the model scores a right output (the gold one of a task with one
per input, else the suite's reference where it knows one), which splits failures into search
errors (the model prefers the right output, its search missed it) and model errors (Welleck et
al. 2022, §6).

Result rows (one per member and input): member, suite, kind, name, index, origin, parts (a
composite's: the pool rows it joins; composition suites only), input, readable (false: the
model cannot take the input at all, e.g. longer than its position table: it gets no candidate,
and reports count it apart), gold (null where a task
has many right outputs), reference (only where the suite carries known right outputs for such a
task: `suites.py`; null where none is known); the record of each request: prompt (the text a
language model's member was asked; null for other models), completion (the greedy answer as
the model gave it: a language model's completion, an integration model's answer, raw where it
did not parse; null for models whose outputs are their ids), output (greedy, in the task's
tokens: read from the completion) and outcome (its verdict); first_correct (1-based rank among
the k candidates, null: none; greedy's 1 for k = 1), candidates, candidate_outcomes (null after
the first right candidate's window of ranks: `Ranked.outcomes`) and candidate_logprobs
(k > 1), candidate_completions (k > 1, each candidate as the model gave it, as `completion`;
only for models that give text), gold_logprob (of the gold output, or else of the reference)
and output_logprob (null where the model gives none or no right output is known), error
("search", "model", or null for a success or an unscored model), and the task's features of
the input as `feature: NAME` columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from genprobe.runs.executor import Stage
from genprobe.runs.pool import DeadlineCounts
from genprobe.runs.shards import Outputs, Shard, json_bytes, parquet_bytes
from genprobe.studies.probe.config import ANSWERS, ProbeConfig
from genprobe.studies.probe.study import DECODE
from genprobe.studies.probe.suites import Suite
from genprobe.tasks.registry import task_probes
from genprobe.tasks.task import Task
from genprobe.tasks.tokens import input_lines, output_lines
from genprobe.tasks.verdict import Outcome
from genprobe.under_test.adapters.prompted import Completions
from genprobe.under_test.sequences import SequenceModel

FEATURE = "feature: "
# a result file's metadata: the model's own deadline hits over its inputs, for a model with a
# deadline of its own (`IntegrationSequenceModel.deadline_counts`)
MODEL_DEADLINES = "model_deadlines"
GREEDY, FIRST = ANSWERS  # a member's one answer: its greedy output, or its first candidate


def decode_shards(suite: Suite, k: int, size: int | None = None) -> list[Shard]:
    """The shards that decode `suite`: one (`size` None, the layout of runs made before
    `--shard-size`), or one per `size` of its inputs, each naming the first (`start`)."""
    if size is None:
        return [Shard(DECODE, suite.key, _spec(suite, k, slice(None)))]
    starts = range(0, len(suite.src), size)
    return [
        Shard(
            DECODE, f"{suite.key}.{chunk:05d}", _spec(suite, k, slice(start, start + size), chunk)
        )
        for chunk, start in enumerate(starts)
    ]


def _spec(suite: Suite, k: int, rows: slice, chunk: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "suite": suite.key,
        "kind": suite.kind,
        "name": suite.name,
        "src": suite.src[rows].tolist(),
        "origin": suite.origin[rows].tolist(),
        "k": k,
    }
    if suite.reference is not None:
        spec["reference"] = suite.reference[rows].tolist()
    if suite.parts is not None:
        spec["parts"] = suite.parts[rows].tolist()
    if chunk is not None:
        spec.update(chunk=chunk, start=rows.start)
    return spec


def result_path(key: str, chunk: int | None = None) -> str:
    """A decode shard's file: the suite's, or its chunk's."""
    return f"results/{key}.parquet" if chunk is None else f"results/{key}/{chunk:05d}.parquet"


class ModelStage(Stage):
    """A stage of the model under test, loaded once per worker; its shards hold inputs."""

    needs_device: ClassVar[bool] = True

    def __init__(self, config: ProbeConfig) -> None:
        self.config = config

    def setup(self) -> SequenceModel:
        return self.config.model.sequence_model(self.config.load_task())

    @staticmethod
    def inputs(spec: Mapping[str, Any]) -> np.ndarray:
        """(N, L) the input ids of a shard's spec."""
        return np.asarray(spec["src"], dtype=np.int64).reshape(len(spec["src"]), -1)


class DecodeStage(ModelStage):
    """Decodes a suite with every member."""

    def run(self, context: SequenceModel, shard: Shard, scratch: Path) -> Outputs:
        spec = shard.spec
        src = self.inputs(spec)
        reference = spec.get("reference")
        if reference is not None:
            reference = np.asarray(reference, dtype=np.int64).reshape(len(reference), -1)
        config = self.config
        # a model with a deadline of its own (`sympy`): how many problems ran out of it
        counts = getattr(context, "deadline_counts", None)
        before = counts() if counts is not None else None
        frame = decoded(
            context, context.task, src, spec["k"], reference, config.temperature, config.seed,
            config.answer,
        )  # fmt: skip
        frame["index"] += spec.get("start", 0)  # its place in the suite
        frame.insert(1, "suite", spec["suite"])
        frame.insert(2, "kind", spec["kind"])
        frame.insert(3, "name", spec["name"])
        origin = np.asarray(spec["origin"], np.int64)
        frame.insert(5, "origin", np.tile(origin, len(context.members)))
        if "parts" in spec:
            frame.insert(6, "parts", spec["parts"] * len(context.members))
        path = result_path(spec["suite"], spec.get("chunk"))
        if before is None:
            return {path: parquet_bytes(frame)}
        return {path: _with_deadlines(frame, before, context.deadline_counts())}


def _with_deadlines(frame: pd.DataFrame, before: DeadlineCounts, after: DeadlineCounts) -> bytes:
    """The rows as Parquet, the model's own deadline hits over them in its metadata
    (`MODEL_DEADLINES`)."""
    hits = DeadlineCounts(
        after.items - before.items, after.over_budget - before.over_budget, after.hung - before.hung
    )
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = {**(table.schema.metadata or {}), MODEL_DEADLINES.encode(): json_bytes(asdict(hits))}
    buffer = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(metadata), buffer)
    return buffer.getvalue().to_pybytes()


def decoded(
    model: SequenceModel,
    task: Task,
    src: np.ndarray,
    k: int,
    reference: np.ndarray | None = None,
    temperature: float | None = None,
    seed: int = 0,
    answer: str = GREEDY,
) -> pd.DataFrame:
    """One row per (member, input) of src (N, L): see the module's description. `reference`
    (N, W): a known right output of each input (-1 rows: none), for a task without `solve`.
    With a `temperature`, the k candidates are `model.sampled`'s, not the beam's. `answer`:
    the member's one answer (output, outcome), its greedy output or (`FIRST`, k > 1) the first
    of its candidates, with no greedy decode."""
    greedy = None if answer == FIRST and k > 1 else model.candidates(src, 1)
    greedy_outcomes = None if greedy is None else greedy.outcomes(task, src)
    beam = outcomes = None
    if k > 1:
        beam = (
            model.candidates(src, k)
            if temperature is None
            else model.sampled(src, k, temperature, seed)
        )
        outcomes = beam.outcomes(task, src)
    # the member's one answer: its greedy output, or the first of its candidates
    answered, answered_outcomes = (beam, outcomes) if greedy is None else (greedy, greedy_outcomes)
    members, n = answered.out.shape[:2]
    out, length = answered.out[:, :, 0], answered.length[:, :, 0]
    outcome = answered_outcomes[:, :, 0]
    asked = isinstance(answered, Completions)  # a language model's prompts
    frame = pd.DataFrame(
        {
            "member": np.repeat(np.array(model.members, dtype=object), n),
            "index": np.tile(np.arange(n), members),
            "input": input_lines(task.source_vocab, src) * members,
            "readable": np.tile(model.readable(src), members),
            "gold": None,
            "prompt": answered.prompt.reshape(-1) if asked else None,
            "completion": None if answered.text is None else answered.text[:, :, 0].reshape(-1),
            "output": output_lines(task.target_vocab, out.reshape(members * n, -1)),
            "outcome": outcome.reshape(-1),
        }
    )
    top_logprob, top_outcome = answered.logprob[:, :, 0], outcome
    if beam is None:
        first = np.where(outcome == Outcome.CORRECT.value, 1.0, np.nan)
    else:
        correct = outcomes == Outcome.CORRECT.value
        first = np.where(correct.any(axis=2), correct.argmax(axis=2) + 1.0, np.nan)
        width = beam.out.shape[-1]
        texts = output_lines(task.target_vocab, beam.out.reshape(-1, width))
        frame["candidates"] = np.array(texts, dtype=object).reshape(members * n, k).tolist()
        if beam.text is not None:
            frame["candidate_completions"] = beam.text.reshape(members * n, k).tolist()
        frame["candidate_outcomes"] = list(outcomes.reshape(members * n, k))
        frame["candidate_logprobs"] = list(beam.logprob.reshape(members * n, k))
        top_logprob, top_outcome = beam.logprob[:, :, 0], outcomes[:, :, 0]
    frame["first_correct"] = pd.array(first.reshape(-1), dtype="Int64")
    frame["gold_logprob"] = np.nan
    frame["output_logprob"] = np.nan
    frame["error"] = None
    gold = task.solve(src)  # a right output of each input, where one is known
    if gold is not None:
        known = np.ones(n, dtype=bool)
        frame["gold"] = output_lines(task.target_vocab, gold) * members
    elif reference is not None:
        gold, known = reference, (reference >= 0).any(axis=1)
        texts = np.array(output_lines(task.target_vocab, gold), dtype=object)
        frame["reference"] = np.tile(np.where(known, texts, None), members)
    if gold is not None and model.can_score:
        if k == 1:
            top_logprob = model.score(src, out, length)
        gold_logprob = model.score(src, gold, (gold >= 0).sum(axis=1))
        gold_logprob = np.where(known, gold_logprob, np.nan)
        # an answer that could not be read has no score to weigh the right one against
        scored = ~np.isnan(gold_logprob) & ~np.isnan(top_logprob)
        judged = np.isnan(first) & (top_outcome != Outcome.UNPARSEABLE.value) & scored
        error = np.where(gold_logprob > top_logprob, "search", "model")
        frame["gold_logprob"] = gold_logprob.reshape(-1)
        frame["output_logprob"] = top_logprob.reshape(-1)
        frame["error"] = np.where(judged, error, None).reshape(-1)
    for name, values in task_probes(task).features(src).items():
        frame[FEATURE + name] = np.tile(np.asarray(values), members)
    return frame
