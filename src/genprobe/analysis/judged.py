"""One schema for judged outputs, whatever the study: what each member answered to each input
and what the task's verifier made of it (docs/results-schema.md describes it per study).

One row per member × suite × input × role × rank:

    member             str      who answered: a sweep's "seed=3", a language model's
                                "format=1 draw=0", a model's spec
    suite              str      the suite of the input
    index              int64    the input's position in its suite, the same for every member
    input              str      the input, in the task's tokens
    readable           bool     whether the model can take the input at all
    reference          str      a right output, where one is known (null: none)
    reference_logprob  float64  the member's log-probability of `reference` (NaN: not scored)
    role               str      "answer": the member's one answer to the input, what accuracy
                                counts; "candidate": one of its ranked candidates, what Fail@k
                                counts (an input without any: its answer stands for them)
    rank               Int64    1-based position among the role's outputs (null: an input
                                that got no candidate at all, on the one row it then has)
    output             str      what the member answered, in the task's tokens
    outcome            str      the verifier's verdict (`tasks.verdict.Outcome`):
                                correct, incorrect, timeout, unparseable, unsupported; null
                                where it was not judged (after the first right candidate's
                                window of ranks) or there is no candidate
    logprob            float64  the member's log-probability of `output` (NaN: not known)

then the study's own columns as its result rows have them (a probe's `kind`, `origin` and
`feature: NAME` columns, a sweep's `seed` and `length`, a brittleness suite's `set`, ...).

A seed sweep (and a language model's run) writes its predictions in it (`answers`); the
readers turn the other stored layouts into it, runs written before included:
`from_predictions` (a sweep's or a language model's predictions before the schema),
`from_probe` (a probe's result rows), `from_brittleness` (a brittleness run's examples).
`analysis.rates` computes accuracy, Fail@k and Unresolved@k from it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from genprobe.tasks.verdict import Outcome

KEYS = ("member", "suite", "index")  # an input's identity
COLUMNS = (
    *KEYS, "input", "readable", "reference", "reference_logprob", "role", "rank", "output",
    "outcome", "logprob",
)  # fmt: skip
ANSWER = "answer"
CANDIDATE = "candidate"

# a probe's lists of the candidates of an input -> the column each item is on its own row
_PROBE_LISTS = {
    "candidates": "output",
    "candidate_outcomes": "outcome",
    "candidate_logprobs": "logprob",
    "candidate_completions": "completion",
}


def answers(rows: pd.DataFrame) -> pd.DataFrame:
    """One answer per member and input, unscored (`rows`: member, suite, index, input, output,
    outcome and the study's own columns) as the schema: every input readable, no reference
    known, no log-probability. A seed sweep's predictions are written so (`predict.py`)."""
    return _ordered(
        rows.assign(
            readable=True,
            reference=pd.Series(None, rows.index, "str"),
            reference_logprob=np.nan,
            role=ANSWER,
            rank=pd.array(np.ones(len(rows), dtype=np.int64), dtype="Int64"),
            logprob=np.nan,
        )
    )


def accepted(valid: np.ndarray) -> np.ndarray:
    """The outcome of answers a verifier only accepts (`valid`) or not: `correct`, else
    `incorrect` (a trained sweep's verdict)."""
    return np.where(np.asarray(valid, dtype=bool), Outcome.CORRECT.value, Outcome.INCORRECT.value)


def from_predictions(predictions: pd.DataFrame, labels: Mapping[int, str]) -> pd.DataFrame:
    """A sweep's predictions as runs made before the schema stored them (one greedy answer
    per seed and example, `valid` where the verifier accepts it; a language model's `outcome`
    too) as the schema (`answers`); `labels`: each seed's member."""
    outcome = predictions["outcome"] if "outcome" in predictions else accepted(predictions["valid"])
    frame = predictions.drop(columns=["valid", "outcome"], errors="ignore")
    return answers(frame.assign(member=predictions["seed"].map(labels), outcome=outcome))


def from_probe(results: pd.DataFrame) -> pd.DataFrame:
    """A probe's result rows (`probe.results.read_results`: one per member and input) as the
    schema: the greedy (or sampled) answer, then with k > 1 the k candidates. `gold` (or a
    suite's `reference`) is the reference, `gold_logprob` its log-probability; `first_correct`
    is left to be counted from the candidates (`analysis.rates`). Runs decoded before a column
    existed: every input readable, no candidate's log-probability past the top one."""
    rows = results.reset_index(drop=True)
    reference = rows["gold"] if "gold" in rows else pd.Series(None, rows.index, "str")
    if "reference" in rows:  # a task with many right outputs: the suite's known one
        reference = reference.where(reference.notna(), rows["reference"])
    inputs = rows.drop(
        columns=[*_PROBE_LISTS, "gold", "reference", "gold_logprob", "first_correct", "output",
                 "outcome", "output_logprob", "completion"],
        errors="ignore",
    ).assign(
        readable=rows.get("readable", True),
        reference=reference,
        reference_logprob=rows.get("gold_logprob", np.nan),
    )  # fmt: skip
    ranked = "candidates" in rows
    # k = 1: the answer's log-probability; k > 1: `output_logprob` is the top candidate's
    scored = rows["output_logprob"] if "output_logprob" in rows else pd.Series(np.nan, rows.index)
    answers = pd.DataFrame(
        {"role": ANSWER, "rank": 1, "output": rows.get("output"), "outcome": rows["outcome"],
         "logprob": np.nan if ranked else scored},
        index=rows.index,
    )  # fmt: skip
    if "completion" in rows:
        answers["completion"] = rows["completion"]
    if not ranked:
        return _ordered(_expanded(inputs, answers))
    lists = {name: rows[name].explode() for name in _PROBE_LISTS if name in rows}
    owner = lists["candidates"].index
    candidates = pd.DataFrame(
        {_PROBE_LISTS[name]: items.to_numpy() for name, items in lists.items()}, index=owner
    ).assign(role=CANDIDATE)
    candidates["rank"] = candidates.groupby(level=0).cumcount() + 1
    if "logprob" not in candidates:  # decoded before `candidate_logprobs`: the top one's alone
        candidates["logprob"] = scored.reindex(owner).where(candidates["rank"] == 1)
    return _ordered(_expanded(inputs, pd.concat([answers, candidates])))


def from_brittleness(examples: pd.DataFrame, model: str) -> pd.DataFrame:
    """A brittleness run's examples (`brittleness.results.read_examples`: one row per problem,
    its candidates a list of {rank, answer, parsed, score, logprob, outcome, method, seconds})
    as the schema, every row the model's (`model`): the candidates in rank order, `answer` as
    `output`, the verifier's `method` as `verified_by` (`method` is the suite's generation
    method), `parsed`, `score` (the search's) and `seconds` (the verifier's) kept; a problem
    with no candidate has one row with none. `n_candidates` and the first passing ranks are
    left to be counted from the candidates (`analysis.rates`)."""
    rows = examples.reset_index(drop=True)
    inputs = rows.drop(
        columns=["row", "problem", "n_candidates", "first_correct_rank", "first_generous_rank",
                 "candidates"],
        errors="ignore",
    ).assign(member=model, index=rows["row"], input=rows["problem"])  # fmt: skip
    listed = rows["candidates"].explode().dropna()
    fields = pd.DataFrame(list(listed), index=listed.index).drop(columns="rank", errors="ignore")
    candidates = fields.rename(columns={"answer": "output", "method": "verified_by"})
    candidates["rank"] = candidates.groupby(level=0).cumcount() + 1
    none = pd.DataFrame(
        {"rank": pd.NA, "output": None, "outcome": None, "logprob": np.nan},
        index=rows.index[~rows.index.isin(listed.index)],
    )
    both = pd.concat([candidates, none]).assign(role=CANDIDATE)
    return _ordered(_expanded(inputs, both))


def _expanded(inputs: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """One row per item (`items`: the columns of each, indexed by its input's position in
    `inputs`, an input's items in their order) in the order of the inputs: the columns of its
    input, then its own; ranks as nullable integers, log-probabilities as floats."""
    items = items.sort_index(kind="stable")
    rows = inputs.take(items.index.to_numpy())
    for column in items:
        rows[column] = items[column].to_numpy()
    return rows.astype({"rank": "Int64", "logprob": "float64"})


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """The schema's columns first, in its order, then the study's own; a fresh index."""
    first = [column for column in COLUMNS if column in frame]
    return frame[[*first, *(c for c in frame if c not in COLUMNS)]].reset_index(drop=True)
