"""The `predict` stage: every member greedily decodes one suite; the task's verifier judges it.

One shard per suite, keyed by its name; the spec carries the suite's inputs as ids, so the
study's own suites and external inputs (`genprobe evaluate`) are the same kind of shard, and
evaluating other inputs under a name already used replaces its predictions. A sweep's members
decode as one stacked model (`PredictStage`); a language model's members answer prompts
(`AnswerStage`), in the same rows with the record of each request beside them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import torch

from genprobe.analysis.judged import accepted
from genprobe.analysis.judged import answers as judged_answers
from genprobe.data.seq2seq import EOS, PAD, decoded_outputs
from genprobe.decoding.greedy import greedy
from genprobe.models.member_stack import MemberStack
from genprobe.runs.executor import Stage
from genprobe.runs.shards import Outputs, Shard, parquet_bytes
from genprobe.studies.probe.decode import ModelStage
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.device import cpu_threads, device_facts
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.studies.seed_sensitivity.members import load_members
from genprobe.studies.seed_sensitivity.results import member_labels
from genprobe.studies.seed_sensitivity.study import PREDICT as STAGE
from genprobe.tasks.task import Task, token_accuracy
from genprobe.tasks.tokens import input_lines, output_lines
from genprobe.training.trainer import cuda_determinism, min_lanes
from genprobe.under_test.adapters.prompted import Completions
from genprobe.under_test.sequences import SequenceModel

# Examples × input positions × hidden units held per member while decoding (float32: 4 bytes
# each; a transformer holds keys and values per layer): long inputs (a Chomsky task's length
# 500) are decoded in fewer rows at a time. Per member, so that how a seed's inputs are batched
# does not depend on the seeds beside it.
DECODE_BUDGET = 5_000_000


def predict_shard(suite: str, src: np.ndarray, seeds: Sequence[int]) -> Shard:
    """The shard that decodes `src` ((n, L) symbol ids) as the suite `suite` with the members
    `seeds` (a run grown by more seeds decodes its suites again)."""
    spec = {"suite": suite, "src": np.asarray(src).tolist(), "seeds": list(seeds)}
    return Shard(STAGE, suite, spec)


def prediction_path(suite: str) -> str:
    return f"predictions/{suite}.parquet"


class PredictStage(Stage):
    """Decodes with the run's members, loaded once per worker onto `device`."""

    needs_device: ClassVar[bool] = True

    def __init__(self, run: str | Path, config: SweepConfig, device: str = "cpu") -> None:
        self.run_dir, self.config, self.device = Path(run), config, device

    def setup(self) -> MemberStack:
        return load_members(self.run_dir, self.device)

    def run(self, context: MemberStack, shard: Shard, scratch: Path) -> Outputs:
        suite = shard.spec["suite"]
        src = np.asarray(shard.spec["src"], dtype=np.int64)
        with cpu_threads():
            table = predictions(context, self.config, suite, src)
        return {prediction_path(suite): parquet_bytes(table)}

    def runtime(self) -> dict[str, Any]:
        return device_facts(self.device)


def predictions(
    model: MemberStack, config: SweepConfig, suite: str, src: np.ndarray
) -> pd.DataFrame:
    """Every seed's greedy answer to every example, as judged outputs (`analysis.judged`'s
    schema, `answers`: `correct` where the task's verifier accepts it, else `incorrect`) with
    the sweep's own columns: seed, length (the task's length of the example, which per-length
    reports group by) and, for a task with one right output per input, token_accuracy (the
    share of its positions right)."""
    out, _, valid = decode_and_check(model, config, src)
    return prediction_frame(config.task, member_labels(config), suite, src, out, accepted(valid))


def prediction_frame(
    task: Task,
    labels: Mapping[int, str],
    suite: str,
    src: np.ndarray,
    out: np.ndarray,
    outcome: np.ndarray,
) -> pd.DataFrame:
    """The predictions of the members `labels` (each seed's label, in the members' order) on
    the suite's inputs src (N, L): their outputs (S, N, M) (task ids, -1 after the end) and
    the verifier's outcome of each (S, N), as `predictions` describes the rows (a language
    model's too: `answers`)."""
    seeds, n = np.array(list(labels)), len(src)
    members = len(seeds)
    outputs = np.asarray(out).reshape(members * n, -1)
    frame = pd.DataFrame(
        {
            "member": np.repeat(np.array(list(labels.values()), dtype=object), n),
            "suite": suite,
            "index": np.tile(np.arange(n), members),
            "input": input_lines(task.source_vocab, src) * members,
            "output": output_lines(task.target_vocab, outputs),
            "outcome": np.asarray(outcome).reshape(-1),
            "seed": np.repeat(seeds, n),
            "length": np.tile(task.length(src), members),
        }
    )
    gold = task.solve(src)
    if gold is not None:
        frame["token_accuracy"] = token_accuracy(np.tile(gold, (members, 1)), outputs)
    return judged_answers(frame)


