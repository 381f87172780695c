"""A language model under test of any token task (`hf:PATH`): the task's inputs asked as
prompts, the completions read strictly as its outputs (`genprobe.prompts`), and members that are
the ways of asking: prompt format × few-shot draw × sampling seed.

A member is format f of `format_family(formats, seed)`, the `shots` examples of few-shot draw
d (`draw_shots`), and sampling seed s (greedy where `samples` is 0). What moves accuracy across
members is the prompt alone, as what moves it across a sweep's seeds is the seed: the probe
study's per-member distributions and shares of members failing then measure prompt variance.

A completion's answer is its first line. Generation stops at a newline, and the model may
write at most as many tokens as the longest right output has characters, plus two. A
completion cut at that limit is longer than any right output, so the task's own length check
calls it unparseable, never incorrect.

    model = from_hf("models/gpt2-addition", task=load_task("addition"),
                    prompts=PromptGrid(formats=8, shots=4, shot_draws=3))
    model.members      # ("format=0 draw=0", ..., "format=7 draw=2")
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from genprobe.errors import ConfigError
from genprobe.options import is_integer
from genprobe.prompts import (
    check_shots,
    draw_shots,
    format_family,
    parse_answers,
    render_batch,
    text_form,
)
from genprobe.tasks.probing import padded
from genprobe.tasks.task import Task
from genprobe.under_test.sequences import Ranked, SequenceModel

NEWLINE = "\n"


class Completer(Protocol):
    """What a language model gives: completions of prompts and log-probabilities of answers
    (`causal_lm.CausalLM`, `openai.OpenAICompleter`). One that gives none has a `can_score`
    of False, and its `logprob` raises ModelCapabilityError. One that can count a text's
    tokens has `count_tokens(text) -> int`, which bounds its completions more tightly; one
    that knows its positions has `fits(prompts, max_new_tokens) -> (n,) bool`, which says
    which inputs it can be asked at all (`PromptedModel.readable`). One that samples at any
    temperature from a seed per prompt (`complete(..., seed=[...], temperature=T)`) has a
    `can_sample` of True (`PromptedModel.sampled`). One behind a connection has `check()`,
    which raises where nothing answers (`SequenceModel.check`)."""

    def complete(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        *,
        method: str = "greedy",
        seed: int | Sequence[int] | None = None,
        temperature: float = 1.0,
        beams: int = 1,
        stop: Sequence[str] | None = None,
    ) -> list[list[str]]: ...

    def logprob(self, prompts: Sequence[str], answers: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class PromptGrid:
    """The members of a language model under test: every format × draw × sample."""

    formats: int = 1  # equivalent prompt formats (`format_family`)
    shots: int = 0  # examples per prompt
    shot_draws: int = 1  # few-shot draws (with shots = 0 there is only one)
    samples: int = 0  # sampling seeds per format and draw; 0: greedy decoding
    seed: int = 0  # draws the formats, the shots and the samples

    def __post_init__(self) -> None:
        for name, least in (("formats", 1), ("shots", 0), ("shot_draws", 1), ("samples", 0)):
            value = getattr(self, name)
            if not is_integer(value) or value < least:
                raise ConfigError(name.replace("_", "-"), f"an integer >= {least}", value)
        if self.shot_draws > 1 and not self.shots:
            raise ConfigError("shot-draws", "1 without shots (--shots 0)", self.shot_draws)

    def cells(self) -> list[Member]:
        samples = range(self.samples) if self.samples else [None]
        return [
            Member(f, d, s)
            for f, d, s in itertools.product(range(self.formats), range(self.shot_draws), samples)
        ]


@dataclass(frozen=True)
class Member:
    format: int
    draw: int
    sample: int | None  # None: greedy

    def label(self) -> str:
        sampled = "" if self.sample is None else f" sample={self.sample}"
        return f"format={self.format} draw={self.draw}{sampled}"


class PromptedModel(SequenceModel):
    """`lm` asked `task`'s inputs, one member per cell of `grid` (or the cells `chosen`)."""

    def __init__(
        self, lm: Completer, task: Task, grid: PromptGrid, chosen: Sequence[Member] | None = None
    ) -> None:
        self.lm, self.task, self.grid = lm, task, grid
        self.can_score: bool = getattr(lm, "can_score", True)
        self.cells = list(grid.cells() if chosen is None else chosen)
        self.members = tuple(cell.label() for cell in self.cells)
        self.formats = format_family(grid.formats, grid.seed)
        text_form(task)  # a task whose tokens cannot be read as text is refused here

    def check(self) -> None:
        """The shots fit the task's pool of training inputs, and the language model answers."""
        check_shots(self.task, self.grid.shots, self.grid.seed)
        if (answers := getattr(self.lm, "check", None)) is not None:
            answers()

    def subset(self, members: Sequence[int]) -> PromptedModel:
        return PromptedModel(self.lm, self.task, self.grid, [self.cells[i] for i in members])

    def prompts(self, cell: Member, src: np.ndarray) -> list[str]:
        """The prompt of each input of src (N, L) as member `cell` asks it."""
        shots = draw_shots(self.task, self.grid.shots, cell.draw, self.grid.seed, src)
        return render_batch(self.task, self.formats[cell.format], shots, src)

    def readable(self, src: np.ndarray) -> np.ndarray:
        """Where the language model knows its positions (`fits`): whether every member's
        prompt of an input leaves room for the longest answer it may write."""
        fits = getattr(self.lm, "fits", None)
        src = np.asarray(src)
        readable = np.ones(len(src), dtype=bool)
        if fits is None:
            return readable
        room = self._token_limits(src)
        for cell in self.cells:
            readable &= fits(self.prompts(cell, src), room)
        return readable

    def candidates(self, src: np.ndarray, k: int) -> Completions:
        """Greedy (or the member's sample) for k = 1; the k best beams otherwise; no
        candidate (and no prompt) for an input the model cannot take."""
        return self._asked(src, k, lambda taken: self._candidates(taken, k))

    def sampled(self, src: np.ndarray, n: int, temperature: float, seed: int) -> Completions:
        """Each member's distinct answers among n completions sampled at `temperature`, the
        most probable first (the log-probability of the completion after its prompt): sample
        j of an input is drawn from a seed of `seed`, j, the member's sampling seed and the
        input's ids, so it does not depend on the input's batch. No candidate (and no prompt)
        for an input the model cannot take."""
        if not getattr(self.lm, "can_sample", False):
            return super().sampled(src, n, temperature, seed)
        if n < 1:
            raise ConfigError("n", "at least 1", n)
        return self._asked(src, n, lambda taken: self._sampled(taken, n, temperature, seed))

    def _asked(
        self, src: np.ndarray, k: int, ask: Callable[[np.ndarray], Completions]
    ) -> Completions:
        """`ask` of the inputs the model can take, placed among all of src."""
        src = np.asarray(src)
        readable = self.readable(src)
        if readable.all():
            return ask(src)
        rows = np.flatnonzero(readable)
        if not len(rows):
            empty = Completions(**vars(Ranked.empty(len(self.cells), k)), prompt=_no_prompts(self))
            return empty.placed(rows, len(src))
        return ask(src[rows]).placed(rows, len(src))

    def _sampled(self, src: np.ndarray, n: int, temperature: float, seed: int) -> Completions:
        from genprobe.decoding.sampling import source_seed  # torch: only where one samples

        limit, size = self._token_limit(src), len(src)
        ids = [row[row > 0].tolist() for row in src]
        repeated = np.tile(src, (n, 1))  # sample-major: sample j of input i at j * size + i
        texts, asked, scores = [], [], []
        for cell in self.cells:
            prompts = self.prompts(cell, src)
            member = -1 if cell.sample is None else cell.sample
            seeds = [source_seed(seed, [j, member, *row]) for j in range(n) for row in ids]
            drawn = self.lm.complete(
                prompts * n, limit, method="sample", seed=seeds, temperature=temperature,
                stop=[NEWLINE],
            )  # fmt: skip
            written = [completions[0] if completions else "" for completions in drawn]
            texts.append(written)
            asked.append(prompts)
            scores.append(self._logprobs(prompts * n, written))
        members = len(self.cells)
        answers = [parse_answers(self.task, repeated, written) for written in texts]
        ids_of = [[[a.ids for a in member[i::size]] for i in range(size)] for member in answers]

        def by_input(values: list) -> np.ndarray:  # (S, n * N) sample-major -> (S, N, n)
            return np.array(values, dtype=object).reshape(members, n, size).transpose(0, 2, 1)

        drawn = _ranked(ids_of, by_input(texts), by_input(scores).astype(float))
        distinct = Ranked.distinct(
            drawn.out, drawn.length, drawn.finished, drawn.logprob, drawn.text
        )
        prompts = np.array(asked, dtype=object).reshape(members, size)
        return Completions(**vars(distinct), prompt=prompts)

    def _candidates(self, src: np.ndarray, k: int) -> Completions:
        limit = self._token_limit(src)
        rows = []  # per member, per input: its k candidates' output ids (None: unparseable)
        written = []  # per member, per rank, per input: the completion as the model wrote it
        asked = []  # per member, per input: the prompt
        scores = []  # per member, per rank and input: a beam candidate's log-probability
        for cell in self.cells:
            if k > 1:
                method, seed = "beam", None
            else:
                method, seed = ("greedy", None) if cell.sample is None else ("sample", cell.sample)
            asked.append(self.prompts(cell, src))
            completions = self.lm.complete(
                asked[-1], limit, method=method, seed=seed, beams=k, stop=[NEWLINE]
            )
            ranks = [
                [texts[r] if r < len(texts) else "" for texts in completions] for r in range(k)
            ]
            answers = [parse_answers(self.task, src, texts) for texts in ranks]
            rows.append([[answers[r][i].ids for r in range(k)] for i in range(len(src))])
            written.append(ranks)
            if k > 1:  # a beam's candidates, weighed as samples are
                scores.append(self._logprobs(asked[-1] * k, [t for texts in ranks for t in texts]))
        members = len(self.cells)
        completions = np.array(written, dtype=object).reshape(members, k, len(src))
        prompts = np.array(asked, dtype=object).reshape(members, len(src))
        logprob = None
        if scores:
            logprob = np.array(scores).reshape(members, k, len(src)).transpose(0, 2, 1)
        ranked = _ranked(rows, completions.transpose(0, 2, 1), logprob)
        return Completions(**vars(ranked), prompt=prompts)

    def _logprobs(self, prompts: list[str], texts: list[str]) -> np.ndarray:
        """(n,) the log-probability of each completion after its prompt, as written; NaN where
        none was written, or the language model gives none."""
        scores = np.full(len(texts), np.nan)
        rows = [i for i, text in enumerate(texts) if text]
        if self.can_score and rows:
            scores[rows] = self.lm.logprob([prompts[i] for i in rows], [texts[i] for i in rows])
        return scores

    def score(self, src: np.ndarray, out: np.ndarray, length: np.ndarray) -> np.ndarray:
        """NaN for an input the model cannot take (`readable`)."""
        src, out, length = np.asarray(src), np.asarray(out), np.asarray(length)
        members = len(self.cells)
        rows = np.flatnonzero(self.readable(src))
        out = np.broadcast_to(out, (members, *out.shape[-2:]))[:, rows]
        length = np.broadcast_to(length, (members, length.shape[-1]))[:, rows]
        form = text_form(self.task)
        scores = np.full((members, len(src)), np.nan)
        if not len(rows):
            return scores
        for m, cell in enumerate(self.cells):
            lead = self.formats[cell.format].lead
            answers = [lead + text for text in form.outputs(_trimmed(out[m], length[m]))]
            scores[m, rows] = self.lm.logprob(self.prompts(cell, src[rows]), answers)
        return scores

    def _token_limit(self, src: np.ndarray) -> int:
        """Tokens a completion may take: the longest right output of the longest input, each
        of its tokens as wide as the widest with its separator, and two (a leading space, the
        newline that ends it). Widths are the language model's tokens where it can count
        them (`count_tokens`), else characters, which bound an endpoint's tokens."""
        return int(self._token_limits(src).max())

    def _token_limits(self, src: np.ndarray) -> np.ndarray:
        """(n,) `_token_limit` of each input alone."""
        lengths, where = np.unique((np.asarray(src) > 0).sum(axis=1), return_inverse=True)
        longest = np.array([self.task.max_output_length(int(n)) for n in lengths])
        return (longest * self._widest + 2)[where.reshape(-1)]

    @functools.cached_property
    def _widest(self) -> int:
        """The most tokens an output token takes with its separator."""
        count = getattr(self.lm, "count_tokens", len)
        separator = text_form(self.task).separator
        return max(count(separator + word) for word in self.task.target_vocab)


