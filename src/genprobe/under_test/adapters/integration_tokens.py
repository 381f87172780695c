"""Any model under test of the integration task (ckpt:, lc:, bundled:, sympy, py:, openai:) as
a `SequenceModel` of the token task `IntegrationTask`: how every study asks it (`genprobe
probe` and `search` through `as_sequence_model`, which gives every kind of model as a
`SequenceModel`; the brittleness and SAGGA studies through `load_integration_model`). The
integration `Model` behind it (integration_model.py) is the adapters' own contract.

One member, named by the spec. Input ids are read back into integrands, the model gives its
ranked candidates, and each answer is written in the task's target ids: an answer the model
could not parse becomes the single id -1, a token outside the target vocabulary id -1 in its
place, which the task's verdicts count as unparseable; `Ranked.text` keeps every answer as the
model gave it (prefix tokens of a parsed one, the raw output of one that did not parse), and
`Answers.answers` as the verifier takes it (the expression, or the raw output), which the
studies verify (`Answers.judge_with`: the probe and the search by the task's verifier, the
brittleness study by its run's; SAGGA carries them to its verify shards). Integrands are
asked directly too, for problems the task's ids need not hold: `answers(problems, k)` (their
candidates), `reads(problems)` (which the model can take) and `score_answers(problems,
answers)` (log-probabilities of given answers); `deadline_counts` (SymPy's deadline hits),
`queries` and `hits` (a model that remembers its answers) are the studies' measures of the
model's effort.

Example:
    model = as_sequence_model("sympy", deadline=1.0)
    ranked = model.candidates(src, k=1)
    model.task.outcomes(src, ranked.out[0, :, 0], ranked.length[0, :, 0], ranked.finished[0, :, 0])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from genprobe.decoding.config import DecodingConfig
from genprobe.errors import ConfigError, ModelCapabilityError
from genprobe.runs.pool import DeadlineCounts
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.printing import answer_text
from genprobe.tasks.integration.task import IntegrationTask
from genprobe.tasks.task import Task
from genprobe.tasks.tokens import encode_outputs
from genprobe.tasks.verdict import Verdict
from genprobe.under_test.adapters.integration_model import Candidate, Model
from genprobe.under_test.sequences import CandidateJudge, Ranked, SequenceModel
from genprobe.verification.ranked import VerifyMany, correct_verdicts

if TYPE_CHECKING:
    from genprobe.under_test.registry import ModelSpec
    from genprobe.under_test.settings import ModelSettings

UNREADABLE = "<unparsed>"  # stands for an answer that did not parse (written as id -1)


@dataclass(frozen=True, kw_only=True)
class Answers(Ranked):
    """An integration model's candidates, and each answer as the model gave it."""

    # (S, N, k) object: a parsed answer's `Expr`, else the raw output (text, or tokens that did
    # not parse) as `Candidate.answer` holds it: what the verifier is to judge; None where missing
    answers: np.ndarray

    def judge_with(
        self, problems: Sequence[Expr | None], verify_many: VerifyMany
    ) -> CandidateJudge:
        """`judge(member, row, rank)` (index arrays): the `Verdict` of each of those answers, as
        the model gave it, to integrand `problems[row]`, all in one call of `verify_many` (the
        brittleness study's verifier, with the run's settings, or the task's: `judge_of`)."""

        def judge(member: np.ndarray, row: np.ndarray, rank: np.ndarray) -> list[Verdict]:
            answers = self.answers[member, row, rank]
            return verify_many([(problems[i], a) for i, a in zip(row, answers, strict=True)])

        return judge

    def verdicts(self, problems: Sequence[Expr | None], verify_many: VerifyMany) -> np.ndarray:
        """(S, N, k) the `Verdict` of each candidate the model gave (`judge_with`: the
        brittleness study's, `integration evaluate`'s), judged in rank order (`Ranked.judged`)
        up to the window of the first correct one; None after it and where a candidate is
        missing (`finished` marks those it gave: its candidates are whole answers). The probe
        judges every rank as it does any task's (`Ranked.outcomes` by `judge_of`), a missing
        candidate as an answer the task's verifier finds none in."""
        judge = self.judge_with(problems, verify_many)
        return self.judged(judge, correct_verdicts, counts=self.finished.sum(axis=2))

    def judge_of(self, task: Task, src: np.ndarray) -> CandidateJudge:
        """Each answer judged as the model gave it, by `judge_with` with the task's verifier
        (`IntegrationTask.verify_many`: its deadline, the strict policy), as the task's
        outcomes: one with a token outside the target vocabulary, which the ids cannot hold,
        is judged too."""
        assert isinstance(task, IntegrationTask), "an integration model's answers"
        verify = self.judge_with(task.problems(src), task.verify_many)

        def judge(member: np.ndarray, row: np.ndarray, rank: np.ndarray) -> np.ndarray:
            return task.outcomes_of(verify(member, row, rank))

        return judge


