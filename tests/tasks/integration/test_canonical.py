"""The generator's own terms: SymPy's canonical form and derivative, exactly, and the cheap
factoring that stands in for `simplify`."""

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from genprobe.errors import ConfigError, IntegerTooLargeError
from genprobe.tasks.integration import canonical as C
from genprobe.tasks.integration import terms as T
from genprobe.tasks.integration.derivative import derivative
from genprobe.tasks.integration.expression import Expr, X, to_sympy
from genprobe.tasks.integration.factoring import simplify
from genprobe.tasks.integration.generation_config import GeneratorConfig, TreeSettings
from genprobe.tasks.integration.generators import attempt
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.random_trees import random_expression


def _random_trees(n, max_ops, seed=7):
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        yield random_expression(rng, int(rng.integers(4, max_ops + 1)), TreeSettings())


def test_terms_and_derivatives_are_sympys_exactly():
    covered = 0
    trees = list(_random_trees(150, 15))
    for tree in trees:
        try:
            big_f = C.strip_constant(C.from_tree(tree))
            f = derivative(big_f)
        except T.Unsupported:
            continue
        expected = to_sympy(tree).as_independent(X, as_Add=True)[1]
        assert T.from_sympy(expected) == big_f, expected
        assert T.from_sympy(sp.diff(expected, X)) == f, expected
        assert T.prefix_length(f) == len(to_prefix(T.to_tree(f)))
        covered += 1
    assert covered >= 0.9 * len(trees)  # the rest goes to SymPy


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda: C.mul(Fraction(3), C.add(T.X, Fraction(2))), 3 * X + 6),
        (lambda: C.mul(T.X, C.power(T.X, Fraction(2))), X**3),
        (lambda: C.apply("sin", C.neg(T.X)), -sp.sin(X)),
        (lambda: C.apply("cos", C.add(Fraction(1), C.neg(T.X))), sp.cos(X - 1)),
        (lambda: C.power(C.power(T.X, Fraction(2)), T.HALF), sp.Abs(X)),
        (lambda: C.apply("exp", C.apply("log", T.X)), X),
        (lambda: C.power(C.mul(Fraction(8), T.X), T.HALF), 2 * sp.sqrt(2) * sp.sqrt(X)),
        (lambda: C.apply("asin", Fraction(1)), sp.pi / 2),
    ],
)
def test_rules_and_delegated_nodes_build_sympys_form(build, expected):
    assert T.to_sympy(build()) == expected
    assert T.from_sympy(expected) == build()


def test_abs_of_a_real_argument_differentiates_as_sympy():
    big_f = C.mul(T.X, C.power(C.power(C.apply("sin", T.X), Fraction(2)), T.HALF))
    assert T.to_sympy(big_f) == X * sp.Abs(sp.sin(X))
    assert T.from_sympy(sp.diff(T.to_sympy(big_f), X)) == derivative(big_f)


def test_order_of_arguments_is_sympys():
    terms = [C.apply("sin", T.X), C.power(T.X, Fraction(2)), T.X, C.apply("exp", T.X)]
    total = C.add(*terms)
    assert [T.to_sympy(a) for a in total.args] == list(sp.Add(*map(T.to_sympy, terms)).args)


def test_outside_the_language_is_unsupported_and_huge_powers_are_refused():
    with pytest.raises(T.Unsupported):
        derivative(C.apply("Abs", C.apply("tan", T.X)))  # SymPy may not know tan(x) real
    with pytest.raises(T.Unsupported):
        C.from_tree(Expr.apply("sec", Expr.var()))
    with pytest.raises(T.Unsupported):
        T.from_sympy(sp.I * X)
    with pytest.raises(IntegerTooLargeError):
        C.power(Fraction(5), Fraction(10**6))


def test_factoring_pulls_common_factors_and_keeps_the_value():
    exp = C.apply("exp", T.X)
    assert T.to_sympy(simplify(C.add(C.mul(T.X, exp), C.mul(Fraction(2), exp)))) == (
        X + 2
    ) * sp.exp(X)
    assert simplify(C.add(C.mul(T.X, exp), exp)) == C.add(C.mul(T.X, exp), exp)  # not shorter
    over = C.power(C.apply("sin", T.X), Fraction(-1))
    assert T.to_sympy(simplify(C.add(C.mul(T.X, over), over))) == (X + 1) / sp.sin(X)
    for tree in _random_trees(60, 10, seed=3):
        try:
            f = derivative(C.strip_constant(C.from_tree(tree)))
        except T.Unsupported:
            continue
        simplified = simplify(f)
        assert T.prefix_length(simplified) <= T.prefix_length(f)
        difference = T.to_sympy(simplified) - T.to_sympy(f)
        for point in (sp.Rational(7, 10), sp.Rational(13, 10)):
            value = complex(difference.subs(X, point).evalf(30))
            assert abs(value) < 1e-9 or not np.isfinite(value), (f, simplified)


@pytest.mark.parametrize("engine", ["lc", "fast"])
def test_terms_engines_make_the_same_pairs_as_sympy_without_simplification(engine):
    config = GeneratorConfig(method="bwd", max_ops=10, simplify_probability=0, engine=engine)
    for index in range(60):
        fast = attempt((config, {}), (11, index))
        slow = attempt((replace(config, engine="sympy"), {}), (11, index))
        assert (fast.status, fast.input, fast.output) == (slow.status, slow.input, slow.output)


def test_engine_is_checked():
    with pytest.raises(ConfigError, match="engine"):
        GeneratorConfig(method="bwd", engine="turbo").validated()