@dataclass(frozen=True, kw_only=True)
class Completions(Ranked):
    """Ranked candidates, their `text` the completions they were read from, and the prompts
    asked."""

    prompt: np.ndarray  # (S, N) object: the prompt each member sent for each input

    def placed(self, rows: np.ndarray, n: int) -> Completions:
        prompt = np.full((len(self.prompt), n), None, dtype=object)
        prompt[:, rows] = self.prompt
        return Completions(**vars(super().placed(rows, n)), prompt=prompt)


def _no_prompts(model: PromptedModel) -> np.ndarray:
    return np.empty((len(model.cells), 0), dtype=object)


def _trimmed(out: np.ndarray, length: np.ndarray) -> np.ndarray:
    return np.where(np.arange(out.shape[1]) < length[:, None], out, -1)


def _ranked(
    rows: list[list[list[tuple[int, ...] | None]]],
    text: np.ndarray,
    logprob: np.ndarray | None = None,
) -> Ranked:
    """Ranked from each member's, input's and rank's output ids (None: unparseable), the
    completions (S, N, k) they were read from and their log-probabilities (None: none)."""
    shape, k = text.shape, text.shape[-1]
    flat = [ids for member in rows for inputs in member for ids in inputs]
    out = padded([np.array(ids or (), dtype=np.int64) for ids in flat], fill=-1)
    out = np.pad(out, ((0, 0), (0, max(0, 1 - out.shape[1]))), constant_values=-1)
    finished = np.array([ids is not None for ids in flat], dtype=bool).reshape(shape)
    return Ranked(
        out=out.reshape(*shape, -1),
        length=np.array([len(ids or ()) for ids in flat], dtype=np.int64).reshape(shape),
        finished=finished,
        score=np.where(finished, -np.arange(k, dtype=float), -np.inf),
        logprob=np.full(shape, np.nan) if logprob is None else logprob,
        text=text,
    )


def from_hf(
    path: str, task: Task | None = None, prompts: PromptGrid | None = None, device: str = "cpu"
) -> PromptedModel:
    """`hf:PATH`: the causal language model saved in directory PATH, or of the Hugging Face hub
    name PATH (`causal_lm.hub_name`), asked `task`'s inputs."""
    from genprobe.under_test.adapters.causal_lm import load_causal_lm

    if task is None:
        raise ConfigError("--task", "a task to ask the language model (it has no own task)", "")
    return PromptedModel(load_causal_lm(path, device=device), task, prompts or PromptGrid())
