"""The numeric identity test, on cases where doubles alone would be wrong."""

import pytest
import sympy as sp

from genprobe.tasks.integration import X, from_sympy
from genprobe.tasks.integration.identity import check_identity

x = X
BIG = sp.Rational(262144, 9)


@pytest.mark.parametrize(
    ("f", "big_f", "expected"),
    [
        (sp.cos(x), sp.sin(x), True),
        (sp.cos(x), sp.sin(x) + 7, True),  # up to an additive constant
        (sp.cos(x), 2 * sp.sin(x), False),
        (1 / x, sp.log(x), True),
        (1 / x, sp.log(sp.Abs(x)), True),  # abs: real points only
        (1 / x, sp.log(2 * x), True),
        (sp.sin(x) ** 2, x / 2 - sp.sin(2 * x) / 4, True),  # a trig identity
        (sp.sin(x) ** 2, x / 2 - sp.sin(x) * sp.cos(x) / 2 + 3, True),
        (sp.sin(x) ** 2, x / 2 + sp.sin(x) * sp.cos(x) / 2, False),
        (x**100, x**101 / 101, True),
        (x**100, x**102 / 101, False),  # exponent off by one
        (sp.acot(x), x * sp.acot(x) + sp.log(x**2 + 1) / 2, True),
        (sp.sqrt(x - 5), sp.Rational(2, 3) * (x - 5) ** sp.Rational(3, 2), True),
        # values far below 1e-15: only a relative tolerance decides
        (42 * sp.exp(-42 / x) / x**2, sp.exp(-42 / x), True),
        (42 * sp.exp(-42 / x) / x**2, sp.exp(-43 / x), False),
        ((x + sp.E**14) ** -3, -((x + sp.E**14) ** -2) / 2, True),
        ((x + sp.E**14) ** -3, -((x + sp.E**14) ** -2) / 2 + 1, True),
        ((x + sp.E**14) ** -3, -((x + sp.E**14) ** -2) / 2 + x / 10**20, False),
        # values that underflow doubles: only arbitrary precision decides
        (x * sp.exp(-BIG * x**2), -sp.exp(-BIG * x**2) / (2 * BIG), True),
        (x * sp.exp(-BIG * x**2), -sp.exp(-(BIG + 1) * x**2) / (2 * BIG), False),
        (x * sp.exp(-BIG * x**2), -sp.exp(-BIG * x**2) / (2 * BIG + 1), False),
    ],
)
def test_identity_decisions(f, big_f, expected):
    assert check_identity(from_sympy(f), from_sympy(big_f)).decision is expected


def test_cancellation_does_not_fake_a_difference():
    # (x + 1)**20 expanded: doubles lose digits near x = -1, exact digits do not
    big_f = sp.expand((x + 1) ** 20)
    assert check_identity(from_sympy(20 * (x + 1) ** 19), from_sympy(big_f)).decision is True


def test_overflow_never_fakes_a_difference():
    # a tower of exponentials overflows doubles, and mpmath at most points we look at
    tower = sp.exp(sp.exp(sp.exp(sp.exp(sp.exp(x)))))
    result = check_identity(from_sympy(sp.diff(tower, x)), from_sympy(tower))
    assert result.decision in (None, True)
    wrong = check_identity(from_sympy(sp.diff(tower, x)), from_sympy(2 * tower))
    assert wrong.decision in (None, False)


def test_an_integrand_that_cancels_to_exactly_zero_is_left_undecided_not_an_error():
    # F is the constant 1/(1 + e^atan(4)) written with x; its derivative, as written, cancels
    # to exactly 0 at every precision, so no point resolves it (found on a BWD test set)
    big_f = x / (x + x * sp.exp(sp.atan(4)))
    result = check_identity(from_sympy(sp.diff(big_f, x)), from_sympy(big_f))
    assert result.decision is None and "points resolved" in result.detail
