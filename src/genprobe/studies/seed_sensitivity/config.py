"""What a seed sweep is: the config a run directory hashes, and the data it implies.

Everything that can change a number is here (task, data, model, training, evaluation, how seeds
are grouped into stacked models). Where the sweep runs — the device, worker processes — is not:
those are runtime settings of the stages, recorded in each shard's manifest, so a run trained
on a GPU can be resumed, evaluated and reported on a CPU.

The study names its data by role: `train`, `validation` (early stopping) and the task's test
suites. For most tasks the roles are splits of the same names; SCAN has no validation split,
so its validation role is the first examples of its training split.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, ClassVar

import numpy as np

from genprobe.errors import ConfigError
from genprobe.models.architectures import (
    Architecture,
    ModelShape,
    architecture_name,
    load_architecture,
)
from genprobe.runs.config import Form, Recorded
from genprobe.tasks.registry import TaskRef, task_name
from genprobe.tasks.rewriting.task import RewritingTask
from genprobe.tasks.task import Examples, Split, Task, split_examples
from genprobe.training.config import MemberSeeds, TrainConfig

# Before architectures were plug-ins, a run's identity held the model's options as flat
# settings, with the architecture as `arch` (absent: recurrent): option -> flat name. A
# transformer's width was `hidden` (and `emb`, always the same).
FLAT_MODEL = {
    "recurrent": {
        name: name
        for name in ("emb", "hidden", "layers", "dropout", "init_range", "cell", "attention",
                     "input_feeding", "attention_layer")
    },
    "transformer": {
        "width": "hidden",
        **{name: name for name in ("heads", "layers", "ffn", "dropout", "decoder_only",
                                   "positions", "random_positions")},
    },
}  # fmt: skip
FLAT_SETTINGS = {"arch", "emb", *(name for m in FLAT_MODEL.values() for name in m.values())}
ROLES = ("train", "validation")
# an architecture recorded as its name and options, built again by `load_architecture`
ArchitectureRef = Annotated[
    Architecture,
    Form(
        lambda model: {"arch": architecture_name(model), "options": model.options()},
        lambda model: load_architecture(model["arch"], model["options"]),
    ),
]


@dataclass(frozen=True)
class SweepConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`, checked when it is built (`__post_init__`).

    Where a sweep runs is no field of it (see above): it has no runtime fields.
    `seeds_per_shard` and `eval_batch_size` change no number but are hashed as they always
    were, so stored runs keep their hash."""

    # `genprobe sweep`'s options are the data's and the shards' settings (the seeds, task,
    # model and training have options of their own); a split's whole size where not given
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = (
        "seeds", "task", "model", "train", "eval_batch_size", "init_seeds", "order_seeds",
    )  # fmt: skip
    DERIVED_DEFAULTS: ClassVar[dict[str, str]] = {
        "train_size": "the training split's size; a finite one whole",
        "suite_size": "each suite's size; a finite one whole",
    }
    # settings added after runs existed: a nested one as `train.name`
    ADDED_DEFAULTS: ClassVar[dict[str, Any]] = {
        "train.optimizer": "sgd",
        "train.weight_decay": 0.0,
        "train.schedule": "constant",
        "train.warmup": 0,
        "train.beta2": 0.999,
        "train.steps": None,
        "train.eval_every": 0,
        "train.noise": "numpy",
        "init_seeds": None,
        "order_seeds": None,
    }
    # The members' names. With `init_seeds` and `order_seeds`, the members are their grid,
    # numbered 0 .. I·O-1 init-major; otherwise member s has init and order seed s.
    seeds: tuple[int, ...]
    task: TaskRef = field(default_factory=RewritingTask)
    data_seed: int = 0  # Seed of the data: every split is drawn from it and its own name.
    train_size: int = 100_000  # Training examples.
    validation_size: int = 2_000  # Validation examples (early stopping).
    suite_size: int | None = 2_000  # Examples per test suite (None: each suite's whole).
    # the architecture and its options (`genprobe.models.architectures`)
    model: ArchitectureRef = field(default_factory=lambda: load_architecture("recurrent", {}))
    train: TrainConfig = field(default_factory=TrainConfig)
    eval_batch_size: int = 500  # examples decoded at once by all members
    # Seeds trained as one stacked model, one process each (50 seeds: two, one per core of a
    # laptop); the numbers do not depend on it: member k of any stack is bit for bit seed k
    # trained alone. None (in a config): all at once.
    seeds_per_shard: int | None = 25
    init_seeds: tuple[int, ...] | None = None
    order_seeds: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        seeds = self.seeds
        if (
            not seeds
            or len(set(seeds)) != len(seeds)
            or not all(isinstance(s, int) and s >= 0 for s in seeds)
        ):
            raise ConfigError("seeds", "a non-empty list of distinct integers >= 0", seeds)
        if not isinstance(self.task, Task):
            raise ConfigError("task", "a genprobe.tasks.Task", self.task)
        if not isinstance(self.model, Architecture):
            raise ConfigError("model", "a genprobe.models.architectures.Architecture", self.model)
        for name in ("train_size", "validation_size", "eval_batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        for name in ("suite_size", "seeds_per_shard"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ConfigError(name, "an integer >= 1 or None", value)
        self._check_grid()

    def _check_grid(self) -> None:
        if (self.init_seeds is None) != (self.order_seeds is None):
            raise ConfigError("order_seeds", "given with init_seeds, or neither", self.order_seeds)
        if self.grid is None:
            return
        for name, value in zip(("init_seeds", "order_seeds"), self.grid, strict=True):
            if not value or len(set(value)) != len(value) or min(value) < 0:
                raise ConfigError(name, "a non-empty list of distinct integers >= 0", value)
        members = tuple(range(len(self.grid[0]) * len(self.grid[1])))
        if self.seeds != members:
            raise ConfigError("seeds", f"the grid's members 0..{len(members) - 1}", self.seeds)

    @staticmethod
    def member_count(
        seeds: int, init_seeds: int | None = None, order_seeds: int | None = None
    ) -> int:
        """How many members a sweep of `seeds` seeds has, or with `init_seeds` and
        `order_seeds` (both or neither) their grid's: known before they are listed
        (`with_members`), so that a billion of them is refused before it fills the memory.

        Raises:
            ConfigError: a count below 1, or one of `init_seeds` and `order_seeds` alone.
        """
        grid = {"init_seeds": init_seeds, "order_seeds": order_seeds}
        missing = [name for name, count in grid.items() if count is None]
        if len(missing) == 1:
            (given,) = set(grid) - set(missing)
            raise ConfigError(missing[0], f"given with {given} (a grid takes both)", None)
        counts = grid if not missing else {"seeds": seeds}
        for name, count in counts.items():
            if count < 1:
                raise ConfigError(name, ">= 1", count)
        return math.prod(counts.values())

    def with_members(
        self,
        seeds: int,
        first_seed: int,
        init_seeds: int | None = None,
        order_seeds: int | None = None,
    ) -> SweepConfig:
        """This config with `seeds` seeds from `first_seed` on; or with `init_seeds` and
        `order_seeds` the grid of that many of each (each from `first_seed` on), its members
        numbered 0 .. I·O-1 (`member_count` checks the counts).

        Raises:
            ConfigError: see `member_count`.
        """
        count = self.member_count(seeds, init_seeds, order_seeds)
        if init_seeds is None or order_seeds is None:
            members = tuple(range(first_seed, first_seed + seeds))
            return replace(self, seeds=members, init_seeds=None, order_seeds=None)
        return replace(
            self,
            seeds=tuple(range(count)),
            init_seeds=tuple(range(first_seed, first_seed + init_seeds)),
            order_seeds=tuple(range(first_seed, first_seed + order_seeds)),
        )

    def with_sizes(self, train_size: int | None, full_batch: bool = False) -> SweepConfig:
        """This config with `train_size` training examples (None: the training split's size,
        a finite one whole) and, with `full_batch`, every step on the whole training set:
        sizes that follow from the task, so that a grid's cell whose task differs takes its
        own. With subsets, a full batch is a member's whole subset.

        Raises:
            ConfigError: a training size below 1.
        """
        spec = self.split_spec("train")
        size = spec.size if train_size is None else train_size
        batch = self.train.batch_size
        if full_batch:  # with subsets, each member's whole subset
            batch = self.train.subset_size(min(size, spec.size) if spec.finite else size)
        return replace(self, train_size=size, train=replace(self.train, batch_size=batch))

    @property
    def grid(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """(init seeds, order seeds) of a grid sweep; None for a sweep of plain seeds."""
        if self.init_seeds is None or self.order_seeds is None:
            return None
        return self.init_seeds, self.order_seeds

    def streams(self) -> dict[int, MemberSeeds]:
        """Each member's init, order and subset seeds: a grid member's subset seed is its
        number, so that no two members share a subset."""
        if self.grid is None:
            return {seed: MemberSeeds(seed, seed, seed) for seed in self.seeds}
        cells = [(i, o) for i in self.grid[0] for o in self.grid[1]]
        return {s: MemberSeeds(*cell, s) for s, cell in zip(self.seeds, cells, strict=True)}

    def model_shape(self) -> ModelShape:
        """The task's side of the model's size: vocabularies with the special ids, the longest
        training input and output, and the longest sequence any role holds."""
        from genprobe.data.seq2seq import N_SPECIAL

        task = self.task
        src_len = self.longest_input("train")
        longest = max(self.longest_input(role) for role in self.roles())
        return ModelShape(
            src_vocab=len(task.source_vocab) + 1,  # + padding
            tgt_vocab=len(task.target_vocab) + N_SPECIAL,
            src_len=src_len,
            tgt_len=task.max_output_length(src_len) + 1,  # + EOS
            max_positions=longest + task.max_output_length(longest) + 2,  # + BOS, EOS
        )

    def takes(self, src: np.ndarray) -> np.ndarray:
        """(n,) bool: whether the trained model can take each input of src (n, L) with as many
        output steps as decoding gives it (`Architecture.takes`). Every input of the sweep's
        own roles fits: they sized its tables."""
        length = (np.asarray(src) > 0).sum(axis=1)
        lengths, where = np.unique(length, return_inverse=True)
        return self._takes_lengths(lengths)[where.reshape(-1)]

    def longest_taken(self, most: int) -> int | None:
        """The longest input, in tokens, the trained model takes (`takes`: one that takes an
        input takes every shorter one); None where it takes one of `most` tokens."""
        if self._takes_lengths(np.array([most]))[0]:
            return None
        low, high = 0, most  # low is taken (0: nothing is), high is not
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (
                (middle, high) if self._takes_lengths(np.array([middle]))[0] else (low, middle)
            )
        return low

    def _takes_lengths(self, lengths: np.ndarray) -> np.ndarray:
        """(n,) bool: whether the trained model takes inputs of these numbers of tokens."""
        steps = np.array([self.task.max_output_length(int(n)) + 1 for n in lengths])
        return np.asarray(self.model.takes(self.model_shape(), lengths, steps), dtype=bool)

    def watched_roles(self) -> tuple[str, ...]:
        """What training over time evaluates at every point of its schedule: training, each
        suite, and validation where its split is not already one of them."""
        suites = self.task.suites()
        validation = () if self.task.validation_split in suites else ("validation",)
        return ("train", *validation, *suites)

    def validation_role(self) -> str:
        """The watched role that holds the validation split."""
        split = self.task.validation_split
        return split if split in self.task.suites() else "validation"

    def longest_input(self, role: str) -> int:
        """The most input tokens an example of the role can have."""
        return self.split_spec(role).lengths[1]

    def seed_chunks(self, seeds: Sequence[int] | None = None) -> list[tuple[int, ...]]:
        """The seeds of each stacked model: `seeds` (default: the run's) in their order, in
        groups of `seeds_per_shard`."""
        seeds = self.seeds if seeds is None else tuple(seeds)
        size = self.seeds_per_shard or len(seeds)
        return [seeds[start : start + size] for start in range(0, len(seeds), size)]

    def extends(self, earlier: SweepConfig) -> bool:
        """Whether this config is `earlier` with more seeds appended, every other setting the
        same: a run of `earlier` can grow into this one and keep the members it trained."""
        if self.grid is not None or earlier.grid is not None:
            return False  # a grid does not grow
        n = len(earlier.seeds)
        return (
            len(self.seeds) > n
            and self.seeds[:n] == earlier.seeds
            and replace(self, seeds=earlier.seeds) == earlier
        )

    def keeps_stacks(self, earlier: SweepConfig) -> bool:
        """Whether the stacked models of `earlier` are stacked models of this config too (the
        old seed count a multiple of `seeds_per_shard`), so that its new seeds train in stacks
        of their own even where a member's numbers depend on the seeds beside it."""
        chunks = earlier.seed_chunks()
        return self.seed_chunks()[: len(chunks)] == chunks

    def roles(self) -> tuple[str, ...]:
        """The study's data: training, validation, then the task's test suites."""
        return (*ROLES, *self.task.suites())

    def predicted(self) -> tuple[str, ...]:
        """The roles every member decodes: the task's suites and, with subsets, the training
        split (whose examples some members trained on and others did not)."""
        return (*self.task.suites(), *(("train",) if self.train.subsets else ()))

    def split(self, role: str) -> Examples:
        """The examples of one role of the study (`roles()`), generated from the data seed; a
        finite split gives at most all it holds."""
        sizes = {"train": self.train_size, "validation": self.validation_size}
        size = sizes.get(role, self.suite_size)
        return split_examples(self.task, self._split_name(role), size, self.data_seed)

    def _split_name(self, role: str) -> str:
        split = {"train": self.task.train_split, "validation": self.task.validation_split}
        return split.get(role, role)

    def check_train_size(self) -> None:
        """A training size that the training split holds: a finite split gives at most all it
        holds, and the run would record more examples than it trained on; with subsets, one
        whose share fills a member's batch. Asked of a new run (`run_sweep`): runs made before
        keep opening, and a config made for a sample (a few examples) is no run.

        Raises:
            ConfigError: `train_size` exceeds a finite training split, or a member's subset
                is smaller than a batch.
        """
        spec = self.split_spec("train")
        if spec.finite and self.train_size > spec.size:
            split = f"{task_name(self.task)}'s training split {self.task.train_split!r}"
            expected = f"at most {spec.size:,}, all of {split}"
            raise ConfigError("train_size", expected, self.train_size)
        batch, subset = self.train.batch_size, self.train.subset_size(self.train_size)
        if self.train.subsets and subset < batch:
            fraction = self.train.subset_fraction
            raise ConfigError(
                "subset_fraction",
                f"large enough that a member's share of the {self.train_size:,} training "
                f"examples ({subset:,} at {fraction:g}) fills a batch of {batch:,} "
                "(--batch-size)",
                fraction,
            )

    def split_spec(self, role: str) -> Split:
        return self.task.split_spec(self._split_name(role))

    def validated(self) -> SweepConfig:
        return self  # checked in __post_init__: no SweepConfig is ever unchecked

    def identity(self) -> dict[str, Any]:
        """The identity that the run's config hash is taken of: the rewriting task's options
        as `grammar`, as runs made before tasks were plug-ins record them."""
        identity = super().identity()
        if isinstance(self.task, RewritingTask):
            identity["grammar"] = identity.pop("task")["options"]
        return identity

    @classmethod
    def from_identity(cls, identity: dict[str, Any]) -> SweepConfig:
        """The config of an identity, those stored before tasks and architectures were
        plug-ins too (`grammar`, flat model settings)."""
        identity = dict(identity)
        if "grammar" in identity:
            name = task_name(RewritingTask())
            identity["task"] = {"name": name, "options": identity.pop("grammar")}
        if not identity.get("model"):
            identity["model"] = _flat_model(identity)
        return super().from_identity(identity)


def over_time(config: Any) -> bool:
    """Whether the members of a run's config (a sweep's, or a language model's, which did not
    train) trained over time (`--steps`)."""
    return isinstance(config, SweepConfig) and config.train.steps is not None


def _flat_model(identity: dict[str, Any]) -> dict[str, Any]:
    """The model of an identity stored before architectures were plug-ins, taking its flat
    settings out of `identity`."""
    flat = {name: identity.pop(name) for name in FLAT_SETTINGS if name in identity}
    arch = flat.get("arch", "recurrent")
    options = {option: flat[name] for option, name in FLAT_MODEL[arch].items() if name in flat}
    return {"arch": arch, "options": options}