def decode_and_check(
    model: MemberStack, config: SweepConfig, src: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy outputs of every member: ((S, N, M) token indices, (S, N) lengths, (S, N) valid).

    A member may decode one token more than the longest right output, so a right output must
    end with the end-of-sequence token to count.
    """
    tokens = decoded_chunks(model, config, src, functools.partial(greedy, eos=EOS, pad=PAD))
    out, length = decoded_outputs(tokens)
    members, n, width = out.shape
    valid = config.task.verify(
        np.tile(src, (members, 1)), out.reshape(members * n, width), length.reshape(-1)
    )
    return out, length, valid.reshape(members, n)


def decoded_chunks(
    model: MemberStack,
    config: SweepConfig,
    src: np.ndarray,
    decode: Callable[..., Any],
    per_row: int = 1,
) -> Any:
    """`decode(model, src_chunk, max_len=...)` over chunks of src (N, L), its results (tensors
    or tensor dataclasses with leading axes (S, chunk)) joined along the inputs as NumPy arrays.

    Up to one token more than the longest right output is decoded. Chunks hold at most
    `DECODE_BUDGET` of a member's decoding state (`per_row` rows each, e.g. beams), and a stack
    decodes padded to the device's `min_lanes`, as it trains.
    """
    device = next(model.parameters()).device
    members, lanes = model.members, min_lanes(device, type(model))
    if device.type == "cuda":
        cuda_determinism()
    if members < lanes:
        model = model.subset([*range(members), *[0] * (lanes - members)])
    max_len = config.task.max_output_length(src.shape[1]) + 1
    held = config.model.decode_footprint(src.shape[1]) * per_row
    rows = max(1, min(config.eval_batch_size, DECODE_BUDGET // held))
    chunks = []
    for start in range(0, len(src), rows):
        part = torch.as_tensor(src[start : start + rows], device=device)
        chunks.append(decode(model, part, max_len=max_len))
    if isinstance(chunks[0], torch.Tensor):
        return torch.cat([chunk[:members] for chunk in chunks], dim=1).cpu().numpy()
    fields = [f.name for f in dataclasses.fields(chunks[0])]
    return type(chunks[0])(
        *(
            torch.cat([getattr(chunk, name)[:members] for chunk in chunks], dim=1).cpu().numpy()
            for name in fields
        )
    )


class AnswerStage(ModelStage):
    """A language model's members answer one suite (the probe's model under test, loaded once
    per worker, or handed over by a driver that loaded it to check it)."""

    def __init__(self, config: LanguageModelConfig, model: SequenceModel | None = None) -> None:
        super().__init__(config)
        self.model = model

    def __getstate__(self) -> dict[str, Any]:
        return {**vars(self), "model": None}  # a worker elsewhere loads its own

    def setup(self) -> SequenceModel:
        return super().setup() if self.model is None else self.model

    def run(self, context: SequenceModel, shard: Shard, scratch: Path) -> Outputs:
        suite = shard.spec["suite"]
        table = answers(context, member_labels(self.config), suite, self.inputs(shard.spec))
        return {prediction_path(suite): parquet_bytes(table)}

    def runtime(self) -> dict[str, Any]:
        """Where the model runs (hf:, on its own threads); nothing for an endpoint, which
        answers elsewhere."""
        model = self.config.model
        if "device" not in model.spec.kind.settings:
            return {}
        return {**device_facts(model.device), "torch_threads": torch.get_num_threads()}


def answers(
    model: SequenceModel, labels: Mapping[int, str], suite: str, src: np.ndarray
) -> pd.DataFrame:
    """`prediction_frame`'s rows of every member's (`labels`, in the model's order of
    members) greedy answer (or its own sample) to the suite's inputs src (N, L), its outcome
    the verdict (which tells an answer that did not parse from a wrong one), and the record of
    each request: `prompt` (what the member asked) and `completion` (what the model wrote)."""
    ranked = model.candidates(src, 1)
    outcome = ranked.outcomes(model.task, src)[:, :, 0]
    frame = prediction_frame(model.task, labels, suite, src, ranked.out[:, :, 0], outcome)
    frame["prompt"] = ranked.prompt.reshape(-1) if isinstance(ranked, Completions) else None
    frame["completion"] = None if ranked.text is None else ranked.text[:, :, 0].reshape(-1)
    return frame
