"""The infix parser for untrusted text: what models write, prose around it, and fuzzing."""

import contextlib

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from genprobe.errors import (
    GenprobeError,
    InputTooLongError,
    IntegerTooLargeError,
    NestingTooDeepError,
    ParseError,
    UnsupportedExpressionError,
)
from genprobe.tasks.integration import (
    TreeSettings,
    X,
    extract_math,
    parse_infix,
    random_expression,
    to_sympy,
)

x = X


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x**2", x**2),
        ("x^2", x**2),
        ("2x", 2 * x),
        ("2 x^3 - 5", 2 * x**3 - 5),
        ("sin(x)", sp.sin(x)),
        ("sinx", sp.sin(x)),
        ("log(x)", sp.log(x)),
        ("ln(x)", sp.log(x)),
        ("ln|x| + C", sp.log(sp.Abs(x))),
        ("sqrt(x+1)", sp.sqrt(x + 1)),
        ("√x", sp.sqrt(x)),
        ("exp(-x)/2", sp.exp(-x) / 2),
        ("e^x", sp.exp(x)),
        ("e^(2x)", sp.exp(2 * x)),
        ("E**x", sp.exp(x)),
        ("pi*x", sp.pi * x),
        ("π x", sp.pi * x),
        ("−x", -x),
        ("x – 1", x - 1),
        ("-x^2", -(x**2)),
        ("2^x^2", 2 ** (x**2)),
        ("x^-1", 1 / x),
        ("3 - - x", 3 + x),
        ("(x+1)(x-1)", (x + 1) * (x - 1)),
        ("x sin x", x * sp.sin(x)),
        ("sin 2x", sp.sin(2 * x)),
        ("sin x cos x", sp.sin(x) * sp.cos(x)),
        ("sin^2(x)", sp.sin(x) ** 2),
        ("sin^-1(x)", sp.asin(x)),
        ("arctan(x)", sp.atan(x)),
        ("arcsinh(x)", sp.asinh(x)),
        ("0.5x^2", x**2 / 2),
        ("1.25", sp.Rational(5, 4)),
        ("log(x, 2)", sp.log(x) / sp.log(2)),
        ("x²", x**2),
        ("2·x", 2 * x),
        ("C + x", x),
        ("x - C", x),
        (r"\frac{x^2}{2} + C", x**2 / 2),
        (r"$\sin x \cdot \cos x$", sp.sin(x) * sp.cos(x)),
        (r"e^{x^2}", sp.exp(x**2)),
        (r"\left(x+1\right)^2", (x + 1) ** 2),
    ],
)
def test_what_models_write(text, expected):
    assert to_sympy(parse_infix(text)) == expected


@pytest.mark.parametrize(
    ("text", "math"),
    [
        ("The antiderivative is x^3/3 + C.", "x^3/3 + C"),
        ("∫ 2x dx = x² + C", "x² + C"),
        ("x^2/2 + C, where C is a constant.", "x^2/2 + C,"),
        ("So the answer is $\\sin(x) + C$.", "\\sin(x) + C"),
        ("Answer: `exp(x)`", "exp(x)"),
    ],
)
def test_prose_rule(text, math):
    assert extract_math(text).rstrip(",") == math.rstrip(",")


def test_prose_is_stripped_before_parsing():
    assert to_sympy(parse_infix("The antiderivative is x^3/3 + C.")) == x**3 / 3
    assert to_sympy(parse_infix("x^2/2 + C, where C is a constant")) == x**2 / 2


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", ParseError),
        ("x +", ParseError),
        ("((x)", ParseError),
        ("sin", ParseError),
        ("x^^2", ParseError),
        ("x $", ParseError),
        ("x C", ParseError),
        ("sin(C)", ParseError),
        ("foo(x)", ParseError),
        ("y", UnsupportedExpressionError),
        ("x*y", UnsupportedExpressionError),
        ("erf(x)", UnsupportedExpressionError),
        ("1" * 101, IntegerTooLargeError),
        ("x" * 5000, InputTooLongError),
        ("(" * 1000 + "x" + ")" * 1000, NestingTooDeepError),
        ("-" * 1000 + "x", NestingTooDeepError),
        ("2**10**10", None),  # parses; converting it to SymPy is what is refused
    ],
)
def test_bad_text_raises_typed_errors(text, error):
    if error is None:
        with pytest.raises(IntegerTooLargeError):
            to_sympy(parse_infix(text))
        return
    with pytest.raises(error):
        parse_infix(text)


@given(st.text(max_size=80))
@settings(max_examples=400, deadline=None)
def test_fuzz_arbitrary_text_never_crashes(text):
    with contextlib.suppress(GenprobeError):
        parse_infix(text)


_alphabet = st.sampled_from(
    [*list("x0123456789+-*/^()|., "), "sin", "ln", "sqrt", "e", "pi", "C", "**", "{", "}", "−"]
)


@given(st.lists(_alphabet, max_size=40).map("".join))
@settings(max_examples=400, deadline=None)
def test_fuzz_math_like_text_never_crashes(text):
    try:
        expr = parse_infix(text)
    except GenprobeError:
        return
    with contextlib.suppress(GenprobeError):
        to_sympy(expr)


@given(st.integers(0, 2**32), st.integers(0, 10))
@example(252, 7)  # x**2*(x + AccumBounds(-1, 1)): SymPy's value of a function at infinity
@settings(max_examples=60, deadline=None)
def test_sympy_printed_expressions_parse_back(seed, n_ops):
    expr = to_sympy(random_expression(np.random.default_rng(seed), n_ops, TreeSettings()))
    if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I, sp.AccumBounds):  # outside the language
        return
    assert sp.simplify(to_sympy(parse_infix(sp.sstr(expr))) - expr) == 0
