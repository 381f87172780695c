"""What a seed sweep is: the config a run directory hashes, and the data it implies.

Everything that can change a number is here (data, model, training, evaluation, how seeds are
grouped into stacked models). Where the sweep runs — the device, worker processes — is not:
those are runtime settings of the stages, recorded in each shard's manifest, so a run trained
on a GPU can be resumed, evaluated and reported on a CPU.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from genprobe.data.seq2seq import N_SPECIAL
from genprobe.errors import ConfigError
from genprobe.models.recurrent import RecurrentConfig
from genprobe.tasks.rewriting.grammar import Grammar
from genprobe.tasks.rewriting.suites import TEST_SUITES, Examples, generate
from genprobe.training.trainer import TrainConfig

KIND = "rewriting-sweep"
# The paper's four test suites, then its appendix's second validation set (inputs 3-12 long
# with repeated symbols), evaluated like a test suite.
SUITES = (*TEST_SUITES, "uncharacteristic")
SPLITS = ("train", "validation", *SUITES)


@dataclass(frozen=True)
class SweepConfig:
    seeds: tuple[int, ...]
    grammar: Grammar = field(default_factory=Grammar)
    data_seed: int = 0  # every split is drawn from this seed and its own name
    train_size: int = 100_000
    validation_size: int = 2_000
    suite_size: int = 2_000
    emb: int = 32
    hidden: int = 32
    dropout: float = 0.1
    init_range: float = 0.1
    cell: str = "lstm"
    attention: str = "bilinear"
    input_feeding: bool = False
    attention_layer: bool = True
    train: TrainConfig = field(default_factory=TrainConfig)
    eval_batch_size: int = 500  # examples decoded at once by all members
    # Seeds trained as one stacked model (one `train` shard); None: all seeds at once. It sets
    # how the work is split, not what a seed computes: member k of any stack is bit for bit
    # seed k trained alone (tests/rewriting/test_training.py).
    seeds_per_shard: int | None = 25

    def __post_init__(self) -> None:
        seeds = self.seeds
        if (
            not seeds
            or len(set(seeds)) != len(seeds)
            or not all(isinstance(s, int) and s >= 0 for s in seeds)
        ):
            raise ConfigError("seeds", "a non-empty list of distinct integers >= 0", seeds)
        for name in (
            "train_size",
            "validation_size",
            "suite_size",
            "emb",
            "hidden",
            "eval_batch_size",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        if self.seeds_per_shard is not None and (
            not isinstance(self.seeds_per_shard, int) or self.seeds_per_shard < 1
        ):
            raise ConfigError("seeds_per_shard", "an integer >= 1", self.seeds_per_shard)
        if not 0 <= self.dropout < 1:
            raise ConfigError("dropout", "in [0, 1)", self.dropout)
        if not self.init_range > 0:
            raise ConfigError("init_range", "> 0", self.init_range)
        self.model_config()  # checks the architecture

    def model_config(self) -> RecurrentConfig:
        return RecurrentConfig(
            src_vocab=self.grammar.n_symbols + 1,
            tgt_vocab=len(self.grammar.output_tokens) + N_SPECIAL,
            emb=self.emb,
            hidden=self.hidden,
            dropout=self.dropout,
            init_range=self.init_range,
            cell=self.cell,
            attention=self.attention,
            input_feeding=self.input_feeding,
            attention_layer=self.attention_layer,
        )

    def seed_chunks(self) -> list[tuple[int, ...]]:
        """The seeds of each stacked model, in the order of `seeds`."""
        size = self.seeds_per_shard or len(self.seeds)
        return [self.seeds[start : start + size] for start in range(0, len(self.seeds), size)]

    def extends(self, earlier: SweepConfig) -> bool:
        """Whether this config is `earlier` with more seeds appended, its stacked models kept
        whole, so that a run of `earlier` can grow into this one (a seed's numbers do not
        depend on the seeds beside it)."""
        chunks = earlier.seed_chunks()
        return (
            replace(self, seeds=earlier.seeds) == earlier
            and self.seed_chunks()[: len(chunks)] == chunks
        )

    def split(self, name: str) -> Examples:
        """One split of the run's data (`SPLITS`), generated from the data seed."""
        sizes = {"train": self.train_size, "validation": self.validation_size}
        return generate(name, sizes.get(name, self.suite_size), self.data_seed, self.grammar)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["seeds"] = list(self.seeds)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SweepConfig:
        d = dict(d)
        d["seeds"] = tuple(d["seeds"])
        d["grammar"] = Grammar(**d["grammar"])
        d["train"] = TrainConfig(**d["train"])
        return cls(**d)
