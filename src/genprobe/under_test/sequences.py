"""The contract of a model under test of a token task (every task of `genprobe.tasks`): one or
more members (the seeds of a sweep), each giving ranked candidate outputs for input ids, and,
where it can, the log-probability of given outputs. Every study asks its model through it (an
integration model through `adapters.integration_tokens.IntegrationSequenceModel`).

Outputs are the task's output ids (0-based, -1 after the end), for all members at once, so the
probe studies verify S members × N inputs × k candidates in one call of the task's verifier.

Example:
    model = load_model("run:runs/scan-transformer")      # ten seeds of a sweep
    ranked = model.candidates(src, k=1)                  # greedy
    model.task.outcomes(src, ranked.out[0, :, 0], ranked.length[0, :, 0], ranked.finished[0, :, 0])
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from genprobe.tasks.task import Task
from genprobe.tasks.verdict import Outcome
from genprobe.verification.ranked import in_rank_order

MAX_K = 64  # the widest beam (most candidates) a probe or a search asks of a model
# (member, row, rank) index arrays -> the judgement of each of those candidates
CandidateJudge = Callable[[np.ndarray, np.ndarray, np.ndarray], Sequence[Any]]


def is_correct(outcomes: np.ndarray) -> np.ndarray:
    """Which of an array of outcomes (strings, as `Task.outcomes` gives them) are correct."""
    return outcomes == Outcome.CORRECT.value


def output_keys(out: np.ndarray, length: np.ndarray, finished: np.ndarray) -> np.ndarray:
    """(n, M + 2) one row per output of `out` (..., M), `length` and `finished` (...), equal
    exactly where two outputs are: the ids alone are not, as a special token drawn before the
    end is -1, as is every place after it."""
    width = out.shape[-1]
    return np.column_stack([out.reshape(-1, width), length.reshape(-1), finished.reshape(-1)])


@dataclass(frozen=True)
class Ranked:
    """Up to k candidates per member and input, best first."""

    out: np.ndarray  # (S, N, k, M) output ids, -1 after the end (and for a missing candidate)
    length: np.ndarray  # (S, N, k) tokens per candidate
    finished: np.ndarray  # (S, N, k) bool: it ended (False: cut at the length limit, or missing)
    score: np.ndarray  # (S, N, k) what the model ranks by, higher first; -inf where missing
    logprob: np.ndarray  # (S, N, k) total log-probability; NaN where the model gives none
    # (S, N, k) object: each candidate as the model gave it, before it was read into ids (a
    # language model's completion, an integration model's answer; "" where missing); None for
    # a model whose outputs are its ids
    text: np.ndarray | None = None

    @classmethod
    def empty(cls, members: int, k: int) -> Ranked:
        """The candidates of no input."""
        shape = (members, 0, k)
        return cls(
            np.full((*shape, 1), -1, dtype=np.int64),
            np.zeros(shape, dtype=np.int64),
            np.zeros(shape, dtype=bool),
            np.full(shape, -np.inf),
            np.full(shape, np.nan),
        )

    @classmethod
    def distinct(
        cls,
        out: np.ndarray,
        length: np.ndarray,
        finished: np.ndarray,
        logprob: np.ndarray,
        text: np.ndarray | None = None,
    ) -> Ranked:
        """The distinct outputs among n samples (S, N, n, M) of each member and input (`out`,
        and `length`, `finished`, `logprob` and the samples as the model gave them, `text`,
        (S, N, n)), most probable first (ties, and a model that gives no log-probabilities:
        the first drawn), scored by their log-probability; missing after them."""
        members, n_inputs, n = out.shape[:3]
        pairs = members * n_inputs
        pair = np.repeat(np.arange(pairs), n)
        keys = np.column_stack([pair, output_keys(out, length, finished)])
        _, first = np.unique(keys, axis=0, return_index=True)
        kept = first[np.lexsort((first, -logprob.reshape(-1)[first], pair[first]))]
        starts = np.searchsorted(pair[kept], np.arange(pairs))
        rank = np.arange(len(kept)) - starts[pair[kept]]

        def placed(values: np.ndarray, empty: object) -> np.ndarray:
            values = values.reshape(pairs * n, *values.shape[3:])
            full = np.full((pairs, n, *values.shape[1:]), empty, dtype=values.dtype)
            full[pair[kept], rank] = values[kept]
            return full.reshape(members, n_inputs, n, *values.shape[1:])

        total = placed(logprob.astype(float), np.nan)
        return cls(
            placed(out, -1), placed(length, 0), placed(finished, False),
            np.where(np.isnan(total), -np.inf, total), total,
            None if text is None else placed(text, ""),
        )  # fmt: skip

    def placed(self, rows: np.ndarray, n: int) -> Ranked:
        """These candidates, of inputs at positions `rows` among `n`, with no candidate for
        the others (as for an input the model cannot take)."""
        members = self.out.shape[0]

        def spread(values: np.ndarray, empty: object) -> np.ndarray:
            full = np.full((members, n, *values.shape[2:]), empty, dtype=values.dtype)
            full[:, rows] = values
            return full

        return Ranked(
            spread(self.out, -1),
            spread(self.length, 0),
            spread(self.finished, False),
            spread(self.score, -np.inf),
            spread(self.logprob, np.nan),
            None if self.text is None else spread(self.text, ""),
        )

    def judged(
        self,
        judge: CandidateJudge,
        right: Callable[[np.ndarray], np.ndarray],
        counts: np.ndarray | None = None,
    ) -> np.ndarray:
        """(S, N, k) object array: `judge(member, row, rank)` (index arrays) of each candidate,
        in rank order (`verification.ranked.in_rank_order`): windows of ranks 1, 2-3, 4-7, ...,
        every open (member, input) in one call per window, a pair leaving after the window
        that holds a candidate `right` (a vectorized test of judgements) accepts; None for the
        candidates after it (not judged). `counts` (S, N): the candidates each pair has, best
        first (default: all k); those past it are not judged either."""
        members, n, k, _ = self.out.shape
        counts = np.full(members * n, k) if counts is None else np.asarray(counts).reshape(-1)

        def by_item(items: np.ndarray, ranks: np.ndarray) -> Sequence[Any]:
            member, row = np.divmod(items, n)
            return judge(member, row, ranks)

        return in_rank_order(counts, k, by_item, right).reshape(members, n, k)

    def outcomes(self, task: Task, src: np.ndarray) -> np.ndarray:
        """(S, N, k) each candidate for inputs src (N, L) as `task.outcomes` judges it, `judged`
        in rank order as `verification.ranked` judges an integration model's. The first right
        rank, and every outcome up to it, are those of judging all; the rest is most of the
        work where a model is usually right at rank 1."""
        return self.judged(self.judge_of(task, src), is_correct)

    def judge_of(self, task: Task, src: np.ndarray) -> CandidateJudge:
        """`judge(member, row, rank)` (index arrays): the outcomes of those candidates for
        inputs src (N, L), all in one call of `task.outcomes`."""
        src = np.asarray(src)

        def judge(member: np.ndarray, row: np.ndarray, rank: np.ndarray) -> np.ndarray:
            return task.outcomes(
                src[row],
                self.out[member, row, rank],
                self.length[member, row, rank],
                self.finished[member, row, rank],
            )

        return judge

    @property
    def present(self) -> np.ndarray:
        """(S, N, k) bool: a candidate is there (a finite score, or a completion), not the
        padding after fewer than k."""
        there = np.isfinite(self.score)
        return there if self.text is None else there | (self.text != "")

    def joined(self, *others: Ranked) -> Ranked:
        """These candidates, then those of `others` (of the same members and inputs, of this
        class), side by side as one (S, N, k + k' + ...) ranking: every field with a rank axis
        is joined along it, outputs padded to the widest; the others (a language model's
        prompts) are this one's."""
        parts = (self, *others)
        width = max(part.out.shape[3] for part in parts)

        def along(name: str) -> np.ndarray | None:
            values = [getattr(part, name) for part in parts]
            if name == "out":
                values = [
                    np.pad(v, [(0, 0)] * 3 + [(0, width - v.shape[3])], constant_values=-1)
                    for v in values
                ]
            return np.concatenate(values, axis=2)

        ranked = [
            field.name
            for field in dataclasses.fields(self)
            if isinstance(getattr(self, field.name), np.ndarray)
            and getattr(self, field.name).ndim >= 3
        ]
        return dataclasses.replace(self, **{name: along(name) for name in ranked})


class SequenceModel(abc.ABC):
    """A model under test of a token task: `members` decode as one."""

    task: Task  # the task (and options) its inputs and outputs belong to
    members: tuple[str, ...]  # one label per member, as reports name it ("seed=3")
    can_score: bool = False  # whether `score` gives log-probabilities

    @abc.abstractmethod
    def candidates(self, src: np.ndarray, k: int) -> Ranked:
        """The k best outputs of every member for inputs src (N, L): k = 1 decodes greedily,
        a larger k by beam search of width k."""

    def sampled(self, src: np.ndarray, n: int, temperature: float, seed: int) -> Ranked:
        """The distinct outputs among n samples at `temperature` of every member for inputs
        src (N, L), most probable first (`Ranked.distinct`; fewer than n where samples repeat).
        An input's samples depend on `seed` and its ids only, not on its batch.

        Raises:
            ModelCapabilityError: the model does not sample (`ModelKind.samples`).
        """
        from genprobe.errors import ModelCapabilityError

        raise ModelCapabilityError(f"{type(self).__name__} does not sample")

    def readable(self, src: np.ndarray) -> np.ndarray:
        """(N,) bool: whether the model can take each input of src (N, L) at all (not longer
        than its table of positions, or its fixed-length input); one it cannot take gets no
        candidate, and studies count it apart from the model's failures. Default: every one."""
        return np.ones(len(src), dtype=bool)

    def check(self) -> None:
        """Raises a GenprobeError where the model cannot be asked as set (nothing answers at an
        endpoint's URL, more shots than the task's pool): asked before a new run is written,
        so that a mistyped setting leaves no run behind. Default: nothing to check."""
        return None

    def score(self, src: np.ndarray, out: np.ndarray, length: np.ndarray) -> np.ndarray:
        """(S, N) each member's total log-probability of output i for input i, teacher-forced:
        `out` (N, M) ids (-1 after the end) and `length` (N,), the same outputs for every
        member, or (S, N, M) and (S, N), each member's own (what it decoded).

        Raises:
            ModelCapabilityError: the model gives no log-probabilities.
        """
        from genprobe.errors import ModelCapabilityError

        raise ModelCapabilityError(f"{type(self).__name__} gives no log-probabilities")

    @abc.abstractmethod
    def subset(self, members: Sequence[int]) -> SequenceModel:
        """The same model with only the members at these positions."""
