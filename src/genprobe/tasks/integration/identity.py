"""Probabilistic identity testing: is F' = f, judged at random points?

Points: |x| spread over magnitudes, a third in [0.3, 3] and the rest log-uniform in
[0.01, 10^4], with random signs and a tiny positive imaginary part, so that no point lies on a
branch cut and every point is connected to the real line without crossing one (real points
only when `abs` or `sign` occur, since they are not analytic). A wrong term that hides under a
dominant one at small |x| (exp(2190/x) + sin(x)) stands out at large |x|, and the other way
round.

Every point is evaluated in doubles first, all at once, with a bound on the rounding error
(`numeric.py`). A point:
- *disagrees* when |F' - f| exceeds what rounding can explain. That is believed when the point
  resolves both sides and the gap is `CLEAR` times beyond the rounding bound, or else when a
  second, higher precision measures the same difference, so no rounding effect can fake it;
  one believed disagreement makes the candidate incorrect.
- *agrees* when |F' - f| is within the rounding error **and** the point resolves every term
  of both sides (no summand lost in its sum's rounding, every integer exact, both sides known
  to 6 digits). Agreement at a point that cannot resolve a term says nothing: it is never
  counted.
Points that doubles cannot resolve are settled in mpmath, the most nearly resolved first,
with as many digits as the evaluation says it lacks (up to `max_digits`). `min_agreeing`
resolved agreeing points and no believed disagreement make the candidate correct; otherwise
the test is inconclusive and the verifier asks SymPy.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.numeric import (
    DOUBLE_DIGITS,
    Evaluation,
    MagnitudeError,
    Program,
    compile_check,
    evaluate_doubles,
    evaluate_precise,
)
from genprobe.tasks.integration.verifier_config import IdentitySettings

DEFAULT_SETTINGS = IdentitySettings()

# |F' - f| up to this multiple of the rounding-error bound is "equal"
TOLERANCE = 8.0
# a gap this many tolerances wide, at a point that resolves both sides, needs no confirmation
CLEAR = 1e3
# digits of the first arbitrary-precision evaluation, and the margin added when climbing
START_DIGITS = 30
MARGIN_DIGITS = 10


@dataclass(frozen=True)
class IdentityResult:
    decision: bool | None  # True: F' = f, False: F' != f, None: inconclusive
    agreeing: int  # resolved points where F' and f agree
    detail: str = ""


@functools.lru_cache(maxsize=8)
def sample_points(settings: IdentitySettings, real_only: bool) -> np.ndarray:
    rng = np.random.default_rng(settings.seed)
    moderate = rng.uniform(0.3, 3.0, settings.n_moderate)
    # log-uniform, stratified so that every decade gets its share
    strata = (np.arange(settings.n_wide) + rng.uniform(0, 1, settings.n_wide)) / settings.n_wide
    wide = 10.0 ** (-2 + 6 * strata)
    size = np.concatenate([moderate, wide])
    real = size * rng.choice([-1.0, 1.0], len(size))
    if real_only:
        points = real.astype(complex)
    else:
        # just above the real axis: never on a branch cut, and so close to the real line that
        # no intermediate winds around a cut on the way (log(4**(x**2)) at x = 100)
        points = real + 1j * np.minimum(size, 1.0) * rng.uniform(1e-7, 1e-6, len(size))
    points.flags.writeable = False  # shared by every check (cached)
    return points


def _gap(evaluation: Evaluation) -> Any:
    return abs(evaluation.derivative - evaluation.integrand)


class _Checker:
    """The arbitrary-precision side of one check, with its budget of evaluations."""

    def __init__(self, program: Program, settings: IdentitySettings) -> None:
        self.program = program
        self.settings = settings
        self.budget = settings.max_precise

    def evaluate(self, point: complex, digits: int) -> Evaluation | None:
        self.budget -= 1
        try:
            result = evaluate_precise(self.program, point, digits)
        except (ZeroDivisionError, ValueError, OverflowError, MagnitudeError, MemoryError):
            return None  # a singularity, or numbers too large to be worth computing
        finite = all(
            mpmath.isfinite(v) for v in (result.derivative, result.integrand, result.error)
        )
        return result if finite else None

    def settle(
        self, point: complex, digits: int, previous: Evaluation | None = None
    ) -> bool | None:
        """True (agrees, resolved), False (a disagreement two precisions confirm) or None.

        `previous`: an evaluation at lower precision that saw a disagreement here.
        """
        while self.budget > 0 and digits <= self.settings.max_digits:
            result = self.evaluate(point, digits)
            if result is None:
                return None
            gap = _gap(result)
            if gap > TOLERANCE * result.error:
                if (
                    previous is not None
                    and abs(
                        (result.derivative - result.integrand)
                        - (previous.derivative - previous.integrand)
                    )
                    <= TOLERANCE * previous.error
                ):
                    return False
                previous = result
                digits += 2 * MARGIN_DIGITS
            elif result.deficit <= 0:
                return True
            elif not math.isfinite(float(result.deficit)):
                return None  # a sum that cancels to exactly zero: no precision resolves it
            else:
                previous = None
                digits += math.ceil(float(result.deficit)) + MARGIN_DIGITS
        return None


def check_identity(
    integrand: Expr, candidate: Expr, settings: IdentitySettings = DEFAULT_SETTINGS
) -> IdentityResult:
    """Decide numerically whether d/dx `candidate` equals `integrand`."""
    program = compile_check(integrand, candidate)
    points = sample_points(settings, real_only=program.uses_abs)
    doubles = evaluate_doubles(program, points)
    with np.errstate(all="ignore"):
        gap = _gap(doubles)
        finite = (
            np.isfinite(doubles.derivative)
            & np.isfinite(doubles.integrand)
            & np.isfinite(doubles.error)
        )
        differs = finite & (gap > TOLERANCE * doubles.error)
        resolved = finite & ~differs & (doubles.deficit <= 0)
        clear = differs & (doubles.deficit <= 0) & (gap > CLEAR * TOLERANCE * doubles.error)
        relative = np.where(differs, gap / np.maximum(np.abs(doubles.integrand), 1e-300), 0)
    agreeing = int(resolved.sum())
    if clear.any():
        return IdentityResult(False, agreeing, _at(points[np.argmax(clear)]))
    checker = _Checker(program, settings)
    # 1. disagreements seen in doubles, the clearest first, confirmed in arbitrary precision
    for index in np.argsort(-relative, kind="stable")[: int(differs.sum())]:
        if checker.budget <= 0:
            break
        previous = Evaluation(
            doubles.derivative[index], doubles.integrand[index], doubles.error[index], 0
        )
        verdict = checker.settle(complex(points[index]), START_DIGITS, previous)
        if verdict is False:
            return IdentityResult(False, agreeing, _at(points[index]))
        agreeing += bool(verdict)
    if agreeing >= settings.min_agreeing:
        return IdentityResult(True, agreeing, "doubles")
    # 2. points doubles could not resolve, the most nearly resolved first
    deficit = np.where(finite, doubles.deficit, np.inf)
    for index in np.argsort(deficit, kind="stable"):
        if resolved[index] or differs[index]:
            continue
        if checker.budget <= 0:
            break
        lacking = deficit[index]
        digits = START_DIGITS
        if np.isfinite(lacking):
            digits = max(START_DIGITS, math.ceil(DOUBLE_DIGITS + lacking) + MARGIN_DIGITS)
        verdict = checker.settle(complex(points[index]), digits)
        if verdict is False:
            return IdentityResult(False, agreeing, _at(points[index]))
        if verdict:
            agreeing += 1
            if agreeing >= settings.min_agreeing:
                return IdentityResult(True, agreeing, "doubles and mpmath")
    return IdentityResult(None, agreeing, f"only {agreeing} points resolved every term")


def _at(point: complex) -> str:
    return f"differs at x = {complex(point):.4g}"
