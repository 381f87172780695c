"""Hard cases for a verifier of antiderivatives, built by construction (tests, benchmarks).

`dominance_pairs()`: a dominant antiderivative D (large and tiny coefficients in exponents, x
and x**2 in exponents, nested exponentials, huge powers and coefficients) next to a small term
W. Right candidates: D + W for D' + W', and D + 7 for D'. Wrong candidates: D + W for D' (an
extra term), D for D' + W' (a missing term), sin(x) for D' + cos(x) (a missing dominant term)
and D*(1 + 10**-20) for D'. A wrong term is invisible at every point where D dominates it, so a
verifier that compares F' and f at a few points in doubles calls many of these correct.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import sympy as sp

from genprobe.tasks.integration.expression import X

x = X

DOMINANT = (
    sp.exp(2190 / x),
    sp.exp(-2319 / x),
    sp.exp(37 / x),
    sp.exp(9973 / x) / 3,
    sp.exp(394 * x**2),
    sp.exp(-5000 * x**2),
    sp.exp(x**2 / 7919),
    sp.exp(1000 * x),
    sp.exp(-x / 10**6) * 10**15,
    sp.exp(sp.exp(x)),
    sp.exp(2 * sp.exp(x**2)),
    sp.exp(sp.exp(5 / x)),
    sp.Integer(100000) ** x,
    2 ** (x**2),
    x**x,
    x**1000 / 1000,
    x ** (-500),
    (x + 1) ** 200,
    5 * 10**12 * sp.sin(x),
    10**30 * x,
    10**50 * sp.exp(x),
    x / 10**20 + sp.exp(x**3),
    sp.sinh(300 * x),
    sp.tan(x) * 10**18,
)
SMALL = (x, sp.sin(x), sp.cos(x), x**2, sp.log(x))


@dataclass(frozen=True)
class StressPair:
    problem: sp.Expr  # the integrand f
    candidate: sp.Expr  # a proposed antiderivative F
    correct: bool
    name: str


def dominance_pairs() -> list[StressPair]:
    """432 pairs: 144 right and 288 wrong candidates."""
    pairs = []
    for d, w in itertools.product(DOMINANT, SMALL):
        name = f"D={d}, W={w}"
        d_prime, w_prime = sp.diff(d, x), sp.diff(w, x)
        pairs += [
            StressPair(d_prime + w_prime, d + w, True, f"right: {name}"),
            StressPair(d_prime, d + w, False, f"extra term: {name}"),
            StressPair(d_prime + w_prime, d, False, f"missing term: {name}"),
        ]
    for d in DOMINANT:
        d_prime = sp.diff(d, x)
        pairs += [
            StressPair(d_prime, d + 7, True, f"right plus a constant: D={d}"),
            StressPair(d_prime, d * (1 + sp.Rational(1, 10**20)), False, f"relative 1e-20: D={d}"),
            StressPair(d_prime + sp.cos(x), sp.sin(x), False, f"missing dominant term: D={d}"),
        ]
    return pairs
