"""Is a candidate F an antiderivative of the problem f? Verdicts that never hang.

`problem` is the integrand f (the model input is `sub Y' f`); `candidate` is a proposed F, judged
up to an additive constant: F and F + 7 are both correct. Either may be given in any form
`reading.read_expression` accepts: an `Expr`, SymPy, prefix tokens, prefix or infix text.

How it decides, inside a worker process with a deadline of CPU time (default 2 s; a wall-clock
backstop kills a worker that hangs, see `runs.pool`):
  1. numeric identity test of F' against f at random points (`identity.py`);
  2. SymPy, `simplify(F' - f) == 0`, when the numbers are inconclusive (singularities,
     overflow), or always with `symbolic="confirm"` (then a numeric "correct" needs a proof).
Parsing happens first, in the calling process, under the size limits of `ParseLimits`.

Outcomes: `correct`, `incorrect`, `timeout` (the CPU budget ran out, method `deadline`, or the
worker hung and was killed at the backstop, method `backstop`),
`unparseable` (the candidate is not an expression we can read), `unsupported` (the problem
lies outside the environment: another variable, a special function, ...). A SymPy error in
step 2 counts as `incorrect`, with the error in `detail`, as in Lample & Charton's evaluator.

Example:
    verify("2*x", "x^2 + C").outcome                       -> Outcome.CORRECT
    verify(["sub", "Y'", "cos", "x"], "sin(2x)").outcome   -> Outcome.INCORRECT
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace

import sympy as sp

from genprobe.errors import (
    GenprobeError,
    ParseError,
    UnsupportedExpressionError,
)
from genprobe.runs.cpus import usable_cpus
from genprobe.runs.pool import DeadlinePool, TaskResult
from genprobe.tasks.integration.expression import Expr, X, to_sympy
from genprobe.tasks.integration.identity import check_identity
from genprobe.tasks.integration.limits import TRUSTED_LIMITS
from genprobe.tasks.integration.prefix import from_prefix, to_prefix
from genprobe.tasks.integration.reading import ExpressionInput, read_expression
from genprobe.tasks.integration.verifier_config import VerifierConfig
from genprobe.tasks.verdict import Outcome, Verdict


def _sympy_decides(problem: Expr, candidate: Expr) -> tuple[bool, str]:
    difference = sp.simplify(sp.diff(to_sympy(candidate), X) - to_sympy(problem))
    if difference == 0:
        return True, ""
    return False, f"simplify(F' - f) = {sp.sstr(difference)[:200]}"


def decide(config: VerifierConfig, pair: tuple[list[str], list[str]]) -> tuple[str, str, str]:
    """(outcome, method, detail) for a parsed pair, sent as prefix tokens (flat lists pickle
    at any depth); runs inside a pool worker."""
    problem, candidate = (from_prefix(tokens, TRUSTED_LIMITS) for tokens in pair)
    numeric = check_identity(problem, candidate, config.identity)
    if numeric.decision is False:
        return Outcome.INCORRECT.value, "numeric", numeric.detail
    if numeric.decision and config.symbolic == "fallback":
        return Outcome.CORRECT.value, "numeric", numeric.detail
    method = "numeric+sympy" if numeric.decision else "sympy"
    try:
        proved, detail = _sympy_decides(problem, candidate)
    except ParseError as error:  # e.g. a power of two numbers too large to build exactly
        return Outcome.UNPARSEABLE.value, method, str(error)
    except GenprobeError as error:
        return Outcome.UNSUPPORTED.value, method, str(error)
    except Exception as error:  # SymPy's own failures (Risch NotImplementedError, ...)
        return Outcome.INCORRECT.value, method, f"SymPy raised {type(error).__name__}: {error}"
    if proved:
        return Outcome.CORRECT.value, method, ""
    if numeric.decision:
        detail = f"equal at {numeric.agreeing} points but not proved: {detail}"
    return Outcome.INCORRECT.value, method, detail


class Verifier:
    """Verifies pairs in a pool of worker processes that it owns; use as a context manager.

    Example:
        with Verifier(VerifierConfig(deadline=1.0)) as verifier:
            verdicts = verifier.verify_many([("cos(x)", "sin(x)"), ("x", "x^2")])
    """

    def __init__(self, config: VerifierConfig | None = None) -> None:
        self.config = (config or VerifierConfig()).validated()
        self._pool: DeadlinePool | None = None

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _get_pool(self, n_items: int) -> DeadlinePool:
        if self._pool is None:
            workers = self.config.workers or usable_cpus()
            self._pool = DeadlinePool(
                max(1, min(workers, n_items)), start_method=self.config.start_method
            )
        return self._pool

    def _verdict(self, outcome: Outcome, method: str, seconds: float, detail: str) -> Verdict:
        return Verdict(outcome, method, seconds, detail, self.config.policy)

    def verify(self, problem: ExpressionInput, candidate: ExpressionInput) -> Verdict:
        return self.verify_many([(problem, candidate)])[0]

    def verify_many(
        self,
        pairs: Iterable[tuple[ExpressionInput, ExpressionInput]],
        on_result: Callable[[int, Verdict], None] | None = None,
    ) -> list[Verdict]:
        """Verdicts for `(problem, candidate)` pairs, in input order.

        `on_result(index, verdict)` is called as each verdict is ready (for progress bars).

        Raises:
            ParseError: a problem cannot be parsed (candidates are judged `unparseable` instead).
        """
        verdicts: dict[int, Verdict] = {}
        parse_seconds: dict[int, float] = {}
        work: list[tuple[int, tuple[list[str], list[str]]]] = []

        def settle(index: int, verdict: Verdict) -> None:
            verdicts[index] = verdict
            if on_result is not None:
                on_result(index, verdict)

        for index, (problem, candidate) in enumerate(pairs):
            start = time.perf_counter()
            try:
                problem_expr = read_expression(problem, self.config.limits)
            except UnsupportedExpressionError as error:
                settle(
                    index, self._verdict(Outcome.UNSUPPORTED, "parser", _since(start), str(error))
                )
                continue
            except ParseError as error:
                raise ParseError(f"problem {index}: {error}") from None
            try:
                candidate_expr = read_expression(candidate, self.config.limits)
            except GenprobeError as error:
                settle(
                    index, self._verdict(Outcome.UNPARSEABLE, "parser", _since(start), str(error))
                )
                continue
            parse_seconds[index] = _since(start)
            work.append((index, (to_prefix(problem_expr), to_prefix(candidate_expr))))
        if work:
            pool = self._get_pool(len(work))
            items = [pair for _, pair in work]
            for result in pool.run(
                decide, items, deadline=self.config.deadline, shared=self.config
            ):
                index = work[result.index][0]
                settle(index, self._from_task(result, parse_seconds[index]))
        return [verdicts[index] for index in sorted(verdicts)]

    def _from_task(self, result: TaskResult, parse_seconds: float) -> Verdict:
        seconds = result.seconds + parse_seconds
        if result.status == "timeout":
            detail = f"no verdict within {self.config.deadline:g} s of CPU time"
            return self._verdict(Outcome.TIMEOUT, "deadline", seconds, detail)
        if result.status == "hang":
            detail = f"no verdict after {result.seconds:.0f} s of wall clock; worker killed"
            return self._verdict(Outcome.TIMEOUT, "backstop", seconds, detail)
        if result.status == "error":
            return self._verdict(Outcome.INCORRECT, "error", seconds, result.error)
        outcome, method, detail = result.value
        return self._verdict(Outcome(outcome), method, seconds, detail)


def _since(start: float) -> float:
    return time.perf_counter() - start


def verify(
    problem: ExpressionInput, candidate: ExpressionInput, config: VerifierConfig | None = None
) -> Verdict:
    """One verdict; starts and stops a one-worker pool. Prefer `Verifier` for many calls."""
    with Verifier(replace(config or VerifierConfig(), workers=1)) as verifier:
        return verifier.verify(problem, candidate)


def verify_many(
    pairs: Iterable[tuple[ExpressionInput, ExpressionInput]],
    config: VerifierConfig | None = None,
    on_result: Callable[[int, Verdict], None] | None = None,
) -> list[Verdict]:
    """Verdicts for many pairs, in input order, verified in parallel worker processes."""
    with Verifier(config) as verifier:
        return verifier.verify_many(pairs, on_result)
