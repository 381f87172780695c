"""Ranked candidates checked in rank order, stopping at the first correct one.

Fail@k needs, per problem, the rank of its first correct candidate (strict policy) and of its
first correct-or-timed-out one (generous policy, where a timeout passes). Candidates are
verified in windows of doubling width (rank 1, ranks 2-3, 4-7, ...), all problems at once per
window, so the verifier pool stays busy, and a problem leaves as soon as a window holds a
correct candidate: Fail@50 costs about what Fail@1 costs on a good model, and never more than
twice the verifications of a strictly one-by-one walk.

Example:
    results = verify_ranked(problems, candidate_lists, verifier.verify_many, k_max=10)
    results[0].first_correct  -> 3 (or None)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from genprobe.verification.verdict import Outcome, TimeoutPolicy, Verdict

VerifyMany = Callable[[list[tuple[Any, Any]]], list[Verdict]]


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


def windows(k_max: int) -> list[tuple[int, int]]:
    """[start, stop) rank windows of doubling width covering ranks 0..k_max-1."""
    out, start, width = [], 0, 1
    while start < k_max:
        out.append((start, min(start + width, k_max)))
        start, width = start + width, 2 * width
    return out


def verify_ranked(
    problems: Sequence[Any],
    candidates: Sequence[Sequence[Any]],
    verify_many: VerifyMany,
    k_max: int,
) -> list[RankedResult]:
    """Verify each problem's candidates (answers, best first) up to rank `k_max`, stopping after
    the window that holds its first correct one."""
    results = [RankedResult() for _ in problems]
    for start, stop in windows(k_max):
        work = [
            (i, rank)
            for i, answers in enumerate(candidates)
            if results[i].first_correct is None
            for rank in range(start, min(stop, len(answers)))
        ]
        if not work:
            break
        verdicts = verify_many([(problems[i], candidates[i][rank]) for i, rank in work])
        for (i, _), verdict in zip(work, verdicts, strict=True):
            results[i].verdicts.append(verdict)
    return results
