"""What the models that write every output position at once share: a fixed-length input, one
forward pass that scores all T output positions (`scores`), and decoding that reads them off one
position at a time (the MLP, `mlp.py`; Nanda et al.'s transformer, `nanda_transformer.py`).

Such a model reads the task's longest training input (`ModelShape.src_len`: a longer input is
cut, a shorter one padded with 0, which it reads as a token) and writes its longest training
output with its end token (`tgt_len`): a longer output cannot be written, so on longer inputs
it fails by construction. `ReadoutArchitecture.takes` says so: an input longer than `src_len`
is one such a model cannot take.

Shapes: S members, B examples, L input positions, T output positions, V output vocabulary.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from genprobe.data.seq2seq import BOS, EOS
from genprobe.models.architectures.base import Architecture, ModelShape
from genprobe.models.member_stack import MemberStack


def activate(x: Tensor, activation: str) -> Tensor:
    """relu, gelu or quadratic (x², Gromov 2023) of x."""
    if activation == "quadratic":
        return x * x
    return F.gelu(x) if activation == "gelu" else F.relu(x)


class ReadoutArchitecture(Architecture):
    """The options of a model that reads a fixed-length input."""

    def takes(self, shape: ModelShape, src_len: np.ndarray, out_len: np.ndarray) -> np.ndarray:
        return np.asarray(src_len) <= shape.src_len


@dataclass(frozen=True)
class ReadoutState:
    logits: Tensor  # (S, B, T, V): every output position, scored when decoding starts
    step: int


class ReadoutStack(MemberStack, abc.ABC):
    """S members that score every output position of a fixed-length input at once."""

    capturable = False  # not yet recorded and replayed on a GPU
    chunkable = True

    @abc.abstractmethod
    def scores(self, src: Tensor, noise: Mapping[str, Tensor] | None = None) -> Tensor:
        """Logits (S, B, T, V) of every output position for src (S, B, Ls)."""

    def fixed_input(self, src: Tensor) -> Tensor:
        """src (S, B, Ls) cut or padded to the model's L input positions: (S, B, L)."""
        width = self.shape.src_len
        return F.pad(src[:, :, :width], (0, max(0, width - src.shape[2])))

    def teacher_forced(
        self, src: Tensor, tgt_in: Tensor, noise: Mapping[str, Tensor] | None = None
    ) -> Tensor:
        """Logits (S, B, T, V) of the first T = tgt_in's length output positions (tgt_in is not
        read: every position is written at once)."""
        return self.scores(src, noise)[:, :, : tgt_in.shape[2]]

    # -- decoding (see `genprobe.decoding.greedy`) ---------------------------------------------

    def start(self, src: Tensor, max_len: int | None = None) -> tuple[ReadoutState, Tensor]:
        """Score every output position of src (B, Ls) at once: the state and BOS (S, B)."""
        logits = self.scores(src.unsqueeze(0).expand(self.members, -1, -1))
        return ReadoutState(logits, 0), torch.full(logits.shape[:2], BOS, device=src.device)

    def step(self, state: ReadoutState, token: Tensor) -> tuple[Tensor, ReadoutState]:
        """The scores (S, B, V) of the next position (the token fed is not read); past the
        last position it can write, the end of the sequence."""
        if state.step < state.logits.shape[2]:
            logits = state.logits[:, :, state.step]
        else:
            logits = torch.full_like(state.logits[:, :, 0], -math.inf)
            logits[..., EOS] = 0.0
        return logits, ReadoutState(state.logits, state.step + 1)
