"""The contract every adapter of an integration model meets (ckpt:, lc:, bundled:, sympy, py:,
openai:): ranked candidate antiderivatives with scores. It is the adapters' own: studies and
commands ask the model through `integration_tokens.IntegrationSequenceModel`, the
`SequenceModel` that puts any such `Model` behind the contract of every model under test.

A model gets integrands (`Expr`) and returns, per problem, up to k `Candidate`s, best first.
A candidate's `answer` is the parsed expression when the model's output could be read, else the
raw output (text or tokens), which the verifier then judges `unparseable`. Models that can say
how likely an answer is also implement `score`: the total log-probability of a candidate,
teacher-forced, whether or not their search would have found it.

Example:
    model = load_model("sympy")
    [[best, *_]] = model.candidates([parse_infix("2*x")], k=1)
    best.answer  -> x**2 (an Expr);  best.score -> 0.0
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from genprobe.errors import ModelCapabilityError
from genprobe.runs.pool import DeadlineCounts
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.printing import answer_text, infix_text


@dataclass(frozen=True)
class Candidate:
    # the parsed expression, or the raw output (text or prefix tokens) when it did not parse
    answer: Expr | str | tuple[str, ...]
    # what the model ranks by, higher first (a length-normalized log-probability for seq2seq)
    score: float
    # total log-probability of the output, where the model gives one
    logprob: float | None = None

    @property
    def parsed(self) -> bool:
        return isinstance(self.answer, Expr)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: prefix and infix text of a parsed answer, or the raw output."""
        record: dict[str, Any] = {"score": self.score, "logprob": self.logprob}
        if isinstance(self.answer, Expr):
            record["prefix"] = answer_text(self.answer)
            record["infix"] = infix_text(self.answer)
        else:
            record["raw"] = answer_text(self.answer)
        return record


class Model(abc.ABC):
    """An integration model under test. Subclasses implement `candidates`, and `score` if they
    can."""

    name: str = "model"
    # whether `score` gives log-probabilities (the search-vs-model analysis needs them)
    can_score: bool = False

    @abc.abstractmethod
    def candidates(self, problems: Sequence[Expr], k: int) -> list[list[Candidate]]:
        """Up to k candidates per problem (integrand f), best first; one list per problem, in
        input order. A model that has nothing to offer for a problem returns an empty list."""

    def readable(self, problems: Sequence[Expr]) -> list[bool]:
        """Whether the model can take each problem at all (a seq2seq model cannot read one
        longer than its position table); an unreadable problem gets no candidates."""
        return [True] * len(problems)

    def score(self, pairs: Sequence[tuple[Expr, Expr]]) -> list[float]:
        """Total log-probability of each (problem, candidate) pair, teacher-forced.

        Raises:
            ModelCapabilityError: the model gives no probabilities.
        """
        raise ModelCapabilityError(f"{self.name} gives no log-probabilities")

    def check(self) -> None:
        """Raises a GenprobeError where the model cannot be asked at all (nothing answers at an
        endpoint's URL): asked before a new run is written. Default: nothing to check."""
        return None

    def close(self) -> None:
        """Release worker processes or connections; the default holds none."""
        return None

    def deadline_counts(self) -> DeadlineCounts | None:
        """For a model with a deadline of its own (`sympy`): the problems it was asked so far,
        and how many ran out of it (they got no candidates); None for a model without one."""
        return None

    def describe(self) -> dict[str, Any]:
        """The settings that produced the candidates, for run records."""
        return {"name": self.name}
