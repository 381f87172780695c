"""What a brittleness run is: the model, the suites and their sizes, k, the verifier, the
search budget. Its identity (hashed into the run directory) leaves out where it ran.

Presets size every suite at once: `paper` (the paper's sizes: N = 500 for the simple
primitives, 1,000 validation problems, perturbations and sums, 500 generated problems per
operator count; k = 1, 10, 50) and `quick` (a few hundred problems over all suites, k = 1, 10).
`--n N` gives every suite the same N, read by each suite as `genprobe integration suite` reads
it (pairs per cell, problems per set, sums per k).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from genprobe.errors import ConfigError, check_choice
from genprobe.runs.config import FileRef, Recorded
from genprobe.studies.brittleness.schedule import OVERLAP_SETTINGS
from genprobe.tasks.integration.suites.operators import PAPER_MAX_OPS
from genprobe.tasks.integration.suites.primitives import SOLVED
from genprobe.tasks.integration.suites.sampling import DEFAULT_SEED
from genprobe.under_test.settings import ModelSettings

# what the run can hold, in report order; `validation-primitives` is solved only to build the
# suites made of solved validation problems
STUDY_SUITES = (
    "in-distribution",
    "robustness-simple",
    "integer-extrapolation",
    "robustness-validation",
    "compositionality",
    "operator-extrapolation",
)
# every suite but integer-extrapolation, whose problems robustness-simple holds already
DEFAULT_SUITES = tuple(s for s in STUDY_SUITES if s != "integer-extrapolation")
# suites made from a validation (or test) file
NEEDS_VALIDATION = ("in-distribution", "robustness-validation")
TEMPERATURES = (0.6, 0.8, 1.0)


def recorded_setting(config: Mapping[str, Any], name: str) -> Any:
    """A setting of a run's recorded config (a run made before the setting has its default)."""
    return {**BrittlenessConfig.ADDED_DEFAULTS, **config}[name]


@dataclass(frozen=True)
class Preset:
    sizes: Mapping[str, int]  # suite -> its N
    ks: tuple[int, ...]


PRESETS: dict[str, Preset] = {
    "paper": Preset(
        {
            "in-distribution": 1000,
            "robustness-simple": 500,
            "integer-extrapolation": 500,
            "validation-primitives": 1000,
            "robustness-validation": 1000,
            "compositionality": 1000,
            "operator-extrapolation": 500,
        },
        (1, 10, 50),
    ),
    "quick": Preset(
        {
            "in-distribution": 64,
            "robustness-simple": 3,
            "integer-extrapolation": 3,
            "validation-primitives": 48,
            "robustness-validation": 40,
            "compositionality": 16,
            "operator-extrapolation": 8,
        },
        (1, 10),
    ),
}


@dataclass(frozen=True)
class BrittlenessConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`; `run_brittleness` validates it."""

    RUNTIME: ClassVar[tuple[str, ...]] = ("workers", "suite_cache", "overlap")
    # settings added after runs existed
    ADDED_DEFAULTS: ClassVar[dict[str, Any]] = {
        "solved_by": "paper", "train_max_ops": None, "train_data": None,
    }  # fmt: skip
    model: ModelSettings
    suites: tuple[str, ...] = DEFAULT_SUITES
    sizes: Mapping[str, int] = field(default_factory=lambda: dict(PRESETS["paper"].sizes))
    ks: tuple[int, ...] = (1, 10, 50)
    seed: int = DEFAULT_SEED
    policy: str = "strict"  # the report's main policy; Fail@k is given under both
    deadline: float = 2.0  # verifier seconds per candidate
    validation: FileRef | None = None  # a test or validation file (in-distribution and derived)
    split: str | None = None  # its split, for JSONL/Parquet datasets
    method: str = "bwd"  # generation method of operator-extrapolation
    search_budget: int | None = None  # beam and samples for section 6's large search
    temperatures: tuple[float, ...] = TEMPERATURES
    shard_size: int = 256  # problems per shard
    workers: int | None = None  # verifier and generator processes (None: one per CPU)
    # a directory of suite tables that need no model, shared by runs (None: build every one)
    suite_cache: str | None = None
    overlap: str = "auto"  # decode/verify while the other runs: auto, on or off (`schedule`)
    # what counts as solved for the suites made of solved problems (`suites.primitives.SOLVED`)
    solved_by: str = "paper"
    # the most operators of the model's training expressions: operator-extrapolation's sets are
    # 1-M and M+5 ... M+20 (None: read from the model where it records it, `training.py`; if
    # it does not, Lample & Charton's 15). config.json holds the value the run used.
    train_max_ops: int | None = None
    # the model's training data: Figure 2's share of training integers per coefficient range
    # (None: read from the model where it records it, `training.py`; if it does not, not shown)
    train_data: FileRef | None = None

    @property
    def max_ops(self) -> int:
        """operator-extrapolation's M."""
        return PAPER_MAX_OPS if self.train_max_ops is None else self.train_max_ops

    @property
    def k_max(self) -> int:
        return max(self.ks)

    def validated(self) -> BrittlenessConfig:
        self.model.validated_as_model()
        for name in self.suites:
            check_choice("--suites", name, STUDY_SUITES)
        if not self.ks or min(self.ks) < 1:
            raise ConfigError("--k", "one or more positive integers", self.ks)
        if self.policy not in ("strict", "generous"):
            raise ConfigError("--policy", "strict or generous", self.policy)
        if self.method not in ("fwd", "bwd", "ibp"):
            raise ConfigError("--method", "fwd, bwd or ibp", self.method)
        if self.search_budget is not None:
            if self.search_budget < 1:
                raise ConfigError("--search-budget", "a positive count", self.search_budget)
            if not self.model.spec.kind.seq2seq:
                raise ConfigError(
                    "--search-budget", "a seq2seq model (ckpt: or lc:) that beams, samples and "
                    "scores", str(self.model.spec),
                )  # fmt: skip
        check_choice("overlap", self.overlap, OVERLAP_SETTINGS)
        check_choice("--solved-by", self.solved_by, tuple(SOLVED))
        if self.train_max_ops is not None and self.train_max_ops < 1:
            raise ConfigError("--train-max-ops", "at least 1", self.train_max_ops)
        if self.shard_size < 1:
            raise ConfigError("shard size", "at least 1", self.shard_size)
        asked = [s for s in self.suites if s in NEEDS_VALIDATION]
        if asked and self.validation is None:
            raise ConfigError("--validation", f"a test or validation file for {asked[0]}", None)
        for option, path in (("--validation", self.validation), ("--train-data", self.train_data)):
            if path is not None and not Path(path).is_file():
                raise ConfigError(option, "an existing file", path)
        cache = self.suite_cache
        if cache is not None and Path(cache).exists() and not Path(cache).is_dir():
            raise ConfigError("--suite-cache", "a directory", cache)
        return self


def resolve_sizes(preset: str, n: int | None) -> dict[str, int]:
    """Every suite's N: the preset's, or `n` for all."""
    if preset not in PRESETS:
        raise ConfigError("--preset", f"one of {', '.join(PRESETS)}", preset)
    sizes = dict(PRESETS[preset].sizes)
    if n is not None:
        if n < 1:
            raise ConfigError("--n", "a positive integer", n)
        sizes = dict.fromkeys(sizes, n)
    return sizes


def default_suites(validation: str | None) -> tuple[str, ...]:
    """All default suites, less those that need a validation file when there is none."""
    if validation is not None:
        return DEFAULT_SUITES
    return tuple(s for s in DEFAULT_SUITES if s not in NEEDS_VALIDATION)
