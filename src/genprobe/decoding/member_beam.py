"""Beam search of every member of a stacked model at once.

`beam_search` decodes sources whose beams it reorders and drops; a stacked model's decoder state
holds every member's rows of the same sources, (S, B, ...) in every tensor. `FoldedMembers`
shows `beam_search` S × N sources (member-major) and keeps one stacked state: reordering a
source's beams is a gather within its member (beams never leave their source); a finished
source's rows are decoded with padding until at most half of the rows are live, when each
member's live rows move to the front and the state shrinks to the member with the most. What a
member decodes does not depend on the members beside it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

import torch
from torch import Tensor

from genprobe.decoding.beam import BeamResult, beam_search


class StackedDecoder(Protocol):
    members: int

    def start(self, src: Tensor, max_len: int | None = None) -> tuple[Any, Tensor]:
        """State (every tensor (S, B, ...)) and BOS tokens (S, B) for sources (B, Ls)."""
        ...

    def step(self, state: Any, token: Tensor) -> tuple[Tensor, Any]:
        """Logits (S, B, V) of the next token after tokens (S, B)."""
        ...


@dataclasses.dataclass(frozen=True)
class _Folded:
    inner: Any  # the stacked model's state, (S, R, ...) in every tensor
    rows: int  # R
    alive: Tensor  # (rows beam_search sees,) their places among the S × R folded rows


def gather_rows(state: Any, index: Tensor) -> Any:
    """Every tensor of `state` (S, R, ...) at rows index (S, R') of each member."""
    if isinstance(state, Tensor):
        members = torch.arange(state.shape[0], device=state.device)[:, None]
        return state[members, index]
    if isinstance(state, tuple):
        return tuple(gather_rows(part, index) for part in state)
    if dataclasses.is_dataclass(state):
        changed = {
            f.name: gather_rows(getattr(state, f.name), index) for f in dataclasses.fields(state)
        }
        return dataclasses.replace(state, **changed)
    return state  # None, a step counter


class FoldedMembers:
    """A stacked model shown to `beam_search` as S × N sources (member s, source n at s·N + n)."""

    def __init__(self, model: StackedDecoder, src: Tensor, max_len: int, eos: int, pad: int):
        self.model, self.src, self.max_len = model, src, max_len
        self.eos_index, self.pad_index = eos, pad
        self.members, self.beams = model.members, 1

    def start(self, folded_src: Tensor, max_len: int | None = None) -> tuple[_Folded, Tensor]:
        state, bos = self.model.start(self.src, max_len=self.max_len)
        alive = torch.arange(bos.numel(), device=bos.device)
        return _Folded(state, bos.shape[1], alive), bos.reshape(-1)

    def expand(self, state: _Folded, n: int) -> _Folded:
        self.beams = n
        rows = torch.arange(state.rows, device=state.alive.device).repeat_interleave(n)
        inner = gather_rows(state.inner, rows.expand(self.members, -1))
        alive = torch.arange(self.members * state.rows * n, device=state.alive.device)
        return _Folded(inner, state.rows * n, alive)

    def step(self, state: _Folded, token: Tensor) -> tuple[Tensor, _Folded]:
        every = torch.full((self.members * state.rows,), self.pad_index, device=token.device)
        every[state.alive] = token
        logits, inner = self.model.step(state.inner, every.view(self.members, state.rows))
        logits = logits.reshape(self.members * state.rows, -1)[state.alive]
        return logits, dataclasses.replace(state, inner=inner)

    def reorder(self, state: _Folded, index: Tensor) -> _Folded:
        every = torch.arange(self.members * state.rows, device=index.device)
        every[state.alive] = state.alive[index]
        first = torch.arange(self.members, device=index.device)[:, None] * state.rows
        inner = gather_rows(state.inner, every.view(self.members, state.rows) - first)
        return dataclasses.replace(state, inner=inner)

    def keep(self, state: _Folded, sources: Tensor) -> _Folded:
        alive = state.alive.view(-1, self.beams)[sources].reshape(-1)
        member = alive // state.rows
        counts = torch.bincount(member, minlength=self.members)
        width = int(counts.max())
        if 2 * width > state.rows:  # not worth copying the state yet
            return dataclasses.replace(state, alive=alive)
        # Each member's live rows move to its first `width` rows (the rest repeat its row 0).
        slot = torch.arange(len(alive), device=alive.device) - (counts.cumsum(0) - counts)[member]
        index = torch.zeros(self.members, width, dtype=torch.long, device=alive.device)
        index[member, slot] = alive % state.rows
        return _Folded(gather_rows(state.inner, index), width, member * width + slot)


@torch.no_grad()
def member_beam_search(
    model: StackedDecoder,
    src: Tensor,
    beam_size: int,
    *,
    max_len: int,
    eos: int,
    pad: int,
    k: int | None = None,
    length_penalty: float = 1.0,
    early_stopping: bool = True,
) -> BeamResult:
    """`beam_search` of every member of `model` for sources src (N, Ls): a `BeamResult` whose
    tensors lead with (S, N) instead of the sources."""
    folded = FoldedMembers(model, src, max_len, eos, pad)
    sources = src.new_zeros(model.members * len(src), 1)
    result = beam_search(
        folded,
        sources,
        beam_size,
        k=k,
        length_penalty=length_penalty,
        early_stopping=early_stopping,
        max_len=max_len,
    )
    lead = (model.members, len(src))
    parts = (getattr(result, f.name) for f in dataclasses.fields(result))
    return BeamResult(*(t.reshape(*lead, *t.shape[1:]) for t in parts))
