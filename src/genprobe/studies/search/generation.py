"""One generation of the failure search as a shard: decode its inputs with every member of the
model (a sweep's seeds, or a language model's prompt formats x draws x samples; greedy,
`SequenceModel.candidates(src, 1)`, or with `--k` its beam's top k, or with `--temperature`
the distinct outputs among k samples), and of the `--against`
sweep after them, judge each output (`Task.outcomes`: a member is right at k when one of its k
candidates is), and score each input's fitness: the target's failure score times the
`--fitness` weight of its text (`fitness.py`; `any_failure`, the default, weighs every text
alike). The failure scores:

    most            the share of members that fail it
    any             1 if any member fails it, else 0
    disagree:A,B    1 if seed A is right and seed B is not, else 0 (with --against: seed A of
                    the run, seed B of --against's; of a language model: member positions)
    disagree        with --against: the share of the run's seeds right less the share of
                    --against's seeds right, or 0 if that is negative

"Fail" is any outcome but correct (an unparseable output fails too). The shard's spec holds the
inputs (as ids), so the model's worker needs nothing else; the driver made them (`search.py`).

Files: `generations/NNNNN.parquet` (one row per input: its ids and text (`Probes.input_text`),
the operator and parent that made it, each member's outcome and answer at k, how many members
failed, its fitness, the right output where the task has one; answers and right outputs as
`Probes.output_text` writes them) and `generations/NNNNN.json` (the generation's effort:
mutants asked for, not applicable, invalid and duplicate per operator; inputs evaluated, and
those left unscored because a model cannot take them: `unreadable`). "position" is an input's
place among the shard's inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from genprobe.runs.executor import Stage
from genprobe.runs.shards import Outputs, Shard, json_bytes, parquet_bytes
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.fitness import Fitness, Target, failure_score
from genprobe.studies.search.loop import generation_path
from genprobe.studies.search.study import GENERATION
from genprobe.tasks.probing import from_input_keys
from genprobe.tasks.registry import task_probes
from genprobe.tasks.task import Task
from genprobe.tasks.verdict import Outcome
from genprobe.under_test.sequences import SequenceModel


def generation_shard(
    generation: int, inputs: list[str], operator: list[str], parent: list[str | None],
    effort: dict[str, Any],
) -> Shard:  # fmt: skip
    """`inputs` as `tasks.probing.input_keys`; `parent`: the key each mutant was made from
    (None: a base input)."""
    spec = {
        "generation": generation, "inputs": inputs, "operator": operator, "parent": parent,
        "effort": effort,
    }  # fmt: skip
    return Shard(GENERATION, f"{generation:05d}", spec)


def judged(
    model: SequenceModel,
    src: np.ndarray,
    k: int = 1,
    temperature: float | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(S, N) each member's outcome and answer (text) at k: greedy's for k = 1; for a larger
    k, of the first right candidate of its beam's top k (with a `temperature`: of its distinct
    samples, `SequenceModel.sampled`), else of its top candidate."""
    if not len(src):  # a generation whose mutants were all met before
        empty = np.empty((len(model.members), 0), dtype=object)
        return empty, empty
    if temperature is None:
        ranked = model.candidates(src, k)
    else:
        ranked = model.sampled(src, k, temperature, seed)
    members, n = ranked.out.shape[:2]
    outcomes = ranked.outcomes(model.task, src)
    right = outcomes == Outcome.CORRECT.value
    chosen = np.where(right.any(axis=2), right.argmax(axis=2), 0)[:, :, None]
    out = np.take_along_axis(ranked.out, chosen[..., None], axis=2)[:, :, 0]
    texts = task_probes(model.task).output_text(out.reshape(members * n, -1))
    outcome = np.take_along_axis(outcomes, chosen, axis=2)[:, :, 0]
    return outcome, np.array(texts, dtype=object).reshape(members, n)


def gold_lines(task: Task, src: np.ndarray) -> list[str | None]:
    """The right output of each input as text, where the task has exactly one."""
    gold = task.solve(src)
    return [None] * len(src) if gold is None else task_probes(task).output_text(gold)


@dataclass(frozen=True)
class GenerationStage(Stage):
    config: SearchConfig
    target: Target
    targets: tuple[str, ...] = ()  # of --targets (`SearchConfig.target_texts`)
    needs_device: ClassVar[bool] = True

    def setup(self) -> tuple[tuple[SequenceModel, ...], Fitness]:
        """The model searched (a sweep's seeds, or a language model asked its task with its
        prompt grid), and --against's sweep after it; the fitness."""
        config = self.config
        if config.workers is not None:
            import torch

            torch.set_num_threads(config.workers)
        task = config.load_task()
        against = () if config.against is None else (replace(config.model, spec=config.against),)
        models = tuple(model.sequence_model(task) for model in (config.model, *against))
        return models, config.make_fitness(self.targets)

    def runtime(self) -> dict[str, Any]:
        return {"device": self.config.model.device}

    def run(
        self, context: tuple[tuple[SequenceModel, ...], Fitness], shard: Shard, scratch: Path
    ) -> Outputs:
        (models, weighed), spec = context, shard.spec
        task = models[0].task
        generation = int(spec["generation"])
        src = from_input_keys(spec["inputs"])
        # an input some model cannot take (`SequenceModel.readable`) is counted, not scored
        taken = np.logical_and.reduce([model.readable(src) for model in models])
        decoding = (self.config.k, self.config.temperature, self.config.seed)
        outcomes, answers = (
            np.concatenate(part)[:, taken]
            for part in zip(*(judged(m, src, *decoding) for m in models), strict=True)
        )
        rows = np.flatnonzero(taken)
        src = src[rows]
        failed = outcomes != Outcome.CORRECT.value
        texts = task_probes(task).input_text(src)
        frame = pd.DataFrame(
            {
                "generation": generation,
                "position": rows.astype(np.int64),
                "input": [spec["inputs"][i] for i in rows],
                "text": texts,
                "operator": [spec["operator"][i] for i in rows],
                "parent": [spec["parent"][i] for i in rows],
                "outcomes": [list(column) for column in outcomes.T],
                "answers": [list(column) for column in answers.T],
                "failed": failed.sum(axis=0),
                "fitness": np.asarray(
                    weighed(texts, failure_score(failed, self.target)), dtype=float
                ),
                "gold": gold_lines(task, src),
            }
        )
        effort = {
            **spec["effort"], "generation": generation, "evaluated": len(src),
            "unreadable": int((~taken).sum()),
        }  # fmt: skip
        return {
            generation_path(generation, "parquet"): parquet_bytes(frame),
            generation_path(generation, "json"): json_bytes(effort),
        }
