"""What an `integration train` run is: the config its run directory hashes, the model sizes
and the presets (measured recipes).

Sizes: `SMALL` trains on two CPU cores, `MEDIUM` on one GPU in minutes; `PAPER` is Lample &
Charton's (dim 1024, 6 + 6 layers, 8 heads).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from genprobe.errors import ConfigError, GenprobeError, check_choice, finite
from genprobe.models.transformer import TransformerConfig
from genprobe.runs.config import identity_fields, without_added_defaults
from genprobe.runs.provenance import file_digest
from genprobe.under_test.registry import ModelSpec

SMALL = TransformerConfig(dim=128, n_enc_layers=2, n_dec_layers=2, n_heads=4, max_positions=1024)
MEDIUM = TransformerConfig(dim=512, n_enc_layers=4, n_dec_layers=4, n_heads=8, max_positions=1024)
PAPER = TransformerConfig(dim=1024, n_enc_layers=6, n_dec_layers=6, n_heads=8)
SIZES = {"small": SMALL, "medium": MEDIUM, "paper": PAPER}
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
class IntegrationTrainConfig:
    """A `genprobe.runs.config.RunConfig`; `run.run_training` validates it and opens its run."""

    RUNTIME: ClassVar[tuple[str, ...]] = ()  # device and precision change the weights
    data: str  # L&C text (`count|input<TAB>output`), or JSONL/Parquet from `generate`
    size: str = "small"  # a key of SIZES
    dropout: float = 0.0  # L&C trained without dropout
    lr: float = 5e-4
    warmup: int = 1000  # steps of linear warm-up
    # after warm-up: constant (L&C), or cosine decay to 0 at the end of the last epoch
    schedule: str = "constant"
    weight_decay: float = 0.0
    batch_size: int = 64  # examples per step
    clip: float = 5.0  # gradient-norm clipping (L&C: 5)
    epochs: int = 10
    epoch_size: int | None = None  # examples per epoch [default: the whole training set]
    valid_size: int = 300  # held-out problems for Fail@1 (from the valid split, else train)
    verify_deadline: float = 2.0
    max_len: int = 256  # longest sequence kept for training and decoded in validation
    seed: int = 0
    device: str = "auto"  # auto: cuda when available
    # autocast: auto = bf16 on GPUs that support it, else fp16 on GPU, fp32 on CPU
    precision: str = "auto"
    extra: dict[str, Any] = field(default_factory=dict)  # free-form notes, kept in config.json
    # `ckpt:`, `bundled:` or `lc:` spec of a model of this size whose weights training starts
    # from instead of a random initialization (fine-tuning on other data)
    init: str | None = None
    init_sha256: str | None = None  # the starting checkpoint's, set by `validated`

    def validated(self) -> IntegrationTrainConfig:
        check_choice("--size", self.size, sorted(SIZES))
        check_choice("--precision", self.precision, PRECISIONS)
        check_choice("--schedule", self.schedule, LR_SCHEDULES)
        for name in ("batch_size", "epochs", "valid_size", "max_len"):
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')}", "at least 1", getattr(self, name))
        if not (finite(self.lr) and self.lr > 0):
            raise ConfigError("--lr", "a positive number", self.lr)
        if self.init is None:
            return self
        try:
            path = ModelSpec.read(self.init, "--init").checkpoint_file()
        except GenprobeError:  # no model's spec
            path = None
        if path is None or not path.is_file():
            expected = "ckpt:PATH, bundled:NAME or lc:PATH naming a checkpoint that exists"
            raise ConfigError("--init", expected, self.init)
        return replace(self, init_sha256=file_digest(path))

    def identity(self) -> dict[str, Any]:
        added = {"schedule": "constant", "init": None, "init_sha256": None}
        return without_added_defaults(identity_fields(self), added)

    def learning_rate(self, step: int, total_steps: int) -> float:
        """The rate of the `step`-th step (0-based) of a run of `total_steps`."""
        rate = self.lr * min(1.0, (step + 1) / max(self.warmup, 1))
        if self.schedule == "cosine" and step >= self.warmup:
            done = (step - self.warmup) / max(total_steps - self.warmup, 1)
            rate *= 0.5 * (1 + math.cos(math.pi * min(done, 1.0)))
        return rate

    @classmethod
    def from_identity(cls, identity: dict[str, Any]) -> IntegrationTrainConfig:
        return cls(**identity)

    @classmethod
    def from_preset(cls, preset: str | None, data: str, **given: Any) -> IntegrationTrainConfig:
        """The preset's settings (none: the defaults) with the `given` ones that are not None
        over them."""
        if preset is not None:
            check_choice("--preset", preset, sorted(PRESETS))
        chosen = {k: v for k, v in given.items() if v is not None}
        return cls(data=data, **{**PRESETS.get(preset, {}), **chosen})

    def model_config(self) -> TransformerConfig:
        base = SIZES[self.size]
        return TransformerConfig(**{**base.to_dict(), "dropout": self.dropout})
