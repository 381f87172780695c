"""Accuracy, Fail@k and Unresolved@k counted once from judged outputs (`analysis.rates`): over
answers, over ranked candidates (or the answer where an input has none), under either timeout
policy, group by group in the table's order."""

import math

import numpy as np
import pandas as pd
import pytest
from helpers import ranked_problems

from genprobe.analysis import rates
from genprobe.analysis.judged import ANSWER, CANDIDATE


def _row(member, suite, index, role, rank, outcome, logprob=np.nan, reference=np.nan):
    keys = ("member", "suite", "index", "role", "rank", "outcome", "logprob", "reference_logprob")
    values = (member, suite, index, role, rank, outcome, logprob, reference)
    return dict(zip(keys, values, strict=True))


def _judged(rows):
    return pd.DataFrame(rows).astype({"rank": "Int64"})


def test_accuracy_is_the_share_of_right_answers_per_group_in_the_tables_order():
    judged = _judged(
        [
            _row("seed=2", "b", 0, ANSWER, 1, "correct"),
            _row("seed=2", "b", 0, CANDIDATE, 1, "incorrect"),  # a candidate is no answer
            _row("seed=2", "b", 1, ANSWER, 1, "unparseable"),
            _row("seed=1", "a", 0, ANSWER, 1, "correct"),
        ]
    )
    accuracy = rates.accuracy(judged, ["member", "suite"])
    assert accuracy.to_dict() == {("seed=2", "b"): 0.5, ("seed=1", "a"): 1.0}
    assert list(accuracy.index) == [("seed=2", "b"), ("seed=1", "a")]


def test_the_ranked_candidates_of_an_input_are_its_candidates_or_else_its_answer():
    judged = _judged(
        [
            _row("m", "s", 0, ANSWER, 1, "correct"),
            _row("m", "s", 0, CANDIDATE, 1, "incorrect"),
            _row("m", "s", 0, CANDIDATE, 2, "correct"),
            _row("m", "s", 1, ANSWER, 1, "correct"),  # decoded once: its answer stands
        ]
    )
    first = rates.first_pass(judged)
    assert first["index"].tolist() == [0, 1] and first["first"].tolist() == [2.0, 1.0]
    assert (rates.ranked(judged)["role"] == [CANDIDATE, CANDIDATE, ANSWER]).all()


def test_fail_at_k_follows_the_timeout_policy_and_keeps_a_missing_group():
    problems = ranked_problems(
        [1, 5, None, 2], [1, 2, 1, None], suite="s", set=["u", "u", None, None]
    )
    strict = rates.fail_at(problems, [5, 1], ["set"])
    assert list(strict.columns) == ["set", "inputs", "Fail@1", "Fail@5"]
    assert strict["inputs"].tolist() == [2, 2]
    assert strict["Fail@1"].tolist() == [0.5, 1.0] and strict["Fail@5"].tolist() == [0.0, 0.5]
    assert pd.isna(strict["set"].iloc[1])  # problems of no set are a group of their own
    generous = rates.fail_at(problems, [1], ["suite"], rates.PASSING["generous"])
    assert generous["Fail@1"].tolist() == [0.5]  # the 3rd passes at 1, the 2nd and 4th at 2
    assert rates.PASSING == {"strict": ("correct",), "generous": ("correct", "timeout")}


def test_an_input_without_any_candidate_fails_at_every_k():
    judged = _judged([_row("m", "s", 0, CANDIDATE, pd.NA, None)])
    table = rates.fail_at(judged, [1, 10], ["suite"])
    assert table[["Fail@1", "Fail@10"]].iloc[0].tolist() == [1.0, 1.0]
    assert rates.failed(pd.Series([np.nan, 3.0, 1.0]), 2).tolist() == [True, True, False]


def test_unresolved_weighs_the_reference_against_the_last_known_of_the_first_k():
    def candidates(index, logprobs, right, reference):
        return [
            _row("m", "s", index, CANDIDATE, rank, "correct" if rank == right else "incorrect",
                 logprob, reference)
            for rank, logprob in enumerate(logprobs, start=1)
        ]  # fmt: skip

    judged = _judged(
        candidates(0, [-1.0, -2.0, -3.0], None, -2.5)  # below the top, above the third
        + candidates(1, [-1.0, -2.0, -4.0], 2, -1.5)  # right at 2: a failure at 1 only
        + candidates(2, [-1.0, np.nan, np.nan], None, -5.0)  # one score: the top is the k-th
        + candidates(3, [-1.0, -2.0, -3.0], None, np.nan)  # no reference scored: left out
    )
    table = rates.unresolved(judged, [3, 1], ["suite"])
    assert table.to_dict("records") == [
        {"suite": "s", "k": 1, "failures scored": 3, "unresolved": 1.0},
        {"suite": "s", "k": 3, "failures scored": 2, "unresolved": 0.5},
    ]


def test_unresolved_of_no_failure_is_not_a_number():
    judged = _judged([_row("m", "s", 0, CANDIDATE, 1, "correct", -1.0, -2.0)])
    table = rates.unresolved(judged, [1], ["suite"])
    assert table["failures scored"].tolist() == [0] and math.isnan(table["unresolved"].iloc[0])


@pytest.mark.parametrize("rate", ["accuracy", "fail_at", "unresolved"])
def test_a_rate_of_no_rows_is_an_empty_table(rate):
    judged = _judged([_row("m", "s", 0, ANSWER, 1, "correct")]).iloc[:0]
    table = {
        "accuracy": lambda: rates.accuracy(judged, ["suite"]),
        "fail_at": lambda: rates.fail_at(judged, [1], ["suite"]),
        "unresolved": lambda: rates.unresolved(judged, [1], ["suite"]),
    }[rate]()
    assert len(table) == 0
