"""Ranked candidates checked in rank order, stopping at the first correct one.

Fail@k needs, per problem, the rank of its first correct candidate (strict policy) and of its
first correct-or-timed-out one (generous policy, where a timeout passes). Candidates are
verified in windows of doubling width (rank 1, ranks 2-3, 4-7, ...), all problems at once per
window, so the verifier pool stays busy, and a problem leaves as soon as a window holds a
correct candidate: Fail@50 costs about what Fail@1 costs on a good model, and never more than
twice the verifications of a strictly one-by-one walk.

`in_rank_order` is that walk for any judge: over a model's `under_test.sequences.Ranked`
candidates it is `Ranked.judged` (a token task's `outcomes` in the probe and the search, the
integration verifier in the brittleness study); `verify_ranked` is it over lists of answers
for the integration verifier (SAGGA, the validation of `integration train`).

Example:
    results = verify_ranked(problems, candidate_lists, verifier.verify_many, k_max=10)
    results[0].first_correct  -> 3 (or None)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genprobe.tasks.verdict import Outcome, TimeoutPolicy, Verdict

VerifyMany = Callable[[list[tuple[Any, Any]]], list[Verdict]]
# (items, ranks) -> the judgement of each item's candidate at that 0-based rank
Judge = Callable[[np.ndarray, np.ndarray], Sequence[Any]]


@dataclass
class RankedResult:
    # verdicts of the candidates verified, in rank order (rank i + 1 is verdicts[i])
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def first_correct(self) -> int | None:
        """1-based rank of the first correct candidate (strict policy)."""
        return _first(self.verdicts, {Outcome.CORRECT})

    @property
    def first_generous(self) -> int | None:
        """1-based rank of the first candidate that passes when timeouts pass."""
        return _first(self.verdicts, {Outcome.CORRECT, Outcome.TIMEOUT})

    def first_pass(self, policy: TimeoutPolicy) -> int | None:
        """1-based rank of the first candidate that passes under `policy`."""
        return self.first_generous if policy is TimeoutPolicy.GENEROUS else self.first_correct


def _first(verdicts: list[Verdict], passing: set[Outcome]) -> int | None:
    return next((rank for rank, v in enumerate(verdicts, 1) if v.outcome in passing), None)


def correct_verdicts(verdicts: np.ndarray) -> np.ndarray:
    """Which of an array of `Verdict`s are correct (the strict policy)."""
    return np.array([v.outcome is Outcome.CORRECT for v in verdicts], dtype=bool)


def windows(k_max: int) -> list[tuple[int, int]]:
    """[start, stop) rank windows of doubling width covering ranks 0..k_max-1."""
    out, start, width = [], 0, 1
    while start < k_max:
        out.append((start, min(start + width, k_max)))
        start, width = start + width, 2 * width
    return out


def in_rank_order(
    counts: Sequence[int] | np.ndarray,
    k_max: int,
    judge: Judge,
    right: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """(n, k_max) object array: item i's candidates (`counts[i]` of them, best first) judged up
    to rank `k_max`, a window of ranks at a time, every open item in one `judge` call (item
    by item, ranks ascending), an item leaving after the window that holds a candidate `right`
    (a vectorized test of judgements) accepts; None where a candidate was not judged."""
    counts = np.minimum(np.asarray(counts, dtype=np.int64), k_max)
    judged = np.full((len(counts), k_max), None, dtype=object)
    open_ = np.ones(len(counts), dtype=bool)
    for start, stop in windows(k_max):
        taken = np.clip(counts - start, 0, stop - start) * open_
        if not taken.any():
            break
        item = np.repeat(np.arange(len(counts)), taken)
        rank = start + np.arange(len(item)) - np.repeat(np.cumsum(taken) - taken, taken)
        window = np.empty(len(item), dtype=object)
        window[:] = judge(item, rank)
        judged[item, rank] = window
        open_[item[right(window)]] = False
    return judged


def verify_ranked(
    problems: Sequence[Any],
    candidates: Sequence[Sequence[Any]],
    verify_many: VerifyMany,
    k_max: int,
) -> list[RankedResult]:
    """Verify each problem's candidates (answers, best first) up to rank `k_max`, stopping after
    the window that holds its first correct one."""

    def judge(items: np.ndarray, ranks: np.ndarray) -> list[Verdict]:
        pairs = zip(items, ranks, strict=True)
        return verify_many([(problems[i], candidates[i][rank]) for i, rank in pairs])

    judged = in_rank_order([len(c) for c in candidates], k_max, judge, correct_verdicts)
    return [RankedResult([v for v in row if v is not None]) for row in judged]
