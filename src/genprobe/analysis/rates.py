"""Accuracy, Fail@k and Unresolved@k of judged outputs (`analysis.judged`'s schema), counted
once for every study: the seed sweep's accuracy, the probe's accuracy, Fail@k and
Unresolved@k, the brittleness study's Fail@k under both timeout policies and Unresolved@k.

Accuracy is the share of inputs whose answer is right; Fail@k the share with no passing
candidate among the first k (Welleck et al. 2022); Unresolved@k, among the failures at k whose
reference was scored, the share whose reference scores below the k-th candidate: failures a
perfect search over the model's own probabilities would leave unresolved (Welleck et al. 2022,
§6 and Table 12). Every rate is over the rows it is given: a study leaves out what it does not
count (inputs the model cannot read, originals decoded only for pairing) before.

Example:
    judged = from_probe(read_results(run))
    fail_at(judged, [1, 10], ["member", "suite"])   # member, suite, inputs, Fail@1, Fail@10
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from genprobe.analysis.judged import ANSWER, CANDIDATE, KEYS
from genprobe.tasks.verdict import Outcome, TimeoutPolicy

# the outcomes that pass under each timeout policy
PASSING = {
    policy.value: tuple(o.value for o in Outcome if policy.passed(o)) for policy in TimeoutPolicy
}
STRICT = PASSING[TimeoutPolicy.STRICT.value]


def correct(rows: pd.DataFrame) -> pd.Series:
    """Which rows' outputs the verifier judged right."""
    return rows["outcome"] == Outcome.CORRECT.value


def accuracy(judged: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """The share of inputs whose answer is right, per group of `by` (in the table's order)."""
    answers = judged[judged["role"] == ANSWER]
    right = correct(answers).rename("accuracy")
    return right.groupby(_columns(answers, by), sort=False, dropna=False).mean()


def ranked(judged: pd.DataFrame) -> pd.DataFrame:
    """Each input's ranked candidates: its candidate rows, or its answer where it has none (a
    study that decodes one output per input)."""
    candidate = judged["role"] == CANDIDATE
    has = candidate.groupby(_columns(judged, KEYS), sort=False).transform("any")
    return judged[candidate | ~has]


def first_pass(judged: pd.DataFrame, passing: Sequence[str] = STRICT) -> pd.DataFrame:
    """One row per input, in the table's order: the first row of its ranked candidates
    (`ranked`) and `first`, the rank of the first whose outcome is one of `passing` (NaN:
    none is)."""
    rows = ranked(judged)
    rank = rows["rank"].astype("float64").where(rows["outcome"].isin(passing))
    first = rank.groupby(_columns(rows, KEYS), sort=False).transform("min")
    return rows.assign(first=first).drop_duplicates(list(KEYS))


def failed(first: pd.Series, k: int) -> pd.Series:
    """Which inputs have no passing candidate among the first k (`first`: the rank of the
    first that passes, missing for none)."""
    return first.isna() | (first > k)


def fail_at(
    judged: pd.DataFrame, ks: Sequence[int], by: Sequence[str], passing: Sequence[str] = STRICT
) -> pd.DataFrame:
    """One row per group of `by` (in the table's order; a missing value is a group of its own):
    its `inputs` and, for every k of `ks` in ascending order, `Fail@k`: the share of them with
    no candidate among the first k whose outcome is one of `passing`."""
    inputs = first_pass(judged, passing)
    columns = {f"Fail@{k}": failed(inputs["first"], k) for k in sorted(set(ks))}
    groups = inputs.assign(**columns).groupby(list(by), sort=False, dropna=False)
    table = groups[list(columns)].mean()
    table.insert(0, "inputs", groups.size())
    return table.reset_index()


def unresolved(judged: pd.DataFrame, ks: Sequence[int], by: Sequence[str]) -> pd.DataFrame:
    """Per group of `by` (in the table's order) with a scored reference, and k of `ks` in
    ascending order: the failures at k (strict) whose reference was scored (`failures scored`)
    and the share of them whose reference's log-probability is below the k-th candidate's
    (`unresolved`; the last of the first k that has one, the top one for k = 1; NaN where
    there are no failures)."""
    inputs = first_pass(judged)
    width = max(ks)
    logprobs = _logprobs(ranked(judged), width)
    scored = inputs["reference_logprob"].notna().to_numpy()
    inputs = inputs[scored].assign(position=np.arange(scored.sum()))
    logprobs = logprobs[scored]
    rows = []
    for key, group in inputs.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        at = group["position"].to_numpy()
        first = group["first"].to_numpy(dtype=float)
        reference = group["reference_logprob"].to_numpy(dtype=float)
        for k in sorted(ks):
            n, share = _unresolved(first, logprobs[at], reference, k)
            rows.append({**dict(zip(by, key, strict=True)), "k": k, "failures scored": n,
                         "unresolved": share})  # fmt: skip
    return pd.DataFrame(rows, columns=[*by, "k", "failures scored", "unresolved"])


def _logprobs(rows: pd.DataFrame, width: int) -> np.ndarray:
    """(inputs, width): the log-probability of each input's candidates (`rows`, one per
    candidate, the inputs in the order they first appear) by rank; NaN where none is known."""
    position = rows.groupby(_columns(rows, KEYS), sort=False).ngroup().to_numpy()
    rank = rows["rank"].astype("float64").to_numpy()
    table = np.full((position.max() + 1 if len(position) else 0, width), np.nan)
    kept = ~np.isnan(rank) & (rank <= width)
    table[position[kept], rank[kept].astype(int) - 1] = rows["logprob"].to_numpy(float)[kept]
    return table


def _unresolved(
    first: np.ndarray, logprobs: np.ndarray, reference: np.ndarray, k: int
) -> tuple[int, float]:
    """How many of the failures at k (`first`: the rank of the first right candidate, NaN for
    none) have a k-th candidate and a reference scored, and the share whose reference scores
    below it (NaN where there are none)."""
    kth = _last_known(logprobs[:, :k])
    failures = (np.isnan(first) | (first > k)) & ~np.isnan(kth) & ~np.isnan(reference)
    below = kth[failures] > reference[failures]
    return int(failures.sum()), float(below.mean()) if len(below) else float("nan")


def _last_known(logprobs: np.ndarray) -> np.ndarray:
    """(n,) each row's last log-probability that is not NaN (NaN where none is)."""
    known = ~np.isnan(logprobs)
    if not logprobs.shape[1]:
        return np.full(len(logprobs), np.nan)
    last = logprobs.shape[1] - 1 - np.argmax(known[:, ::-1], axis=1)
    return np.where(known.any(axis=1), logprobs[np.arange(len(logprobs)), last], np.nan)


def _columns(frame: pd.DataFrame, names: Sequence[str]) -> list[pd.Series]:
    return [frame[name] for name in names]
