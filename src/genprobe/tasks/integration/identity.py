"""Probabilistic identity testing: is F' = f, judged at random points?

Both sides are evaluated at points in the upper half plane near the real axis (real points only
when `abs` or `sign` occurs, since they are not analytic). Doubles decide agreement when every
point agrees to a relative 1e-9 with no over- or underflow on the way; anything else (a
disagreement, a value below 1e-250, an overflow) is settled with mpmath, climbing from 30 to
80 to 160 digits; a disagreement is only believed when two precisions measure the same gap, so
rounding and cancellation cannot fake it.
Tolerances are relative: exp(-42/x) near 0 is 1e-37 and still compared exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.numeric import (
    MagnitudeError,
    Program,
    compile_expr,
    evaluate_doubles,
    evaluate_precise,
)

AGREE_DOUBLE = 1e-9
DISAGREE = 1e-6
# the precision ladder: (significant digits, relative gap below which the point agrees)
PRECISIONS = ((30, 1e-20), (80, 1e-60), (160, 1e-120))


@dataclass(frozen=True)
class IdentitySettings:
    # random points drawn per check; the check needs `min_agreeing` of them to say "correct"
    n_points: int = 8
    min_agreeing: int = 4
    # real parts are +-uniform(low, high); imaginary parts uniform(imag_low, imag_high)
    real_range: tuple[float, float] = (0.3, 3.0)
    imag_range: tuple[float, float] = (0.05, 0.5)
    # most points settled with mpmath in one check (each costs about a millisecond)
    max_precise_points: int = 4
    seed: int = 0


@dataclass(frozen=True)
class IdentityResult:
    decision: bool | None  # True: F' = f, False: F' != f, None: inconclusive
    agreeing: int
    detail: str = ""


def _points(settings: IdentitySettings, real_only: bool) -> np.ndarray:
    rng = np.random.default_rng(settings.seed)
    n = settings.n_points
    real = rng.uniform(*settings.real_range, n) * rng.choice([-1.0, 1.0], n)
    imag = np.zeros(n) if real_only else rng.uniform(*settings.imag_range, n)
    return real + 1j * imag


def _relative_gap(a: Any, b: Any) -> Any:
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale else 0


def _precise_verdict(
    f: Program, big_f: Program, point: complex, double_gap: float | None, start: int
) -> tuple[bool | None, int]:
    """(True/False/None, the ladder step that settled it) for one point in arbitrary
    precision, climbing `PRECISIONS` from step `start`; None at singularities.

    A disagreement is believed when two precisions measure the same gap: doubles (if they
    were trusted at this point) and the first step, or two consecutive steps.
    """
    previous = double_gap
    for step in range(start, len(PRECISIONS)):
        digits, agree = PRECISIONS[step]
        try:
            with mpmath.workdps(digits):
                _, derivative = evaluate_precise(big_f, point, digits)
                value, _ = evaluate_precise(f, point, digits, differentiate=False)
                gap = _relative_gap(derivative, value)
        except (ZeroDivisionError, ValueError, OverflowError, MagnitudeError):
            return None, step
        if not (mpmath.isfinite(derivative) and mpmath.isfinite(value)):
            return None, step
        if gap < agree:
            return True, step
        if previous is not None and _same_gap(previous, gap, 1e-6):
            return False, step
        previous = gap
    return None, len(PRECISIONS) - 1


def _same_gap(low: Any, high: Any, tolerance: float) -> bool:
    return high > DISAGREE and abs(low - high) <= tolerance * high


def check_identity(
    integrand: Expr, candidate: Expr, settings: IdentitySettings = IdentitySettings()
) -> IdentityResult:
    """Decide numerically whether d/dx `candidate` equals `integrand`."""
    f = compile_expr(integrand)
    big_f = compile_expr(candidate)
    points = _points(settings, real_only=f.uses_abs or big_f.uses_abs)
    value, _, f_suspect = evaluate_doubles(f, points, differentiate=False)
    _, derivative, big_f_suspect = evaluate_doubles(big_f, points)
    with np.errstate(all="ignore"):
        scale = np.maximum(np.abs(value), np.abs(derivative))
        gap = np.abs(derivative - value) / scale
    trusted = (
        np.isfinite(value)
        & np.isfinite(derivative)
        & (scale > 1e-250)
        & ~f_suspect
        & ~big_f_suspect
    )
    agree = trusted & (gap <= AGREE_DOUBLE)
    if agree.all():
        return IdentityResult(True, int(agree.sum()), "doubles")
    agreeing = int(agree.sum())
    # settle the rest in arbitrary precision, clear disagreements first
    unsettled = np.flatnonzero(~agree)
    order = sorted(unsettled, key=lambda i: -(gap[i] if trusted[i] else 0.0))
    step = 0  # once a point needed more digits, the next ones start there
    for index in order[: settings.max_precise_points]:
        double_gap = float(gap[index]) if trusted[index] else None
        verdict, step = _precise_verdict(f, big_f, complex(points[index]), double_gap, step)
        if verdict is False:
            return IdentityResult(False, agreeing, f"differs at x = {complex(points[index]):.4g}")
        if verdict:
            agreeing += 1
    if agreeing >= settings.min_agreeing:
        return IdentityResult(True, agreeing, "doubles and mpmath")
    return IdentityResult(None, agreeing, f"only {agreeing} points could be evaluated")
