"""Any model, asked each distinct problem once: a wrapper that caches and counts queries.

A search asks about the same problem many times (a seed's mutants recur across generations);
the wrapper answers repeats from memory, keyed by the problem's canonical prefix and k, and
counts what reached the model, so a report can state the search's effort.

Example:
    model = CachedModel(load_model("sympy"))
    model.candidates([p, p, q], k=1)    # the inner model is asked about p and q once each
    model.queries, model.hits           -> 2, 1
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from genprobe.runs.pool import DeadlineCounts
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.under_test import Candidate, Model


class CachedModel(Model):
    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.can_score = inner.can_score
        self._answers: dict[tuple[str, int], list[Candidate]] = {}
        self._readable: dict[str, bool] = {}
        self.queries = 0  # problems the inner model was asked for candidates
        self.hits = 0  # problems answered from the cache

    def candidates(self, problems: Sequence[Expr], k: int) -> list[list[Candidate]]:
        keys = [(" ".join(to_prefix(p)), k) for p in problems]
        new = {key: p for key, p in zip(keys, problems, strict=True) if key not in self._answers}
        if new:
            answers = self.inner.candidates(list(new.values()), k)
            self._answers.update(zip(new, answers, strict=True))
        self.queries += len(new)
        self.hits += len(keys) - len(new)
        return [self._answers[key] for key in keys]

    def readable(self, problems: Sequence[Expr]) -> list[bool]:
        keys = [" ".join(to_prefix(p)) for p in problems]
        new = {key: p for key, p in zip(keys, problems, strict=True) if key not in self._readable}
        if new:
            self._readable.update(zip(new, self.inner.readable(list(new.values())), strict=True))
        return [self._readable[key] for key in keys]

    def deadline_counts(self) -> DeadlineCounts | None:
        return self.inner.deadline_counts()

    def score(self, pairs: Sequence[tuple[Expr, Expr]]) -> list[float]:
        return self.inner.score(pairs)

    def close(self) -> None:
        self.inner.close()

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()
