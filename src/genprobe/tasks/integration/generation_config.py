"""What integration data generation is given: the random trees' settings (`TreeSettings`), a
generator's (`GeneratorConfig`), a FWD or BWD run's (`GenerationConfig`) and how the pairs are
written (`DatasetFiles`), kept apart from the code that draws and checks pairs so that they
import without SymPy: `genprobe integration generate` takes one option per field, each field's
comment its help (and `integration mix` those of `DatasetFiles`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from genprobe.errors import ConfigError, check_choice, finite
from genprobe.options import spelled_choices
from genprobe.runs.config import Recorded

METHODS = ("fwd", "bwd", "ibp")
FORMATS = ("text", "jsonl", "parquet")  # of a dataset's files (`DatasetFiles`)
ENGINES = ("lc", "fast", "sympy")
# Lample & Charton's per-sample time limits, in seconds
DEFAULT_DEADLINES = {"fwd": 3.0, "bwd": 5.0, "ibp": 8.0}
# Lample & Charton's operator weights for the integration datasets
INTEGRATION_OPERATORS: dict[str, float] = {
    "add": 10, "sub": 3, "mul": 10, "div": 5,
    "sqrt": 4, "pow2": 4, "pow3": 2, "pow4": 1, "pow5": 1,
    "ln": 4, "exp": 4, "sin": 4, "cos": 4, "tan": 4, "asin": 1, "acos": 1, "atan": 1,
    "sinh": 1, "cosh": 1, "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1,
}  # fmt: skip


@dataclass(frozen=True)
class TreeSettings:
    # the fields the command line gives in its own options: --operators' name:weight pairs
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = ("operators",)
    # the options named otherwise than their fields
    FLAGS: ClassVar[dict[str, str]] = {"positive": "--no-negative-ints/--negative-ints"}
    # operator -> relative weight; unary and binary ones are normalized separately
    operators: dict[str, float] = field(default_factory=lambda: dict(INTEGRATION_OPERATORS))
    # Probability that a leaf is x; otherwise it is an integer in 1..max_int.
    x_probability: float = 0.75
    max_int: int = 5  # Integer leaves are drawn from 1..max_int.
    # Positive integer leaves, or (--negative-ints) each negated with probability 1/2.
    positive: bool = True

    def validated(self) -> TreeSettings:
        from genprobe.tasks.integration.expression import ARITY  # imports SymPy: here, not at start

        for name, weight in self.operators.items():
            if ARITY.get(name, 0) == 0:
                raise ConfigError("operators", "names of unary or binary operators", name)
            if not (finite(weight) and weight >= 0):
                raise ConfigError(f"weight of {name}", "non-negative", weight)
        for arity in (1, 2):
            if not any(w > 0 for op, w in self.operators.items() if ARITY[op] == arity):
                raise ConfigError("operators", f"at least one weighted {arity}-ary operator", "")
        if not 0 <= self.x_probability <= 1:
            raise ConfigError("x_probability", "in [0, 1]", self.x_probability)
        if self.max_int < 1:
            raise ConfigError("max_int", "at least 1", self.max_int)
        return self


@dataclass(frozen=True)
class GeneratorConfig:
    # the defaults that follow from the method, as the command line shows them
    DERIVED_DEFAULTS: ClassVar[dict[str, str]] = {
        "min_ops": "Lample & Charton's: fwd 3, bwd and ibp 4; at most --max-ops"
    }
    # the settings the command line gives in options of their own (`TreeSettings`')
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = ("tree",)
    method: str = "fwd"  # fwd, bwd or ibp.
    tree: TreeSettings = field(default_factory=TreeSettings)
    # Most operators per random expression (FWD's f, BWD's and IBP's F).
    max_ops: int = 15
    # Fewest operators per random expression, but for the small ones (`small_probability`);
    # equal to `max_ops`, with `small_probability` 0: an exact count.
    min_ops: int | None = None
    # Probability of a small random expression instead: 0..2 operators (fwd) or 0..3 (bwd,
    # ibp's F).
    small_probability: float = 1 / 40
    max_ops_g: int = 15  # IBP: most operators of the second factor G.
    # Longest accepted sequence in tokens (`sub Y' f` or F, plus 2 for the EOS markers).
    max_len: int = 512
    simplify_probability: float = 0.5  # BWD: probability of simplifying F'.
    # FWD, IBP: probability of removing the additive constant at the root of f (IBP: of F, of
    # G).
    strip_constant_probability: float = 0.5
    # Soft limit in CPU seconds on one SymPy simplify inside an attempt, past which its input
    # is kept as it is (IBP; BWD but the lc engine's).
    simplify_seconds: float | None = 1.0
    # lc (Lample & Charton's data: BWD builds F and F' on genprobe's own terms, SymPy's
    # canonical form, and simplifies F' with SymPy's simplify as they do, 2 s; FWD integrates
    # by doit what Risch left unevaluated), fast (the same terms simplified by genprobe's
    # factoring, and no FWD doit: another distribution, 50x faster) or sympy (BWD in SymPy
    # throughout, `simplify_seconds`; FWD as fast).
    engine: str = "lc"

    def validated(self) -> GeneratorConfig:
        check_choice("method", self.method, METHODS)
        check_choice("engine", self.engine, ENGINES)
        if self.max_ops < 1 or self.max_ops_g < 1:
            raise ConfigError("max_ops", "at least 1", min(self.max_ops, self.max_ops_g))
        if self.min_ops is not None and not 0 <= self.min_ops <= self.max_ops:
            raise ConfigError("min_ops", f"in 0..max_ops ({self.max_ops})", self.min_ops)
        if self.max_len < 4:
            raise ConfigError("max_len", "at least 4", self.max_len)
        self.tree.validated()
        return self


@dataclass(frozen=True)
class GenerationConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`; `generation_run.generate_run` validates it."""

    # the defaults that follow from other settings, as the command line shows them
    DERIVED_DEFAULTS: ClassVar[dict[str, str]] = {
        "deadline": "Lample & Charton's: fwd 3, bwd 5, ibp 8",
        "max_attempts": "1000 per pair wanted, plus 1000",
    }
    # the settings the command line gives in options of their own (`GeneratorConfig`'s)
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = ("generator",)
    generator: GeneratorConfig = field(default_factory=GeneratorConfig)
    n: int = 1000  # Distinct pairs wanted.
    seed: int = 0  # The data depends only on the seed and the settings.
    deadline: float | None = None  # CPU seconds per attempt.
    shard_size: int = 256  # FWD, BWD: attempts per shard of the run.
    max_attempts: int | None = None  # Give up after this many attempts.

    def validated(self) -> GenerationConfig:
        self.generator.validated()
        if self.generator.method == "ibp":
            raise ConfigError("method", "fwd or bwd (ibp runs in one process)", "ibp")
        for name in ("n", "shard_size"):
            if getattr(self, name) < 1:
                raise ConfigError(name, "at least 1", getattr(self, name))
        if self.deadline is not None and not self.deadline > 0:
            raise ConfigError("deadline", "positive", self.deadline)
        return self

    @property
    def attempt_deadline(self) -> float:
        return self.deadline or DEFAULT_DEADLINES[self.generator.method]

    @property
    def attempt_limit(self) -> int:
        return self.max_attempts or 1000 * self.n + 1000

    def identity(self) -> dict[str, Any]:
        """The identity with the deadline and the attempt limit as they apply (a default
        taken where None is given)."""
        resolved = {"deadline": self.attempt_deadline, "max_attempts": self.attempt_limit}
        return {**super().identity(), **resolved}


@dataclass(frozen=True)
class DatasetFiles:
    """How a dataset's pairs are written (`datasets.write_dataset`): `genprobe integration
    generate` and `integration mix` take one option per field. Refused as made: a format
    outside `FORMATS`, split shares that are negative or leave no training split."""

    # text (Lample & Charton's count|in<TAB>out; with a valid or test share, one file per
    # split: OUT.train, OUT.valid, OUT.test), jsonl or parquet (every split in one file).
    format: Literal["text", "jsonl", "parquet"] = "text"
    valid_fraction: float = 0.0  # Share of inputs in the valid split.
    test_fraction: float = 0.0  # Share of inputs in the test split.

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ConfigError("format", spelled_choices(FORMATS), self.format)
        valid, test = self.valid_fraction, self.test_fraction
        if not (valid >= 0 and test >= 0 and valid + test < 1):
            raise ConfigError(
                "valid and test fractions", "non-negative with a sum below 1", (valid, test)
            )
