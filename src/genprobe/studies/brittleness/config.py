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
# `genprobe integration evaluate` (the in-distribution suite of one dataset): the settings
# it takes from the command line, and its k where none is given
EVALUATE_SETTINGS = ("ks", "seed", "policy", "deadline", "split", "workers")
EVALUATE_KS = (1, 10)
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
    """A `genprobe.runs.config.RunConfig`; `run_brittleness` validates it.

    Each field's comment (but those of `NOT_OPTIONS`) is its option's help on the command
    line (`genprobe integration brittleness --help`; those of `EVALUATE_SETTINGS`, `integration
    evaluate --help`). `seed`'s default is the suites'
    `sampling.DEFAULT_SEED`, written out: the command line reads this module at start-up, and
    the suites' package imports SymPy and pandas."""

    RUNTIME: ClassVar[tuple[str, ...]] = ("workers",)
    # settings added after runs existed
    ADDED_DEFAULTS: ClassVar[dict[str, Any]] = {
        "solved_by": "paper", "train_max_ops": None, "train_data": None,
    }  # fmt: skip
    # the defaults that follow from the preset or other settings, as the command line shows them
    DERIVED_DEFAULTS: ClassVar[dict[str, str]] = {
        "suites": "all but integer-extrapolation; those needing --validation only with it",
        "ks": "the preset's: "
        + "; ".join(f"{name} {','.join(map(str, p.ks))}" for name, p in PRESETS.items()),
        "train_max_ops": "read from a ckpt: model's training data, else 15",
        "train_data": "read from a ckpt: model's run directory, else none",
    }
    # the fields the command line gives otherwise, or not at all: the model's group, the sizes
    # (--preset, --n)
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = ("model", "sizes", "temperatures", "shard_size")
    FLAGS: ClassVar[dict[str, str]] = {"ks": "--k"}  # options named otherwise than their fields
    model: ModelSettings
    # Suites to run: in-distribution, robustness-simple, integer-extrapolation,
    # robustness-validation, compositionality, operator-extrapolation.
    suites: tuple[str, ...] = DEFAULT_SUITES
    sizes: Mapping[str, int] = field(default_factory=lambda: dict(PRESETS["paper"].sizes))
    ks: tuple[int, ...] = (1, 10, 50)  # Fail@k for each k.
    seed: int = 43  # Seed of every suite.
    # The report's main timeout policy, strict (a timeout fails) or generous (it passes);
    # Fail@k is given under both.
    policy: str = "strict"
    deadline: float = 2.0  # Verifier seconds per candidate.
    # Test or validation file (L&C text, JSONL, …) of in-distribution and the suites made of
    # its solved problems; bundled:integration-cpu's test split is data/mix6.txt.test, made by
    # `make strong-data`.
    validation: FileRef | None = None
    split: str | None = None  # `validation`'s split, for JSONL/Parquet datasets.
    method: str = "bwd"  # operator-extrapolation: fwd, bwd or ibp.
    # Section 6: beam and samples of this size on k1*{exp,sin,cos,tan}(k2*x).
    search_budget: int | None = None
    temperatures: tuple[float, ...] = TEMPERATURES
    shard_size: int = 256  # problems per shard
    workers: int = 1  # Processes decoding suites side by side (each loads the model).
    # What counts as solved for the suites made of solved problems: paper (a pass at rank 1,
    # a verifier timeout failing) or code (as the authors' code: a timeout passing; simple
    # primitives at rank 1, validation problems at any rank).
    solved_by: str = "paper"
    # The model's training max_ops M: operator-extrapolation's sets are 1-M, M+5 … M+20
    # (config.json holds the M the run used).
    train_max_ops: int | None = None
    # The model's training data: the report gives the share of its integers per coefficient
    # range beside Figure 2.
    train_data: FileRef | None = None

    @classmethod
    def from_preset(
        cls, preset: str, n: int | None, model: ModelSettings, **given: Any
    ) -> BrittlenessConfig:
        """The preset's sizes (every suite's N `n` where it is not None) and k, and the suites
        the validation file allows, with the `given` settings over them."""
        # files as the command line always recorded them: `./data/x` is `data/x`
        for name in ("validation", "train_data"):
            if given.get(name) is not None:
                given[name] = str(Path(given[name]))
        sizes = resolve_sizes(preset, n)
        ks = given.pop("ks", None) or PRESETS[preset].ks
        suites = given.pop("suites", None) or default_suites(given.get("validation"))
        return cls(model=model, suites=suites, sizes=sizes, ks=tuple(sorted(set(ks))), **given)

    @classmethod
    def for_dataset(
        cls, data: str | Path, n: int | None, model: ModelSettings, **given: Any
    ) -> BrittlenessConfig:
        """`genprobe integration evaluate`'s run: the in-distribution suite alone, of the
        problems in `data` (a sample of `n` where it is not None), k `EVALUATE_KS` unless
        `ks` is given, with the `given` settings (of `EVALUATE_SETTINGS`) over the defaults."""
        ks = given.pop("ks", EVALUATE_KS)
        return cls(
            model=model,
            suites=("in-distribution",),
            sizes={} if n is None else {"in-distribution": n},
            ks=tuple(sorted(set(ks))),
            validation=str(data),
            **given,
        )

    @property
    def max_ops(self) -> int:
        """operator-extrapolation's M."""
        from genprobe.tasks.integration.suites.operators import PAPER_MAX_OPS  # SymPy

        return PAPER_MAX_OPS if self.train_max_ops is None else self.train_max_ops

    @property
    def k_max(self) -> int:
        return max(self.ks)

    def validated(self) -> BrittlenessConfig:
        from genprobe.tasks.integration.suites.primitives import SOLVED  # SymPy, pandas

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
        check_choice("--solved-by", self.solved_by, tuple(SOLVED))
        if self.shard_size < 1:
            raise ConfigError("shard size", "at least 1", self.shard_size)
        if self.train_max_ops is not None and self.train_max_ops < 1:
            raise ConfigError("--train-max-ops", "at least 1", self.train_max_ops)
        asked = [s for s in self.suites if s in NEEDS_VALIDATION]
        if asked and self.validation is None:
            raise ConfigError("--validation", f"a test or validation file for {asked[0]}", None)
        for option, path in (("--validation", self.validation), ("--train-data", self.train_data)):
            if path is not None and not Path(path).is_file():
                raise ConfigError(option, "an existing file", path)
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
