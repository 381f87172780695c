"""The schema of judged outputs (`analysis.judged`) read from each study's stored layout: a
sweep's predictions (a trained sweep's `valid`, a language model's `outcome`), a probe's result
rows (k = 1, k > 1, runs decoded before a column existed) and a brittleness run's examples (a
problem without a candidate included)."""

import numpy as np
import pandas as pd
import pytest

from genprobe.analysis.judged import (
    ANSWER,
    CANDIDATE,
    COLUMNS,
    from_brittleness,
    from_predictions,
    from_probe,
)

LABELS = {1: "seed=1", 2: "seed=2"}


def _predictions(**more):
    return pd.DataFrame(
        {"seed": [1, 1, 2, 2], "suite": "s", "index": [0, 1, 0, 1], "input": ["a", "b"] * 2,
         "output": ["x", "", "x", "y"], "valid": [True, False, False, True], "length": [1, 2] * 2,
         **more}
    )  # fmt: skip


def test_a_sweeps_predictions_are_each_seeds_answers_accepted_or_not():
    judged = from_predictions(_predictions(token_accuracy=[1.0, 0.0, 0.5, 1.0]), LABELS)
    assert list(judged.columns) == [*COLUMNS, "seed", "length", "token_accuracy"]
    assert judged["member"].tolist() == ["seed=1", "seed=1", "seed=2", "seed=2"]
    assert judged["outcome"].tolist() == ["correct", "incorrect", "incorrect", "correct"]
    assert (judged["role"] == ANSWER).all() and judged["rank"].tolist() == [1] * 4
    assert judged["readable"].all() and judged["reference"].isna().all()
    assert judged["logprob"].isna().all() and judged["reference_logprob"].isna().all()
    assert judged["output"].tolist() == ["x", "", "x", "y"]  # an empty answer stays one


def test_a_language_models_answers_keep_the_verdicts_they_got():
    outcome = ["correct", "unparseable", "incorrect", "correct"]
    judged = from_predictions(_predictions(outcome=outcome, completion=["x"] * 4), LABELS)
    assert judged["outcome"].tolist() == outcome and "valid" not in judged
    assert judged["completion"].tolist() == ["x"] * 4


def _results(k: int = 1, **more):
    """Two members' rows of two inputs of the base suite, each decoded with k candidates."""
    rows = {
        "member": ["seed=1", "seed=1", "seed=2", "seed=2"], "suite": "base", "kind": "base",
        "index": [0, 1, 0, 1], "origin": [0, 1, 0, 1], "input": ["1 + 1", "2 + 2"] * 2,
        "readable": True, "gold": ["2", "4"] * 2, "output": ["2", "5", "3", "4"],
        "outcome": ["correct", "incorrect", "incorrect", "correct"],
        "first_correct": pd.array([1, None, None, 1] if k == 1 else [1, 2, None, 2], "Int64"),
        "gold_logprob": [-0.5, -2.0, -1.0, -0.1], "output_logprob": [-0.5, -1.0, -0.2, -0.1],
        "feature: length": [1, 1, 1, 1],
    }  # fmt: skip
    if k > 1:
        rows |= {
            "candidates": [["2", "7"], ["5", "4"], ["3", "5"], ["3", "4"]],
            "candidate_outcomes": [["correct", None], ["incorrect", "correct"],
                                   ["incorrect", "incorrect"], ["incorrect", "correct"]],
            "candidate_logprobs": [np.array([-0.5, -3.0]), np.array([-1.0, -2.0]),
                                   np.array([-0.2, -0.9]), np.array([-0.3, -0.4])],
        }  # fmt: skip
    return pd.DataFrame(rows | more)


def test_a_probe_that_decodes_one_output_has_its_answers_scored_against_the_gold_one():
    judged = from_probe(_results())
    assert list(judged.columns) == [*COLUMNS, "kind", "origin", "feature: length"]
    assert (judged["role"] == ANSWER).all() and judged["rank"].tolist() == [1] * 4
    assert judged["reference"].tolist() == ["2", "4", "2", "4"]
    assert judged["reference_logprob"].tolist() == [-0.5, -2.0, -1.0, -0.1]
    assert judged["logprob"].tolist() == [-0.5, -1.0, -0.2, -0.1]  # the answer's own


