"""A sweep's peak memory, estimated from its sizes before anything is built, so that a size
that cannot fit (a billion seeds, a trillion training examples) is refused in one line instead
of filling the machine.

The estimate is the training data (its arrays, at `DATA_OVERHEAD` times their bytes: the
generators' own lists, measured at 1.7-6.8 on reverse_string, addition and rewriting) plus the
larger of two stages: training (each worker's stacked model: weights, gradients and two Adam
moments per member) and prediction (every member's weights at once, and the outputs of the
largest suite for every member). It is meant to refuse what is out of reach by far, not to
budget a run that nearly fits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from genprobe.errors import ResourceError
from genprobe.runs.memory import available_memory, gib
from genprobe.studies.seed_sensitivity.config import SweepConfig

INF = float("inf")
SAMPLE = 64  # examples per role generated to measure an example's bytes
DATA_OVERHEAD = 8
TRAINING_COPIES = 4  # weights, gradients, Adam's two moments
OUTPUT_COPIES = 3  # decoded ids, their verdicts and the prediction table


@dataclass(frozen=True)
class Peak:
    data: int
    training: int
    prediction: int

    @property
    def total(self) -> int:
        return self.data + max(self.training, self.prediction)


def peak_memory(config: SweepConfig, members: int, workers: int = 1) -> Peak:
    """The peak bytes of `config` trained with `members` members (its own seeds may be a
    stand-in: only their count is used) and `workers` processes training at once."""
    small = replace(
        config,
        seeds=(0, 1),
        init_seeds=None,
        order_seeds=None,
        train_size=min(config.train_size, SAMPLE),
        validation_size=min(config.validation_size, SAMPLE),
        suite_size=min(config.suite_size or SAMPLE, SAMPLE),
    )
    model = small.model.initialized(small.model_shape(), [0, 1])
    weights = sum(p.numel() * p.element_size() for p in model.parameters()) // 2
    train = small.split("train")
    per_example = (train.src.nbytes + train.tgt.nbytes) / max(len(train.src), 1)
    data = int(min(config.train_size, _split_size(config)) * per_example * DATA_OVERHEAD)
    chunk = min(config.seeds_per_shard or members, members)
    stacks = min(workers, -(-members // chunk))
    training = stacks * chunk * weights * TRAINING_COPIES
    suites = [min(config.suite_size or INF, _split_size(config, s)) for s in config.task.suites()]
    if config.train.subsets:  # every member decodes the training split too
        suites.append(min(config.train_size, _split_size(config)))
    suite_rows = max((n for n in suites if n < INF), default=0)
    outputs = members * suite_rows * small.model_shape().tgt_len * 8 * OUTPUT_COPIES
    return Peak(data, training, members * weights + outputs)


def check_memory(config: SweepConfig, members: int, workers: int = 1) -> None:
    """Refuses a sweep whose estimated peak (`peak_memory`) exceeds the memory free here.

    Raises:
        ResourceError: it does, naming the estimate, its largest part and the memory free.
    """
    free = available_memory()
    if free is None:
        return
    peak = peak_memory(config, members, workers)
    if peak.total <= free:
        return
    parts = {  # what each part is, and what makes it smaller
        (f"--train-size {config.train_size:,}", "a smaller --train-size"): peak.data,
        (f"{members:,} members' training", "a smaller --seeds-per-shard or fewer --workers"):
            peak.training,
        (f"{members:,} members' predictions", "fewer seeds or a smaller --suite-size"):
            peak.prediction,
    }  # fmt: skip
    (largest, smaller) = max(parts, key=parts.__getitem__)
    needed = gib(parts[largest, smaller])
    raise ResourceError(
        f"this sweep needs about {gib(peak.total)} of memory ({largest}: {needed}), and "
        f"{gib(free)} is free here: use {smaller}"
    )


def _split_size(config: SweepConfig, role: str = "train") -> float:
    spec = config.split_spec(role)
    return spec.size if spec.finite else INF
