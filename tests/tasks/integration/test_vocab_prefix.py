"""The 91-token vocabulary and the prefix codec, including round trips with random trees."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from genprobe.errors import (
    IntegerTooLargeError,
    NestingTooDeepError,
    ParseError,
    UnsupportedExpressionError,
)
from genprobe.tasks.integration import (
    EOS_INDEX,
    PAD_INDEX,
    VOCAB,
    Expr,
    ParseLimits,
    TreeSettings,
    X,
    decode_ids,
    encode_tokens,
    from_prefix,
    from_sympy,
    problem_prefix,
    random_expression,
    strip_problem_prefix,
    to_prefix,
    to_sympy,
)
from genprobe.tasks.integration.expression import ARITY, depth
from genprobe.tasks.integration.prefix import integer_literals


def test_vocabulary_matches_lample_charton_ids():
    assert len(VOCAB) == 91
    assert (EOS_INDEX, PAD_INDEX) == (0, 1)
    assert VOCAB[:5] == ("<s>", "</s>", "<pad>", "(", ")")
    expected = {10: "pi", 11: "E", 12: "x", 16: "a0", 25: "a9", 26: "abs", 33: "add", 47: "div",
                53: "ln", 54: "mul", 55: "pow", 66: "sqrt", 67: "sub", 69: "tanh", 70: "I",
                71: "INT+", 72: "INT-", 78: "Y", 79: "Y'", 80: "Y''", 81: "0", 90: "9"}  # fmt: skip
    assert {i: VOCAB[i] for i in expected} == expected
    operators = VOCAB[26:70]
    assert list(operators) == sorted(operators) and len(operators) == 44


def test_token_ids_round_trip_and_reject_unknown():
    tokens = ["sub", "Y'", "mul", "INT+", "2", "x"]
    assert decode_ids(encode_tokens(tokens)) == tokens
    with pytest.raises(ParseError, match="token 1"):
        encode_tokens(["x", "banana"])
    with pytest.raises(ParseError):
        decode_ids([91])


def test_notebook_example_encodes_exactly():
    big_f = sp.log(sp.exp(X) * sp.sin(X**2 + 2) * sp.cos(X + sp.exp(X)) / X)
    expected = "ln mul pow x INT- 1 mul cos add x exp x mul exp x sin add INT+ 2 pow x INT+ 2"
    assert " ".join(to_prefix(from_sympy(big_f))) == expected


@pytest.mark.parametrize(
    ("expr", "tokens"),
    [
        (sp.Integer(42), "INT+ 4 2"),
        (sp.Integer(-1), "INT- 1"),
        (sp.Integer(0), "INT+ 0"),
        (sp.Rational(-3, 7), "div INT- 3 INT+ 7"),
        (sp.sqrt(X), "sqrt x"),
        (1 / X, "pow x INT- 1"),
        (X + 1 + sp.sin(X), "add INT+ 1 add x sin x"),
        (sp.E + sp.pi * X, "add E mul pi x"),
    ],
)
def test_canonical_forms(expr, tokens):
    assert " ".join(to_prefix(from_sympy(expr))) == tokens


def test_problem_prefix_is_the_model_input():
    f = from_sympy(sp.cos(X))
    assert problem_prefix(f) == ["sub", "Y'", "cos", "x"]
    assert list(strip_problem_prefix(problem_prefix(f))) == ["cos", "x"]
    unclean = ["sub", "derivative", "f", "x", "x", "cos", "x"]
    assert list(strip_problem_prefix(unclean)) == ["cos", "x"]


@pytest.mark.parametrize(
    ("tokens", "error"),
    [
        ("", ParseError),
        ("add x", ParseError),
        ("x x", ParseError),
        ("INT+", ParseError),
        ("INT+ x", ParseError),
        ("add x <s>", ParseError),
        ("add x 5", ParseError),
        ("banana", ParseError),
        ("y", UnsupportedExpressionError),
        ("mul a0 x", UnsupportedExpressionError),
        ("sub Y' x", UnsupportedExpressionError),
        ("FLOAT 1 . 5", UnsupportedExpressionError),
    ],
)
def test_malformed_prefix_raises_typed_errors(tokens, error):
    with pytest.raises(error):
        from_prefix(tokens.split())


def test_prefix_limits():
    with pytest.raises(NestingTooDeepError):
        from_prefix(["exp"] * 400 + ["x"])
    with pytest.raises(IntegerTooLargeError):
        from_prefix(["INT+"] + ["9"] * 101)
    with pytest.raises(ParseError):
        from_prefix(["x"] * 10, ParseLimits(max_tokens=5))


def test_a_deep_tree_does_not_hit_the_recursion_limit():
    # a sum of 1,500 terms nests 1,500 deep in prefix form
    total = sp.Add(*[X**k for k in range(1, 1501)])
    tree = from_sympy(total)
    assert depth(tree) > 1400
    tokens = to_prefix(tree)
    assert from_prefix(tokens, ParseLimits(max_depth=10_000, max_tokens=10**5)) == tree
    assert to_sympy(tree) == total


_UNARY = [op for op, n in ARITY.items() if n == 1]
_BINARY = [op for op, n in ARITY.items() if n == 2]
_leaves = st.one_of(
    st.just(Expr.var()),
    st.builds(Expr.integer, st.integers(-(10**6), 10**6)),
    st.sampled_from([Expr("pi"), Expr("E")]),
)
trees = st.recursive(
    _leaves,
    lambda children: st.one_of(
        st.builds(lambda op, a: Expr(op, (a,)), st.sampled_from(_UNARY), children),
        st.builds(lambda op, a, b: Expr(op, (a, b)), st.sampled_from(_BINARY), children, children),
    ),
    max_leaves=12,
)


@given(trees)
@settings(max_examples=300, deadline=None)
def test_any_tree_round_trips_through_prefix(tree):
    assert from_prefix(to_prefix(tree)) == tree


def _integers(tree):
    """The integer leaves of a tree, in prefix order."""
    if tree.op == "int":
        return [tree.value]
    return [value for arg in tree.args for value in _integers(arg)]


@given(trees)
@settings(max_examples=200, deadline=None)
def test_integer_literals_reads_every_integer_of_prefix_text(tree):
    assert integer_literals(" ".join(to_prefix(tree))) == _integers(tree)


def test_integer_literals_takes_whole_tokens_only():
    assert integer_literals("sub Y' add INT+ 4 2 mul INT- 1 x") == [42, -1]
    assert integer_literals("INT+  1\t0 x INT+ x INT- 0") == [10, 0]  # any spacing; no digits
    assert integer_literals("INT+ 12 xINT+ 1") == []  # "12" is no digit token


@given(st.integers(0, 2**32), st.integers(0, 12))
@settings(max_examples=80, deadline=None)
def test_generated_trees_round_trip_tree_prefix_tree_sympy(seed, n_ops):
    tree = random_expression(np.random.default_rng(seed), n_ops, TreeSettings())
    assert from_prefix(to_prefix(tree)) == tree
    expr = to_sympy(tree)
    if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I):
        return  # outside the vocabulary: from_sympy refuses (tested below)
    canonical = from_sympy(expr)
    # SymPy's canonical form is a fixed point of the conversion, token for token
    assert to_sympy(canonical) == expr
    assert from_prefix(to_prefix(canonical)) == canonical
    assert to_prefix(from_sympy(to_sympy(canonical))) == to_prefix(canonical)


def test_from_sympy_refuses_what_has_no_token():
    for expr in (sp.Symbol("x") + 1, sp.Float(0.5) * X, sp.I * X, sp.erf(X), sp.zoo, sp.oo):
        with pytest.raises(UnsupportedExpressionError):
            from_sympy(expr)


def test_huge_integer_powers_are_refused_not_computed():
    with pytest.raises(IntegerTooLargeError):
        to_sympy(
            from_prefix(
                ["pow", "INT+", "7", "INT+", "1", "0", "0", "0", "0", "0", "0", "0", "0", "0"]
            )
        )
