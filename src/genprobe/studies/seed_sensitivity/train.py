"""The `train` stage: each shard trains one chunk of seeds as one stacked model.

A shard's outputs are its members' checkpoints (`members/seed=N.pt`) and the chunk's training
summary (`training/<key>.json`: per seed, epochs, best epoch, validation accuracy per epoch, the
step its training loss went NaN or inf); with subsets, which training examples each member
trained on (`subsets/<key>.parquet`, read by `results.read_subsets`).
Trained over time (a step budget, `training.over_time`), a member's checkpoint holds its final
weights and the shard also writes its members' curves (`curves/<key>.parquet`, read by
`curves.read_curves`) and the history of each training example (`history/<key>.parquet`, read
by `curves.read_history`).
While it trains, the trainer's resume point (`state.pt`, every 60 s and after each epoch) lives
in the shard's scratch directory, so a killed shard continues where it stopped and ends with
the weights of an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from genprobe.data.seq2seq import Seq2SeqTensors, encode
from genprobe.models.member_stack import MemberStack
from genprobe.runs.executor import Stage
from genprobe.runs.shards import Outputs, Shard, ShardStore, json_bytes, parquet_bytes
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.curves import curve_path, history_path
from genprobe.studies.seed_sensitivity.device import cpu_threads, device_facts
from genprobe.studies.seed_sensitivity.members import member_bytes, member_path
from genprobe.studies.seed_sensitivity.predict import decode_and_check
from genprobe.studies.seed_sensitivity.results import subset_bytes, subset_path
from genprobe.studies.seed_sensitivity.study import TRAIN as STAGE
from genprobe.tasks.task import Examples
from genprobe.training.over_time import OverTimeTrainer
from genprobe.training.trainer import MemberResult, Progress, SweepTrainer

STATE_FILE = "state.pt"
PROGRESS_STEPS = 20

OnProgress = Callable[[Shard, Progress], None]


def train_shards(config: SweepConfig, trained: Collection[int] = ()) -> list[Shard]:
    """One shard per chunk of the seeds not `trained`, keyed by its first and last seed: a run
    grown by more seeds trains them in stacked models of their own."""
    untrained = [seed for seed in config.seeds if seed not in trained]
    return [
        Shard(STAGE, f"seeds={chunk[0]}-{chunk[-1]}", {"seeds": list(chunk)})
        for chunk in config.seed_chunks(untrained)
    ]


def trained_seeds(run: Path, config: SweepConfig) -> set[int]:
    """The seeds of `config` whose member a finished, intact `train` shard of the run
    recorded (a damaged member's seeds train again)."""
    recorded = set(ShardStore(run).intact_outputs(STAGE))
    return {seed for seed in config.seeds if run / member_path(seed) in recorded}


def training_path(shard: Shard) -> str:
    return f"training/{shard.key}.json"


class TrainStage(Stage):
    """Trains with the run's data, generated once per worker from the config.

    `progress`, if given, is a queue (a `multiprocessing` manager's, so that worker processes can
    reach it) that receives `(shard, Progress)` every `PROGRESS_STEPS` steps, at each epoch's
    last step and after its validation (the members' accuracy and loss).
    """

    needs_device: ClassVar[bool] = True
    resume_states: ClassVar[tuple[str, ...]] = (STATE_FILE,)

    def __init__(self, config: SweepConfig, device: str = "cpu", progress: Any = None) -> None:
        self.config, self.device, self.progress = config, device, progress

    def setup(self) -> tuple[Seq2SeqTensors, Examples]:
        train = self.config.split("train")
        return encode(train.src, train.tgt), self.config.split("validation")

    def run(self, context: tuple[Seq2SeqTensors, Examples], shard: Shard, scratch: Path) -> Outputs:
        if self.config.train.steps is not None:
            return self._run_over_time(context[0], shard, scratch)
        train, validation = context

        def validate(model: MemberStack) -> np.ndarray:
            return decode_and_check(model, self.config, validation.src)[2].mean(axis=1)

        trainer = SweepTrainer(
            self.config.model,
            self.config.model_shape(),
            self.config.train,
            shard.spec["seeds"],
            train,
            validate,
            device=self.device,
            checkpoint=scratch / STATE_FILE,
            streams=self.config.streams(),
            validation=encode(validation.src, validation.tgt),
        )
        with cpu_threads():
            results = trainer.run(self._relay(shard))
        return self._outputs(shard, trainer, results)

    def _run_over_time(self, train: Seq2SeqTensors, shard: Shard, scratch: Path) -> Outputs:
        config = self.config
        watched = {"train": train}
        for role in config.watched_roles()[1:]:
            examples = config.split(role)
            watched[role] = encode(examples.src, examples.tgt)
        trainer = OverTimeTrainer(
            config.model,
            config.model_shape(),
            config.train,
            shard.spec["seeds"],
            train,
            device=self.device,
            checkpoint=scratch / STATE_FILE,
            streams=config.streams(),
            roles=watched,
            validation_role=config.validation_role(),
            eval_rows=config.eval_batch_size,
        )
        with cpu_threads():
            results = trainer.run(self._relay(shard))
        return {
            **self._outputs(shard, trainer, results),
            curve_path(shard): parquet_bytes(trainer.curve()),
            history_path(shard): parquet_bytes(trainer.history.table(trainer.active)),
        }

    def _outputs(
        self, shard: Shard, trainer: SweepTrainer, results: dict[int, MemberResult]
    ) -> Outputs:
        """The members, their training summary and, with subsets, their training examples."""
        outputs = {member_path(seed): member_bytes(self.config, r) for seed, r in results.items()}
        summaries = {str(seed): r.summary() for seed, r in results.items()}
        outputs[training_path(shard)] = json_bytes(summaries)
        if trainer.subsets is not None:
            outputs[subset_path(shard)] = subset_bytes(trainer.subsets, len(trainer.train))
        return outputs

    def _relay(self, shard: Shard) -> Callable[[Progress], None]:
        def progress(p: Progress) -> None:
            if self.progress is not None and (p.step % PROGRESS_STEPS == 0 or p.step == p.steps):
                self.progress.put((shard, p))

        return progress

    def runtime(self) -> dict[str, Any]:
        return device_facts(self.device)