class IntegrationSequenceModel(SequenceModel):
    """`model` (an integration model under test) answering the token task `task`. One made to
    `remember` answers a problem asked before (the same prefix and k) from memory, so that each
    distinct problem reaches the model once (a search meets the same problems again)."""

    def __init__(
        self, model: Model, task: IntegrationTask, label: str, *, remember: bool = False
    ) -> None:
        self.model = model
        self.task = task
        self.members = (label,)
        self.can_score = model.can_score
        self.queries = 0  # problems the model was asked for candidates
        self.hits = 0  # problems answered from memory
        self._memory: dict[tuple[str, int], list[Candidate]] | None = {} if remember else None

    def check(self) -> None:
        self.model.check()

    def close(self) -> None:
        """Release the model's worker processes or connections."""
        self.model.close()

    def deadline_counts(self) -> DeadlineCounts | None:
        """For a model with a deadline of its own (`sympy`): the problems it was asked so far,
        and how many ran out of it (they got no candidates); None for a model without one."""
        return self.model.deadline_counts()

    def readable(self, src: np.ndarray) -> np.ndarray:
        """The model's own `readable` for each integrand (an input that is none is judged by
        the task: it has no right output)."""
        return self.reads(self.task.problems(src))

    def reads(self, problems: Sequence[Expr | None]) -> np.ndarray:
        """(N,) bool: `readable` of integrands (None: no integrand, which the model is not
        asked)."""
        rows = [i for i, problem in enumerate(problems) if problem is not None]
        readable = np.ones(len(problems), dtype=bool)
        readable[rows] = self.model.readable([problems[i] for i in rows]) if rows else []
        return readable

    def candidates(self, src: np.ndarray, k: int) -> Answers:
        return self.answers(self.task.problems(src), k)

    def answers(self, problems: Sequence[Expr | None], k: int) -> Answers:
        """`candidates` of integrands (None: no integrand, which gets none)."""
        if k < 1:
            raise ConfigError("k", "at least 1", k)
        valid = [i for i, problem in enumerate(problems) if problem is not None]
        found: list[list[Candidate]] = [[] for _ in problems]
        asked = self._asked([problems[i] for i in valid], k)
        for i, candidates in zip(valid, asked, strict=True):
            found[i] = candidates[:k]
        ranked = [
            (row, rank, candidate)
            for row, candidates in enumerate(found)
            for rank, candidate in enumerate(candidates)
        ]
        # an answer that did not parse is written as one token outside the vocabulary: id -1
        ids, lengths = encode_outputs(
            self.task.target_vocab,
            [to_prefix(c.answer) if c.parsed else [UNREADABLE] for _, _, c in ranked],
        )
        n = len(problems)
        out = np.full((1, n, k, ids.shape[1]), -1, dtype=np.int64)
        length = np.zeros((1, n, k), dtype=np.int64)
        finished = np.zeros((1, n, k), dtype=bool)
        score = np.full((1, n, k), -np.inf)
        logprob = np.full((1, n, k), np.nan)
        text = np.full((1, n, k), "", dtype=object)
        answers = np.full((1, n, k), None, dtype=object)
        for (row, rank, candidate), written, size in zip(ranked, ids, lengths, strict=True):
            out[0, row, rank] = written
            text[0, row, rank] = answer_text(candidate.answer)
            answers[0, row, rank] = candidate.answer
            length[0, row, rank] = size
            finished[0, row, rank] = True
            score[0, row, rank] = candidate.score
            if candidate.logprob is not None:
                logprob[0, row, rank] = candidate.logprob
        return Answers(
            out=out, length=length, finished=finished, score=score, logprob=logprob, text=text,
            answers=answers,
        )  # fmt: skip

    def _asked(self, problems: Sequence[Expr], k: int) -> list[list[Candidate]]:
        """The model's candidates of each problem, from memory where it `remember`s them
        (each distinct problem asked once)."""
        if self._memory is None:
            self.queries += len(problems)
            return self.model.candidates(problems, k) if problems else []
        keys = [(" ".join(to_prefix(p)), k) for p in problems]
        new = {key: p for key, p in zip(keys, problems, strict=True) if key not in self._memory}
        if new:
            self._memory.update(zip(new, self.model.candidates(list(new.values()), k), strict=True))
        self.queries += len(new)
        self.hits += len(keys) - len(new)
        return [self._memory[key] for key in keys]

    def sampled(self, src: np.ndarray, n: int, temperature: float, seed: int) -> Answers:
        """A seq2seq model's distinct samples, ranked by log-probability (its decoding as
        `method="sample"`: `Seq2SeqModel.with_decoding`); other integration models do not
        sample."""
        from genprobe.under_test.adapters.seq2seq import (
            Seq2SeqModel,  # torch: only where it samples
        )

        if not isinstance(self.model, Seq2SeqModel):
            return super().sampled(src, n, temperature, seed)
        decoding = dataclasses.replace(
            self.model.decoding, method="sample", temperature=temperature, samples=n, seed=seed
        )
        sampling = self.model.with_decoding(decoding)
        return IntegrationSequenceModel(sampling, self.task, self.members[0]).candidates(src, n)

    def score(self, src: np.ndarray, out: np.ndarray, length: np.ndarray) -> np.ndarray:
        """(1, N) the model's log-probability of each output; NaN where the output (or input)
        is no expression."""
        if not self.can_score:
            return super().score(src, out, length)
        out, length = np.asarray(out), np.asarray(length)
        if out.ndim == 3:
            out, length = out[0], length[0]
        answers = [self.task.answer(ids[:size]) for ids, size in zip(out, length, strict=True)]
        return self.score_answers(self.task.problems(src), answers)

    def score_answers(
        self, problems: Sequence[Expr | None], answers: Sequence[Expr | None]
    ) -> np.ndarray:
        """(1, N) `score` of integrands: the model's total log-probability of answer i for
        problem i, teacher-forced; NaN where either is None.

        Raises:
            ModelCapabilityError: the model gives no log-probabilities.
        """
        if not self.can_score:
            raise ModelCapabilityError(f"{self.members[0]} gives no log-probabilities")
        rows = [
            i
            for i, (problem, answer) in enumerate(zip(problems, answers, strict=True))
            if problem is not None and answer is not None
        ]
        scores = np.full((1, len(problems)), np.nan)
        if rows:
            scores[0, rows] = self.model.score([(problems[i], answers[i]) for i in rows])
        return scores

    def subset(self, members: Sequence[int]) -> SequenceModel:
        if list(members) != [0]:
            raise ConfigError("members", "[0] (an integration model is one member)", members)
        return self


