"""What the verifier is given (`VerifierConfig`, with the identity test's `IdentitySettings`),
kept apart from the verifier, so that they import without SymPy: `genprobe integration verify`
takes one option per field of `VerifierConfig` as it starts, each field's comment its help."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from genprobe.errors import ConfigError, finite
from genprobe.tasks.integration.limits import DEFAULT_LIMITS, ParseLimits
from genprobe.tasks.verdict import TimeoutPolicy


@dataclass(frozen=True)
class IdentitySettings:
    # points with |x| uniform in [0.3, 3], and log-uniform in [0.01, 1e4]
    n_moderate: int = 8
    n_wide: int = 16
    # resolved agreeing points needed to say "correct"
    min_agreeing: int = 4
    # arbitrary-precision evaluations per check, and the most digits any may use
    max_precise: int = 10
    max_digits: int = 1500
    seed: int = 0


@dataclass(frozen=True)
class VerifierConfig:
    """`genprobe integration verify` takes one option per field (`with_config_options`), each
    field's comment its help."""

    # the settings no option gives (the identity test's and the parser's, at their defaults)
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = ("identity", "limits")
    # the defaults that follow from where it runs, as the command line shows them
    DERIVED_DEFAULTS: ClassVar[dict[str, str]] = {
        "workers": "one per CPU",
        "start_method": "the platform's",
    }
    # CPU seconds per item, parse excluded; overrun = timeout (the wall-clock backstop is the
    # pool's default).
    deadline: float = 2.0
    # How a timeout counts: strict (it fails) or generous (it passes); recorded in every
    # verdict.
    policy: TimeoutPolicy = TimeoutPolicy.STRICT
    # fallback (SymPy only where the numbers are inconclusive) or confirm (also to prove a
    # numeric "correct": a SymPy proof is required).
    symbolic: Literal["fallback", "confirm"] = "fallback"
    identity: IdentitySettings = field(default_factory=IdentitySettings)
    limits: ParseLimits = DEFAULT_LIMITS
    workers: int | None = None  # Worker processes.
    # Multiprocessing start method: fork, spawn or forkserver.
    start_method: str | None = None

    def validated(self) -> VerifierConfig:
        if not (finite(self.deadline) and self.deadline > 0):
            raise ConfigError("deadline", "a positive number of seconds", self.deadline)
        if self.symbolic not in ("fallback", "confirm"):
            raise ConfigError("symbolic", "'fallback' or 'confirm'", self.symbolic)
        return self
