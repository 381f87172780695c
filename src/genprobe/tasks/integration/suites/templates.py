"""The simple primitives of the robustness study (SAGGA's `robustness.py`), each with its
antiderivative in closed form, as SymPy expressions in `X` built from integer coefficients."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import sympy as sp

from genprobe.tasks.integration.expression import X


class Template(NamedTuple):
    problem: Callable[[int, int], sp.Expr]  # (k1, k2) -> f
    reference: Callable[[int, int], sp.Expr]  # (k1, k2) -> F, F' = f
    uses_k2: bool


def _ratio(k1: int, k2: int) -> sp.Rational:
    return sp.Rational(k1, k2)


TEMPLATES: dict[str, Template] = {
    "k1*ln(k2*x)": Template(
        lambda k1, k2: k1 * sp.log(k2 * X),
        lambda k1, k2: k1 * X * (sp.log(k2 * X) - 1),
        uses_k2=True,
    ),
    "k1*x": Template(lambda k1, _: k1 * X, lambda k1, _: sp.Rational(k1, 2) * X**2, uses_k2=False),
    "k1*x**42": Template(
        lambda k1, _: k1 * X**42, lambda k1, _: sp.Rational(k1, 43) * X**43, uses_k2=False
    ),
    "k1*exp(k2*x)": Template(
        lambda k1, k2: k1 * sp.exp(k2 * X),
        lambda k1, k2: _ratio(k1, k2) * sp.exp(k2 * X),
        uses_k2=True,
    ),
    "k1*sin(k2*x)": Template(
        lambda k1, k2: k1 * sp.sin(k2 * X),
        lambda k1, k2: -_ratio(k1, k2) * sp.cos(k2 * X),
        uses_k2=True,
    ),
    "k1*cos(k2*x)": Template(
        lambda k1, k2: k1 * sp.cos(k2 * X),
        lambda k1, k2: _ratio(k1, k2) * sp.sin(k2 * X),
        uses_k2=True,
    ),
    "k1*tan(k2*x)": Template(
        lambda k1, k2: k1 * sp.tan(k2 * X),
        lambda k1, k2: -_ratio(k1, k2) * sp.log(sp.cos(k2 * X)),
        uses_k2=True,
    ),
    # exponents: k1 = n
    "x**k1": Template(lambda n, _: X**n, lambda n, _: X ** (n + 1) / (n + 1), uses_k2=False),
    "x**(1/k1)": Template(
        lambda n, _: X ** sp.Rational(1, n),
        lambda n, _: sp.Rational(n, n + 1) * X ** sp.Rational(n + 1, n),
        uses_k2=False,
    ),
}
