"""How a sweep's members train (`TrainConfig`): a module of its own, importing no torch, so
that the command line writes its options from it at start-up (`genprobe.cli.config_options`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from genprobe.errors import ConfigError, check_choice, finite
from genprobe.runs.config import Recorded

LOSS_NORMALIZATIONS = ("sequences", "tokens")
SCHEDULES = ("constant", "linear", "cosine")
NOISES = ("numpy", "counter")
# Each optimizer's learning rate where none is given: the paper's SGD rate (Weber et al.), and
# torch's default for Adam (0.125 would make it diverge).
LEARNING_RATES = {"sgd": 0.125, "adam": 0.001, "adamw": 0.001}
OPTIMIZERS = tuple(LEARNING_RATES)
FLOAT32_MAX = 3.4028234663852886e38  # torch.finfo(torch.float32).max: the step's float32 rate
DEFAULT_SUBSET_FRACTION = 0.7  # Feldman & Zhang's (2020) fraction of the training set


@dataclass(frozen=True)
class TrainConfig(Recorded):
    """A `genprobe.runs.config.RunConfig` inside `SweepConfig`, checked when it is built.

    Each field's comment is its option's help on the command line (`genprobe sweep --help`),
    a field in backticks shown as its option."""

    # the defaults that follow from another field (`for_optimizer`), as the command line shows them
    DERIVED_DEFAULTS: ClassVar[dict[str, str]] = {
        "lr": "the optimizer's: " + ", ".join(f"{o} {lr}" for o, lr in LEARNING_RATES.items())
    }
    batch_size: int = 64  # Examples per member and step.
    lr: float = LEARNING_RATES["sgd"]  # Learning rate.
    optimizer: str = "sgd"  # sgd (plain), adam or adamw.
    # adamw's decoupled weight decay (Loshchilov & Hutter), on every weight.
    weight_decay: float = 0.0
    # Learning rate after `warmup`: constant, or falling to 0 by the end of `max_epochs` (of
    # `steps`, where given): linear, cosine.
    schedule: str = "constant"
    warmup: int = 0  # Steps of linear learning-rate warmup.
    max_grad_norm: float = 5.0  # Gradient norm clip, per member (0: none).
    beta2: float = 0.999  # Adam(W)'s second-moment decay (torch's default; Nanda et al.: 0.98).
    # Upper bound on epochs; early stopping usually ends training after 5-10.
    max_epochs: int = 20
    # Train over time: every seed takes exactly this many steps (no early stopping) and is
    # evaluated on every split along the way (`eval_every`); the report then shows the curves
    # and when each seed learned the rule (grokking).
    steps: int | None = None
    # With `steps`: evaluate every this many steps (0: about 200 log-spaced points).
    eval_every: int = 0
    # Stop a seed after this many epochs without a validation improvement (1: Weber et al.'s
    # rule taken literally, which a noisy dip of validation accuracy stops mid-learning: seen
    # at 69 % and 88 %, docs/rewriting.md, "Early stopping").
    patience: int = 2
    # Validation accuracy (0-1) an epoch must gain to count as an improvement.
    min_delta: float = 0.0
    # Divide summed token losses by sequences or by tokens: by sequences (OpenNMT-py, 2017)
    # learns in a few epochs at lr 0.125; the per-token mean hardly moves for epochs at that rate.
    loss_normalization: str = "sequences"
    # Dropout masks and random positions: numpy (each seed's own stream, drawn on the host) or
    # counter (a hash of seed, step and position, computed on the device: faster for many
    # seeds on a GPU, other masks).
    noise: str = "numpy"
    # Train each member on its own random `subset_fraction` of the training split, drawn from
    # its subset seed (a third seed beside init and order: the member's seed, in a grid its
    # number); every member then decodes the whole training split too, so that the members
    # that trained on an example can be compared with those that did not (Feldman & Zhang).
    subsets: bool = False
    # With `subsets`: the share of the training split each member trains on (floor(r·N)
    # examples, as many for every member).
    subset_fraction: float = DEFAULT_SUBSET_FRACTION

    def __post_init__(self) -> None:
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ConfigError("batch_size", "an integer >= 1", self.batch_size)
        # the step takes the rate in float32, where a larger one is inf
        if not (finite(self.lr) and 0 < self.lr <= FLOAT32_MAX):
            raise ConfigError("lr", "a finite number > 0 (in float32: at most 3.4e+38)", self.lr)
        if not (finite(self.max_grad_norm) and self.max_grad_norm >= 0):
            raise ConfigError(
                "max_grad_norm", "a finite number >= 0 (0: no clipping)", self.max_grad_norm
            )
        if not 0 < self.beta2 < 1:
            raise ConfigError("beta2", "in (0, 1)", self.beta2)
        if not isinstance(self.max_epochs, int) or self.max_epochs < 1:
            raise ConfigError("max_epochs", "an integer >= 1", self.max_epochs)
        if not isinstance(self.patience, int) or self.patience < 1:
            raise ConfigError("patience", "an integer >= 1", self.patience)
        if not 0 <= self.min_delta < 1:
            raise ConfigError("min_delta", "in [0, 1)", self.min_delta)
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        check_choice("schedule", self.schedule, SCHEDULES)
        if not isinstance(self.warmup, int) or self.warmup < 0:
            raise ConfigError("warmup", "an integer >= 0", self.warmup)
        if not (finite(self.weight_decay) and self.weight_decay >= 0) or (
            self.weight_decay and self.optimizer != "adamw"
        ):
            raise ConfigError(
                "weight_decay",
                "a finite number >= 0, and 0 unless the optimizer is adamw",
                self.weight_decay,
            )
        check_choice("loss_normalization", self.loss_normalization, LOSS_NORMALIZATIONS)
        check_choice("noise", self.noise, NOISES)
        self._check_over_time()
        fraction = self.subset_fraction
        # a fraction without subsets would be recorded nowhere and train on the whole split
        if not (finite(fraction) and 0 < fraction < 1) or (
            fraction != DEFAULT_SUBSET_FRACTION and not self.subsets
        ):
            within = f"in (0, 1), and {DEFAULT_SUBSET_FRACTION} unless subsets are on (--subsets)"
            raise ConfigError("subset_fraction", within, fraction)

    def _check_over_time(self) -> None:
        if self.steps is not None and (not isinstance(self.steps, int) or self.steps < 1):
            raise ConfigError("steps", "an integer >= 1 or None", self.steps)
        if not isinstance(self.eval_every, int) or self.eval_every < 0:
            raise ConfigError("eval_every", "an integer >= 0", self.eval_every)
        if self.eval_every and self.steps is None:
            raise ConfigError("eval_every", "0 without a step budget (steps)", self.eval_every)
        if self.steps is not None and self.eval_every > self.steps:
            within = f"at most the step budget ({self.steps:,})"
            raise ConfigError("eval_every", within, self.eval_every)

    @classmethod
    def for_optimizer(
        cls, optimizer: str = "sgd", lr: float | None = None, **settings: Any
    ) -> TrainConfig:
        """The config of `settings` with `optimizer` at `lr`, by default its own
        (`LEARNING_RATES`; an optimizer it does not know is refused as the config refuses it).

        Raises:
            ConfigError: see `__post_init__`.
        """
        default = LEARNING_RATES.get(optimizer, LEARNING_RATES["sgd"])
        return cls(optimizer=optimizer, lr=default if lr is None else lr, **settings)

    def validated(self) -> TrainConfig:
        return self  # checked in __post_init__: no TrainConfig is ever unchecked

    def subset_size(self, examples: int) -> int:
        """How many of `examples` training examples each member trains on."""
        return math.floor(self.subset_fraction * examples) if self.subsets else examples

    def identity(self) -> dict[str, Any]:
        """The recorded fields, the subsets' only where they are on: a run made before them,
        or without them, keeps its config hash."""
        identity = super().identity()
        if not self.subsets:
            del identity["subsets"], identity["subset_fraction"]
        return identity


@dataclass(frozen=True)
class MemberSeeds:
    """A member's seeds: one for its weights, one for everything random in its training, one
    for the training examples it sees (with `TrainConfig.subsets`)."""

    init: int  # the weights' initialization
    order: int  # the data order and every random draw of a training step (dropout, positions)
    subset: int  # which examples of the training split it trains on
