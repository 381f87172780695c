"""A finished sweep as a model under test (`--model run:RUN_DIR`): every seed a member, all of
them decoding as the one stacked model the predict stage uses, so a probe of ten seeds costs
about what a probe of one does.

k = 1 decodes greedily (the predict stage's outputs, bit for bit); k > 1 by beam search of
width k over every member at once (`decoding.member_beam`), without early stopping: an input
is done only when no live beam can beat its worst finished candidate. (With L&C's early
stopping, an input stops at k finished candidates, and on addition with a carry into a new
digit the k short ones crowd out the right, longer sum that greedy finds.) `sampled` draws n
samples of every member at once, each member with the same noise, and keeps the distinct ones.
`score` feeds the given outputs through the decoder step by step, in evaluation mode.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from genprobe.data.seq2seq import EOS, N_SPECIAL, PAD, decoded_outputs
from genprobe.decoding.beam import BeamResult
from genprobe.decoding.greedy import greedy
from genprobe.decoding.member_beam import member_beam_search
from genprobe.decoding.sampling import Samples, sample_stacked, source_seed
from genprobe.errors import ConfigError
from genprobe.models.member_stack import MemberStack
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.members import load_members
from genprobe.studies.seed_sensitivity.predict import decoded_chunks
from genprobe.studies.seed_sensitivity.results import read_sweep, training_inputs
from genprobe.tasks.task import Task
from genprobe.under_test.registry import ModelSpec
from genprobe.under_test.sequences import Ranked, SequenceModel


class SweepModel(SequenceModel):
    can_score = True

    def __init__(
        self, run: Path, config: SweepConfig, stack: MemberStack, members: tuple[str, ...]
    ) -> None:
        self.run, self.config, self.stack = run, config, stack
        self.task, self.members = config.task, members

    def readable(self, src: np.ndarray) -> np.ndarray:
        """`SweepConfig.takes`: a probe's inputs may be longer than any the sweep decoded,
        which sized the position tables."""
        return self.config.takes(src)

    def candidates(self, src: np.ndarray, k: int) -> Ranked:
        return self._of_readable(src, k, lambda part: self._candidates(part, k))

    def sampled(self, src: np.ndarray, n: int, temperature: float, seed: int) -> Ranked:
        """Every member draws with the same noise (`decoding.sampling.sample_stacked`)."""
        draw = functools.partial(_sample, n=n, temperature=temperature, seed=seed)

        def sampled(part: np.ndarray) -> Ranked:
            drawn = decoded_chunks(self.stack, self.config, part, draw, per_row=n)
            out = _task_ids(drawn.tokens, drawn.lengths)
            return Ranked.distinct(out, drawn.lengths, drawn.finished, drawn.logprobs)

        return self._of_readable(src, n, sampled)

    def _of_readable(
        self, src: np.ndarray, k: int, decode: Callable[[np.ndarray], Ranked]
    ) -> Ranked:
        """`decode` of the inputs of src the model can take, none for the others."""
        src = np.asarray(src, dtype=np.int64)
        rows = np.flatnonzero(self.readable(src))
        if len(rows) == len(src):
            return decode(self._narrowed(src))
        if not len(rows):
            return Ranked.empty(len(self.members), k).placed(rows, len(src))
        return decode(self._narrowed(src[rows])).placed(rows, len(src))

    def _narrowed(self, src: np.ndarray) -> np.ndarray:
        """src as it is where the model can decode its whole width (decoding sizes its output
        steps by the width), else without the padding columns after its longest input."""
        return src if self.config.takes(np.ones((1, src.shape[1])))[0] else _trimmed(src)

    def _candidates(self, src: np.ndarray, k: int) -> Ranked:
        if k == 1:
            tokens = decoded_chunks(self.stack, self.config, src, _greedy)
            out, length = decoded_outputs(tokens)
            finished = (tokens == EOS).any(axis=-1)
            nan = np.full(length.shape, np.nan)
            return Ranked(
                out[:, :, None], length[:, :, None], finished[:, :, None], *[nan[..., None]] * 2
            )
        return self._beam_candidates(src, k)

    def _beam_candidates(self, src: np.ndarray, k: int) -> Ranked:
        """The k best outputs of every member by beam search of width k (k = 1 too)."""
        src = np.asarray(src, dtype=np.int64)
        decode = functools.partial(_beam, k=k)
        beams = decoded_chunks(self.stack, self.config, src, decode, per_row=k)
        out = _task_ids(beams.tokens, beams.lengths)
        return Ranked(out, beams.lengths, beams.finished, beams.scores, beams.logprobs)

    def score(self, src: np.ndarray, out: np.ndarray, length: np.ndarray) -> np.ndarray:
        """NaN for an input the model cannot take (`readable`)."""
        src, out, length = np.asarray(src, dtype=np.int64), np.asarray(out), np.asarray(length)
        rows = np.flatnonzero(self.readable(src))
        if len(rows) == len(src):
            return self._score(self._narrowed(src), out, length)
        scores = np.full((len(self.members), len(src)), np.nan)
        if len(rows):
            length = length[..., rows]
            width = max(1, int(length.max(initial=0)))  # the outputs of the others may be longer
            src = self._narrowed(src[rows])
            scores[:, rows] = self._score(src, out[..., rows, :width], length)
        return scores

    def _score(self, src: np.ndarray, out: np.ndarray, length: np.ndarray) -> np.ndarray:
        device = next(self.stack.parameters()).device
        gold = _decoder_ids(np.asarray(out), np.asarray(length))
        rows = self.config.eval_batch_size
        parts = [
            _teacher_forced_logprob(
                self.stack,
                torch.as_tensor(np.asarray(src[start : start + rows], np.int64), device=device),
                torch.as_tensor(gold[..., start : start + rows, :], device=device),
            )
            for start in range(0, len(src), rows)
        ]
        return np.concatenate(parts, axis=1)

    def subset(self, members: Sequence[int]) -> SweepModel:
        labels = tuple(self.members[i] for i in members)
        return SweepModel(self.run, self.config, self.stack.subset(list(members)), labels)


def trained_on(spec: ModelSpec, task: Task) -> np.ndarray | None:
    """The inputs every seed of the sweep `spec` names (`run:RUN_DIR[@SEEDS]`) trained on."""
    return training_inputs(spec.target, task)


def own_task(spec: ModelSpec) -> Task:
    """The task of the sweep `spec` names, read from its config (no member is loaded).

    Raises:
        RunDirError: not a sweep's run directory.
    """
    return read_sweep(spec.target).task


def from_run(path: str, seeds: tuple[int, ...] | None = None, device: str = "cpu") -> SweepModel:
    """The members of the finished sweep in `path`, stacked on `device`: every seed, or those
    of `seeds` (`run:RUN_DIR@SEEDS`: `3`, `1,4`, `2-5`).

    Raises:
        RunDirError: not a sweep's run directory, or its training has not finished.
        ConfigError: a seed the sweep does not have.
    """
    run = Path(path).absolute()
    config = read_sweep(run)
    model = SweepModel(
        run, config, load_members(run, device).eval(), tuple(f"seed={s}" for s in config.seeds)
    )
    if seeds is None:
        return model
    checked_seeds(config, seeds, "--model")
    return model.subset([config.seeds.index(seed) for seed in seeds])


def checked_seeds(config: SweepConfig, seeds: tuple[int, ...], option: str) -> tuple[int, ...]:
    """`seeds`, once each is a seed of the sweep.

    Raises:
        ConfigError: one is not (named as `option`).
    """
    missing = [seed for seed in seeds if seed not in config.seeds]
    if missing:
        have = ", ".join(map(str, config.seeds))
        raise ConfigError(option, f"seeds of the sweep ({have})", f"seed {missing[0]}")
    return seeds


def _trimmed(src: np.ndarray) -> np.ndarray:
    """src (N, L) without the padding columns after its longest input: decoding sizes its
    output steps, and a position table's use, by the width."""
    return src[:, : max(1, int((src > 0).sum(axis=1).max(initial=0)))]


