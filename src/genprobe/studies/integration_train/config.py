"""What an `integration train` run is: the config its run directory hashes, the model sizes
and the presets (measured recipes). A module without torch: the command line writes its
options from `IntegrationTrainConfig` at start-up (`genprobe.cli.config_options`).

Sizes: "small" trains on two CPU cores, "medium" on one GPU in minutes; "paper" is Lample &
Charton's (dim 1024, 6 + 6 layers, 8 heads).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from genprobe.errors import ConfigError, GenprobeError, check_choice, finite
from genprobe.runs.config import Recorded
from genprobe.runs.provenance import file_digest
from genprobe.under_test.registry import ModelSpec

if TYPE_CHECKING:
    from genprobe.models.transformer import TransformerConfig

# each size's `TransformerConfig` settings
SIZES: dict[str, dict[str, int]] = {
    "small": dict(dim=128, n_enc_layers=2, n_dec_layers=2, n_heads=4, max_positions=1024),
    "medium": dict(dim=512, n_enc_layers=4, n_dec_layers=4, n_heads=8, max_positions=1024),
    "paper": dict(dim=1024, n_enc_layers=6, n_dec_layers=6, n_heads=8),
}
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
LR_SCHEDULES = ("constant", "cosine")  # the learning rate after warm-up
# `integration train --preset NAME`: the settings of a measured recipe; options given beside
# it win. "cpu": the strong model of docs/models.md trained on 2 CPU cores; "gpu": a larger one
# trained on one GPU in under 3 minutes (docs/models.md#a-larger-model-on-one-gpu).
PRESETS: dict[str, dict[str, Any]] = {
    "cpu": {"size": "small", "lr": 1e-3, "warmup": 2000, "schedule": "cosine", "epochs": 6},
    "gpu": {
        "size": "medium",
        "batch_size": 512,
        "lr": 6e-4,
        "warmup": 800,
        "schedule": "cosine",
        "epochs": 4,
        "epoch_size": 175_000,
    },
}


@dataclass(frozen=True)
class IntegrationTrainConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`; `run.run_training` validates it and opens its run.

    Each field's comment (but those of `NOT_OPTIONS`) is its option's help on the command
    line (`genprobe integration train --help`)."""

    # settings added after runs existed (device and precision are not runtime: they change
    # the weights)
    ADDED_DEFAULTS: ClassVar[dict[str, Any]] = {
        "schedule": "constant", "init": None, "init_sha256": None,
    }  # fmt: skip
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = ("data", "extra", "init_sha256")
    data: str  # L&C text (`count|input<TAB>output`), or JSONL/Parquet from `generate`
    # small (2 CPU cores), medium (512, 4+4 layers; a GPU) or paper (1024, 6+6 layers).
    size: str = "small"
    dropout: float = 0.0  # Dropout (Lample & Charton trained without).
    lr: float = 5e-4  # Peak AdamW learning rate.
    warmup: int = 1000  # Steps of linear learning-rate warm-up.
    # After warm-up: constant (Lample & Charton), or cosine decay to 0 at the end of the last
    # epoch.
    schedule: str = "constant"
    weight_decay: float = 0.0  # AdamW's decoupled weight decay.
    batch_size: int = 64  # Examples per step.
    clip: float = 5.0  # Gradient-norm clipping (Lample & Charton: 5).
    epochs: int = 10  # Epochs (one checkpoint and validation each).
    epoch_size: int | None = None  # Examples per epoch (default: the whole training set).
    # Problems for the validation Fail@1 (from DATA's valid split, else held out of DATA).
    valid_size: int = 300
    verify_deadline: float = 2.0  # Verifier seconds per validation answer.
    max_len: int = 256  # Longest sequence (tokens) trained and decoded in validation.
    seed: int = 0  # Initialization, shuffling and the held-out choice.
    device: str = "auto"  # auto (cuda when available), cpu, cuda, ...
    # auto (bf16 on GPUs that support it, else fp16 on a GPU, fp32 on the CPU), fp32, bf16 or
    # fp16.
    precision: str = "auto"
    extra: dict[str, Any] = field(default_factory=dict)  # free-form notes, kept in config.json
    # Start from this model's weights (ckpt:PATH, bundled:NAME, lc:PATH) of the same `size`,
    # not a random initialization: fine-tuning on DATA.
    init: str | None = None
    init_sha256: str | None = None  # the starting checkpoint's, set by `resolved`

    def validated(self) -> IntegrationTrainConfig:
        check_choice("--size", self.size, sorted(SIZES))
        check_choice("--precision", self.precision, PRECISIONS)
        check_choice("--schedule", self.schedule, LR_SCHEDULES)
        for name in ("batch_size", "epochs", "valid_size", "max_len"):
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')}", "at least 1", getattr(self, name))
        if self.epoch_size is not None and self.epoch_size < 1:
            raise ConfigError("--epoch-size", "at least 1", self.epoch_size)
        if self.warmup < 0:
            raise ConfigError("--warmup", "at least 0", self.warmup)
        for name in ("lr", "clip", "verify_deadline"):
            if not (finite(value := getattr(self, name)) and value > 0):
                raise ConfigError(f"--{name.replace('_', '-')}", "a positive number", value)
        if not (finite(self.weight_decay) and self.weight_decay >= 0):
            raise ConfigError("--weight-decay", "a number >= 0", self.weight_decay)
        if not (finite(self.dropout) and 0 <= self.dropout < 1):
            raise ConfigError("--dropout", "in [0, 1)", self.dropout)
        if self.init is not None:
            self.init_file()
        return self

    def init_file(self) -> Path:
        """The checkpoint file `init` names.

        Raises:
            ConfigError: `init` names no checkpoint file that exists.
        """
        try:
            path = ModelSpec.read(self.init, "--init").checkpoint_file()
        except GenprobeError:  # no model's spec
            path = None
        if path is None or not path.is_file():
            expected = "ckpt:PATH, bundled:NAME or lc:PATH naming a checkpoint that exists"
            raise ConfigError("--init", expected, self.init)
        return path

    def resolved(self) -> IntegrationTrainConfig:
        """The config as its run records it: `init_sha256` the digest of the checkpoint `init`
        names (which is in the hash of the run), none without `init`."""
        if self.init is None:
            return self
        return replace(self, init_sha256=file_digest(self.init_file()))

    def learning_rate(self, step: int, total_steps: int) -> float:
        """The rate of the `step`-th step (0-based) of a run of `total_steps`."""
        rate = self.lr * min(1.0, (step + 1) / max(self.warmup, 1))
        if self.schedule == "cosine" and step >= self.warmup:
            done = (step - self.warmup) / max(total_steps - self.warmup, 1)
            rate *= 0.5 * (1 + math.cos(math.pi * min(done, 1.0)))
        return rate

    @classmethod
    def from_preset(cls, preset: str | None, data: str, **given: Any) -> IntegrationTrainConfig:
        """The preset's settings (none: the defaults) with the `given` ones that are not None
        over them."""
        if preset is not None:
            check_choice("--preset", preset, sorted(PRESETS))
        chosen = {k: v for k, v in given.items() if v is not None}
        return cls(data=data, **{**PRESETS.get(preset, {}), **chosen})

    def model_config(self) -> TransformerConfig:
        from genprobe.models.transformer import TransformerConfig  # torch

        return TransformerConfig(**SIZES[self.size], dropout=self.dropout)
