"""Probabilistic identity testing: is F' = f, judged at random points?

Both sides are evaluated at points in the upper half plane near the real axis (real points only
when `abs` or `sign` occurs, since they are not analytic). Doubles decide agreement when every
point agrees to a relative 1e-9 with no over- or underflow on the way; anything else (a
disagreement, a value below 1e-250, an overflow) is settled with mpmath at 30 digits, and a
disagreement is only believed if it survives 80 digits too, so cancellation cannot fake it.
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
AGREE_PRECISE = {30: 1e-20, 80: 1e-60}


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


def _precise_verdict(f: Program, big_f: Program, point: complex) -> bool | None:
    """True/False/None for one point in arbitrary precision; None at singularities."""
    gaps = {}
    for digits, agree in AGREE_PRECISE.items():
        try:
            with mpmath.workdps(digits):
                _, derivative = evaluate_precise(big_f, point, digits)
                value, _ = evaluate_precise(f, point, digits)
                gap = _relative_gap(derivative, value)
        except (ZeroDivisionError, ValueError, OverflowError, MagnitudeError):
            return None
        if not (mpmath.isfinite(derivative) and mpmath.isfinite(value)):
            return None
        if gap < agree:
            return True
        gaps[digits] = gap
    # disagreement at both precisions, with the same size: not a rounding artefact
    low, high = gaps[30], gaps[80]
    if high > DISAGREE and abs(low - high) <= 1e-3 * high:
        return False
    return None


def check_identity(
    integrand: Expr, candidate: Expr, settings: IdentitySettings = IdentitySettings()
) -> IdentityResult:
    """Decide numerically whether d/dx `candidate` equals `integrand`."""
    f = compile_expr(integrand)
    big_f = compile_expr(candidate)
    points = _points(settings, real_only=f.uses_abs or big_f.uses_abs)
    value, _, f_suspect = evaluate_doubles(f, points)
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
    for index in order[: settings.max_precise_points]:
        verdict = _precise_verdict(f, big_f, complex(points[index]))
        if verdict is False:
            return IdentityResult(False, agreeing, f"differs at x = {complex(points[index]):.4g}")
        if verdict:
            agreeing += 1
    if agreeing >= settings.min_agreeing:
        return IdentityResult(True, agreeing, "doubles and mpmath")
    return IdentityResult(None, agreeing, f"only {agreeing} points could be evaluated")