def _greedy(model: MemberStack, src: Tensor, max_len: int) -> Tensor:
    return greedy(model, src, max_len=max_len, eos=EOS, pad=PAD)


def _beam(model: MemberStack, src: Tensor, max_len: int, k: int) -> BeamResult:
    """Beam search of width k, tokens padded to `max_len` (chunks join along the inputs)."""
    found = member_beam_search(
        model, src, k, max_len=max_len, eos=EOS, pad=PAD, early_stopping=False
    )
    width = max_len - found.tokens.shape[-1]
    tokens = torch.nn.functional.pad(found.tokens, (0, width), value=PAD)
    return BeamResult(tokens, found.lengths, found.scores, found.logprobs, found.finished)


def _sample(
    model: MemberStack, src: Tensor, max_len: int, n: int, temperature: float, seed: int
) -> Samples:
    """n samples of every member, tokens padded to `max_len`; an input's noise is seeded by
    its ids (`source_seed`), so it does not depend on its chunk."""
    seeds = [source_seed(seed, row[row > 0].tolist()) for row in src.cpu().numpy()]
    drawn = sample_stacked(model, src, n, temperature, max_len, seeds, eos=EOS, pad=PAD)
    width = max_len - drawn.tokens.shape[-1]
    tokens = torch.nn.functional.pad(drawn.tokens, (0, width), value=PAD)
    return Samples(tokens, drawn.lengths, drawn.logprobs, drawn.finished)


def _task_ids(tokens: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Decoder ids (..., T) as task ids: -1 after each output's length."""
    inside = np.arange(tokens.shape[-1]) < lengths[..., None]
    return np.where(inside & (tokens >= N_SPECIAL), tokens - N_SPECIAL, -1)


def _decoder_ids(out: np.ndarray, length: np.ndarray) -> np.ndarray:
    """(..., M + 1) decoder ids of outputs (..., M) (task ids, -1 after the end), EOS after
    each output's `length` tokens, PAD after that."""
    ids = np.where(out >= 0, out + N_SPECIAL, PAD)
    ids = np.concatenate([ids, np.full((*out.shape[:-1], 1), PAD)], axis=-1)
    position = np.arange(out.shape[-1] + 1)
    ids = np.where(position == length[..., None], EOS, ids)
    return np.where(position <= length[..., None], ids, PAD)


@torch.no_grad()
def _teacher_forced_logprob(model: MemberStack, src: Tensor, gold: Tensor) -> np.ndarray:
    """(S, N) total log-probability of gold decoder ids (EOS included, PAD after): (N, T) for
    every member, or (S, N, T), fed to the decoder one step at a time."""
    state, token = model.start(src, max_len=gold.shape[-1])
    total = torch.zeros(token.shape, dtype=torch.float64, device=src.device)
    for t in range(gold.shape[-1]):
        logits, state = model.step(state, token)
        target = gold[..., t].expand_as(token)
        picked = torch.log_softmax(logits.float(), dim=-1).gather(-1, target[..., None])[..., 0]
        total += torch.where(target != PAD, picked, 0.0).double()
        token = target
    return total.cpu().numpy()
