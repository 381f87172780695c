"""The `train` stage: each shard trains one chunk of seeds as one stacked model.

A shard's outputs are its members' checkpoints (`members/seed=N.pt`) and the chunk's training
summary (`training/<key>.json`: per seed, epochs, best epoch, validation accuracy per epoch).
While it trains, the trainer's resume point (`state.pt`, every 60 s and after each epoch) lives
in the shard's scratch directory, so a killed shard continues where it stopped and ends with
the weights of an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from genprobe.data.seq2seq import Seq2SeqTensors, encode
from genprobe.models.member_stack import MemberStack
from genprobe.runs.executor import StageTask
from genprobe.runs.shards import Outputs, Shard, json_bytes
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.device import cpu_threads, device_facts
from genprobe.studies.seed_sensitivity.members import member_bytes, member_path
from genprobe.studies.seed_sensitivity.predict import decode_and_check
from genprobe.studies.seed_sensitivity.study import TRAIN as STAGE
from genprobe.training.trainer import Progress, SweepTrainer

STATE_FILE = "state.pt"
PROGRESS_STEPS = 20

OnProgress = Callable[[Shard, Progress], None]


def train_shards(config: SweepConfig) -> list[Shard]:
    """One shard per chunk of seeds, keyed by its first and last seed."""
    return [
        Shard(STAGE, f"seeds={chunk[0]}-{chunk[-1]}", {"seeds": list(chunk)})
        for chunk in config.seed_chunks()
    ]


def training_path(shard: Shard) -> str:
    return f"training/{shard.key}.json"


class TrainTask(StageTask):
    """Trains with the run's data, generated once per worker from the config.

    `progress`, if given, is a queue (a `multiprocessing` manager's, so that worker processes can
    reach it) that receives `(shard, Progress)` every `PROGRESS_STEPS` steps and at each epoch's
    end.
    """

    needs_device: ClassVar[bool] = True
    resume_states: ClassVar[tuple[str, ...]] = (STATE_FILE,)

    def __init__(self, config: SweepConfig, device: str = "cpu", progress: Any = None) -> None:
        self.config, self.device, self.progress = config, device, progress

    def setup(self) -> tuple[Seq2SeqTensors, np.ndarray]:
        train = self.config.split("train")
        return encode(train.src, train.tgt), self.config.split("validation").src

    def run(
        self, context: tuple[Seq2SeqTensors, np.ndarray], shard: Shard, scratch: Path
    ) -> Outputs:
        train, validation = context

        def validate(model: MemberStack) -> np.ndarray:
            return decode_and_check(model, self.config, validation)[2].mean(axis=1)

        def progress(p: Progress) -> None:
            if self.progress is not None and (p.step % PROGRESS_STEPS == 0 or p.step == p.steps):
                self.progress.put((shard, p))

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
        )
        with cpu_threads():
            results = trainer.run(progress)
        outputs = {member_path(seed): member_bytes(self.config, r) for seed, r in results.items()}
        summaries = {str(seed): r.summary() for seed, r in results.items()}
        return {**outputs, training_path(shard): json_bytes(summaries)}

    def runtime(self) -> dict[str, Any]:
        return device_facts(self.device)
