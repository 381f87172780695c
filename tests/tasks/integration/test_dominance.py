"""A wrong term hidden next to a dominant one must never pass the verifier (`stress.py`)."""

import pytest

from genprobe.tasks.integration import Verifier, VerifierConfig, from_sympy
from genprobe.tasks.integration.stress import dominance_pairs
from genprobe.tasks.verdict import Outcome

PAIRS = dominance_pairs()

# the examples that passed as correct before the verifier resolved every term
ISSUE_EXAMPLES = [
    ("-2190*exp(2190/x)/x**2", "exp(2190/x) + sin(x)"),
    ("-2190*exp(2190/x)/x**2", "x + exp(2190/x)"),
    ("1 + 2319*exp(-2319/x)/x**2", "x"),
    ("5000000000000*cos(x)", "5000000000000*sin(x) + x"),
    ("788*x*exp(394*x**2)", "exp(394*x**2) + cos(x)"),
]


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(workers=2)) as verifier:
        yield verifier


def test_corpus_is_large_and_mixed():
    assert len(PAIRS) >= 200
    assert sum(p.correct for p in PAIRS) >= 100
    assert sum(not p.correct for p in PAIRS) >= 200


def test_every_dominance_pair_is_judged_right(verifier):
    verdicts = verifier.verify_many(
        [(from_sympy(p.problem), from_sympy(p.candidate)) for p in PAIRS]
    )
    wrong = []
    for pair, verdict in zip(PAIRS, verdicts, strict=True):
        allowed = {Outcome.CORRECT} if pair.correct else {Outcome.INCORRECT, Outcome.TIMEOUT}
        if verdict.outcome not in allowed:
            wrong.append(
                f"{pair.name}: {verdict.outcome.value} ({verdict.method}: {verdict.detail})"
            )
    assert not wrong, "\n".join(wrong)


def test_the_reported_examples_are_incorrect(verifier):
    verdicts = verifier.verify_many(ISSUE_EXAMPLES)
    assert [v.outcome for v in verdicts] == [Outcome.INCORRECT] * len(ISSUE_EXAMPLES)
    assert all(v.method == "numeric" for v in verdicts)
