"""SymPy's `integrate` as a model under test: a CAS is brittle too (it hangs, or returns an
unevaluated integral, or special functions outside the task's language).

Each problem is integrated in a `DeadlinePool` worker with a deadline of CPU time; a problem
that runs out of time (or hangs), fails, or stays unevaluated gets no candidate. A result with
functions the task does not encode (erf, Ei, ...) is returned as raw text, which the verifier
judges unparseable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sympy as sp

from genprobe.errors import GenprobeError
from genprobe.runs.cpus import usable_cpus
from genprobe.runs.pool import DeadlineCounts, DeadlinePool
from genprobe.tasks.integration.expression import Expr, X, from_sympy, to_sympy
from genprobe.tasks.integration.prefix import from_prefix, to_prefix
from genprobe.under_test.adapters.integration_model import Candidate, Model


def integrate_in_worker(shared: None, tokens: list[str]) -> tuple[str, Any]:
    """("prefix", tokens) of the antiderivative, ("raw", text) outside the task's language, or
    ("none", reason)."""
    del shared
    result = sp.integrate(to_sympy(from_prefix(tokens)), X)
    if result.has(sp.Integral):
        return "none", "unevaluated integral"
    try:
        return "prefix", to_prefix(from_sympy(result))
    except GenprobeError:
        return "raw", sp.sstr(result)


class SympyModel(Model):
    def __init__(self, deadline: float = 5.0, workers: int | None = None) -> None:
        self.deadline = deadline
        self.workers = workers
        self.name = "sympy"
        self.deadlines = DeadlineCounts()

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "sympy": sp.__version__, "deadline": self.deadline}

    def deadline_counts(self) -> DeadlineCounts:
        return DeadlineCounts() + self.deadlines

    def candidates(self, problems: Sequence[Expr], k: int) -> list[list[Candidate]]:
        del k  # one answer per problem
        results: list[list[Candidate]] = [[] for _ in problems]
        if not problems:
            return results
        workers = max(1, min(self.workers or usable_cpus(), len(problems)))
        items = [to_prefix(problem) for problem in problems]
        with DeadlinePool(workers) as pool:
            for done in pool.run(integrate_in_worker, items, deadline=self.deadline, shared=None):
                self.deadlines.add(done)
                if done.status != "done":
                    continue
                kind, value = done.value
                if kind == "prefix":
                    results[done.index] = [Candidate(from_prefix(value), 0.0)]
                elif kind == "raw":
                    results[done.index] = [Candidate(value, 0.0)]
        return results


def from_spec(deadline: float = 5.0, workers: int | None = None) -> SympyModel:
    return SympyModel(deadline, workers)
