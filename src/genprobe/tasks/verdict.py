"""The outcome of checking one model output, and how outcomes become pass/fail: part of the
task contract (a task's `outcomes`, the integration verifier's verdicts), shared by the
verification, the analysis and the studies above it."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from genprobe.runs.pool import DeadlineCounts


class Outcome(str, enum.Enum):
    CORRECT = "correct"
    INCORRECT = "incorrect"
    TIMEOUT = "timeout"
    UNPARSEABLE = "unparseable"
    UNSUPPORTED = "unsupported"  # the input lies outside what the task can encode or check


class TimeoutPolicy(str, enum.Enum):
    """How a timeout counts: `strict` as a failure (Lample & Charton), `generous` as a success
    (the SAGGA code)."""

    STRICT = "strict"
    GENEROUS = "generous"

    def passed(self, outcome: Outcome) -> bool:
        if outcome is Outcome.CORRECT:
            return True
        if outcome is Outcome.TIMEOUT:
            return self is TimeoutPolicy.GENEROUS
        return False


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    method: str  # what decided it, e.g. "validity-rule", "numeric", "sympy"
    seconds: float = 0.0
    detail: str = ""
    policy: TimeoutPolicy = TimeoutPolicy.STRICT  # recorded with every result

    @property
    def passed(self) -> bool:
        return self.policy.passed(self.outcome)

    def to_dict(self) -> dict[str, object]:
        return {
            "outcome": self.outcome.value,
            "passed": self.passed,
            "method": self.method,
            "seconds": round(self.seconds, 6),
            "policy": self.policy.value,
            "detail": self.detail,
        }


def deadline_counts(verdicts: Iterable[tuple[str, str]]) -> DeadlineCounts:
    """How many verdicts, as (outcome, method), there are, and how many timed out on the CPU
    budget or were killed at the wall-clock backstop."""
    counts = DeadlineCounts()
    for outcome, method in verdicts:
        counts.items += 1
        if outcome == Outcome.TIMEOUT.value:
            counts.hung += method == "backstop"
            counts.over_budget += method != "backstop"
    return counts