def test_a_probe_with_k_candidates_gives_each_input_its_answer_then_its_candidates():
    judged = from_probe(_results(k=2))
    assert len(judged) == 4 * 3
    first = judged[(judged["member"] == "seed=1") & (judged["index"] == 0)]
    assert first["role"].tolist() == [ANSWER, CANDIDATE, CANDIDATE]
    assert first["rank"].tolist() == [1, 1, 2]
    assert first["output"].tolist() == ["2", "2", "7"]
    assert first["outcome"].tolist()[:2] == ["correct", "correct"]
    assert pd.isna(first["outcome"].iloc[2])  # not judged: after the first right one's window
    # the candidates' log-probabilities; `output_logprob`, the top candidate's, is not the answer's
    assert np.isnan(first["logprob"].iloc[0]) and first["logprob"].tolist()[1:] == [-0.5, -3.0]
    assert (first["input"] == "1 + 1").all() and (first["feature: length"] == 1).all()
    # every input keeps its identity (suite, index) whatever the member
    inputs = {
        member: set(map(tuple, rows[["suite", "index", "input"]].to_numpy()))
        for member, rows in judged.groupby("member")
    }
    assert inputs["seed=1"] == inputs["seed=2"]


def test_a_probe_run_decoded_before_per_candidate_scores_and_readable_still_reads():
    older = _results(k=2).drop(columns=["candidate_logprobs", "readable"])
    judged = from_probe(older)
    candidates = judged[judged["role"] == CANDIDATE]  # the top one's is `output_logprob`
    assert candidates[candidates["rank"] == 1]["logprob"].tolist() == [-0.5, -1.0, -0.2, -0.1]
    assert candidates[candidates["rank"] == 2]["logprob"].isna().all()
    assert judged["readable"].all()


def test_a_task_with_many_right_outputs_takes_the_suites_known_one_as_reference():
    results = _results().assign(gold=None, reference=["2", None, "2", None])
    reference = from_probe(results)["reference"]
    assert reference.iloc[0] == "2" and pd.isna(reference.iloc[1])


def _examples():
    candidate = {"parsed": True, "score": -0.1, "seconds": 0.01, "method": "numeric"}
    return pd.DataFrame(
        {
            "suite": ["a", "a"], "row": [0, 1], "problem": ["add x x", "x"],
            "reference": ["mul x x", None], "readable": [True, False], "n_candidates": [2, 0],
            "first_correct_rank": pd.array([2, None], "Int64"),
            "first_generous_rank": pd.array([2, None], "Int64"),
            "reference_logprob": [-1.5, None], "set": ["s", "t"], "method": ["fwd", "bwd"],
            "candidates": [
                [{**candidate, "rank": 1, "answer": "x", "logprob": -1.0, "outcome": "incorrect"},
                 {**candidate, "rank": 2, "answer": "mul x x", "logprob": None,
                  "outcome": "correct"}],
                [],
            ],
        }
    )  # fmt: skip


def test_a_brittleness_run_gives_each_problems_candidates_in_rank_order():
    judged = from_brittleness(_examples(), "ckpt:model.pt")
    assert list(judged.columns[: len(COLUMNS)]) == list(COLUMNS)
    assert judged["member"].tolist() == ["ckpt:model.pt"] * 3
    assert judged["index"].tolist() == [0, 0, 1] and judged["input"].tolist()[0] == "add x x"
    assert (judged["role"] == CANDIDATE).all()
    assert judged["rank"].tolist()[:2] == [1, 2] and pd.isna(judged["rank"].iloc[2])
    assert judged["output"].tolist()[:2] == ["x", "mul x x"]
    assert judged["logprob"].tolist()[0] == -1.0 and judged["logprob"].iloc[1:].isna().all()
    # the verifier's method beside the suite's, which keeps its name
    assert judged["verified_by"].tolist()[:2] == ["numeric", "numeric"]
    assert judged["method"].tolist() == ["fwd", "fwd", "bwd"]
    # a problem the model could not read: one row, no candidate
    unread = judged.iloc[2]
    assert not unread["readable"] and pd.isna(unread["output"]) and pd.isna(unread["outcome"])
    assert not {"row", "problem", "candidates", "first_correct_rank"} & set(judged.columns)


@pytest.mark.parametrize("reader", ["predictions", "probe", "brittleness"])
def test_every_reader_gives_the_schemas_columns_first_in_its_order(reader):
    judged = {
        "predictions": lambda: from_predictions(_predictions(), LABELS),
        "probe": lambda: from_probe(_results(k=2)),
        "brittleness": lambda: from_brittleness(_examples(), "m"),
    }[reader]()
    assert list(judged.columns[: len(COLUMNS)]) == list(COLUMNS)
    assert str(judged["rank"].dtype) == "Int64" and judged["logprob"].dtype == float
    assert judged.index.equals(pd.RangeIndex(len(judged)))
