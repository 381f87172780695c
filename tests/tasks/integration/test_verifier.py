"""The verifier: outcomes, input forms, policies, deadlines, under fork and spawn."""

import pytest
import sympy as sp

from genprobe.errors import ParseError
from genprobe.tasks.integration import (
    Verifier,
    VerifierConfig,
    X,
    problem_prefix,
    read_expression,
    to_prefix,
    verify,
    verify_many,
)
from genprobe.tasks.integration.expression import from_sympy
from genprobe.tasks.verdict import Outcome, TimeoutPolicy

# numeric says "correct" at once; SymPy's simplify needs ~15 s to prove it (sympy#9032)
SLOW_TO_PROVE = (
    "-64*sin(32*x)*cos(32*x)/sqrt(cos(64*x))",
    "sqrt(cos(64*x))",
)


def test_single_verdicts():
    assert verify("2*x", "x^2 + C").outcome is Outcome.CORRECT
    assert verify("2*x", "x^2 + 7").outcome is Outcome.CORRECT
    wrong = verify(["sub", "Y'", "cos", "x"], "sin(2x)")
    assert wrong.outcome is Outcome.INCORRECT
    assert wrong.method == "numeric"
    assert not wrong.passed
    assert wrong.seconds > 0


def test_every_outcome_and_input_form():
    f = from_sympy(sp.cos(X) * X)
    big_f = from_sympy(sp.cos(X) + X * sp.sin(X))
    pairs = [
        (problem_prefix(f), to_prefix(big_f)),  # token lists, with the model-input head
        (" ".join(problem_prefix(f)), " ".join(to_prefix(big_f))),  # token strings
        (sp.cos(X) * X, "cos(x) + x sin(x)"),  # SymPy problem, infix candidate
        (f, "The integral is x*sin(x) + cos(x) + C."),  # Expr problem, prose candidate
        ("x*cos(x)", "x*sin(x) - cos(x)"),  # sign error
        ("x*cos(x)", "x sin(x) +"),  # unparseable candidate
        ("x*cos(x)", ["add", "x"]),  # malformed prefix candidate
        ("x*y", "x"),  # a problem outside the environment
        ("erf(x)", "x"),
    ]
    outcomes = [v.outcome for v in verify_many(pairs, VerifierConfig(workers=2))]
    assert outcomes == [Outcome.CORRECT] * 4 + [
        Outcome.INCORRECT,
        Outcome.UNPARSEABLE,
        Outcome.UNPARSEABLE,
        Outcome.UNSUPPORTED,
        Outcome.UNSUPPORTED,
    ]


def test_unparseable_problem_is_an_error_naming_it():
    with pytest.raises(ParseError, match="problem 1"):
        verify_many([("x", "x"), ("x +", "x")])


def test_string_read_as_prefix_or_infix():
    assert read_expression("add x INT+ 1") == read_expression("x + 1")
    # all vocabulary words, but not valid prefix: read as infix
    assert read_expression("x - 1") == read_expression("sub x INT+ 1")


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_timeout_policies_and_deadline(start_method):
    config = VerifierConfig(deadline=1.0, symbolic="confirm", start_method=start_method)
    with Verifier(config) as verifier:
        strict = verifier.verify(*SLOW_TO_PROVE)
        fast = verifier.verify("2*x", "x^2")
    assert strict.outcome is Outcome.TIMEOUT
    assert strict.policy is TimeoutPolicy.STRICT and not strict.passed
    assert strict.method == "deadline" and strict.seconds >= config.deadline
    assert fast.outcome is Outcome.CORRECT and fast.method == "numeric+sympy"
    generous = verify(*SLOW_TO_PROVE, VerifierConfig(deadline=0.5, symbolic="confirm",
                                                    policy=TimeoutPolicy.GENEROUS))  # fmt: skip
    assert generous.outcome is Outcome.TIMEOUT and generous.passed
    assert generous.to_dict()["policy"] == "generous"


def test_symbolic_fallback_when_numbers_are_inconclusive():
    # a tower of exponentials overflows at most points: numbers may not decide, SymPy can
    tower = sp.exp(sp.exp(sp.exp(sp.exp(sp.exp(X)))))
    verdict = verify(sp.diff(tower, X), tower)
    assert verdict.outcome is Outcome.CORRECT
    assert verdict.method in ("numeric", "sympy")


def test_a_constant_written_with_x_goes_to_sympy_and_is_correct():
    # its derivative cancels to exactly 0 at every point: once an OverflowError (an "error")
    big_f = X / (X + X * sp.exp(sp.atan(4)))
    verdict = verify(sp.diff(big_f, X), big_f)
    assert (verdict.outcome, verdict.method) == (Outcome.CORRECT, "sympy")


def test_verdicts_come_back_in_input_order():
    pairs = [("x", "x^2/2"), ("x", "x^3"), ("cos(x)", "sin(x)"), ("1", "x + 1")] * 3
    seen = []
    verdicts = verify_many(pairs, VerifierConfig(workers=2), on_result=lambda i, v: seen.append(i))
    assert sorted(seen) == list(range(len(pairs)))
    expected = [Outcome.CORRECT, Outcome.INCORRECT, Outcome.CORRECT, Outcome.CORRECT] * 3
    assert [v.outcome for v in verdicts] == expected