def load_integration_model(
    settings: ModelSettings, min_beam: int = 1, *, remember: bool = False
) -> IntegrationSequenceModel:
    """The integration model `settings` name, a beam of at least `min_beam` (k candidates need
    a beam of k), as a model of `IntegrationTask()`: how the brittleness and SAGGA studies ask
    it (`remember`: see `IntegrationSequenceModel`).

    Raises:
        UnknownModelError, GenprobeError: as `load_model`.
    """
    model = settings.load(min_beam)
    return IntegrationSequenceModel(model, IntegrationTask(), str(settings.spec), remember=remember)


def as_sequence_model(
    spec: ModelSpec | str, task: Task | None = None, **settings: Any
) -> SequenceModel:
    """The model `spec` names (given as text: parsed first) as a `SequenceModel`: a token model
    (`run:`, `hf:` asked `task`), or `openai:` asked a task other than integration, as it loads;
    an integration model (ckpt:, lc:, bundled:, sympy, py:, openai:) as a model of `task`
    (default: `IntegrationTask()`), a seq2seq one decoding greedily for k = 1 and by beam
    search of width k otherwise, unless `settings` give its `decoding`.

    Raises:
        ConfigError: an integration model asked to answer another task.
        UnknownModelError, GenprobeError: as `ModelSpec.parse` and `ModelSpec.load`.
    """
    from genprobe.under_test.registry import ModelSpec

    spec = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    if spec.answers_tokens(task):
        return spec.load(task=task, **settings)
    asked = spec.task_of(task)  # refuses an integration model asked another task
    settings.setdefault("decoding", DecodingConfig(method="beam", beam_size=1))
    return IntegrationSequenceModel(spec.load(**settings), asked, str(spec))
