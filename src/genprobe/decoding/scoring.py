"""Teacher-forced log-probabilities of given outputs: what the model thinks of an answer,
whether or not its search would ever find it."""

from __future__ import annotations

from typing import Protocol

import torch
from torch import Tensor

from genprobe.data.teacher_forcing import decoder_io


class TeacherForced(Protocol):
    eos_index: int
    pad_index: int

    def __call__(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """Next-token logits (B, T, V) for decoder inputs tgt_in (B, T) starting with BOS."""
        ...


@torch.no_grad()
def sequence_logprobs(
    model: TeacherForced, src: Tensor, tgt: Tensor, lengths: Tensor, ended: Tensor | None = None
) -> Tensor:
    """Total log-probability (B,) of each target (tokens then EOS) given its source.

    `ended` (B,) False leaves the EOS out: the total of a hypothesis cut at a length limit.
    """
    tgt_in, tgt_out = decoder_io(tgt, lengths, model.eos_index, model.pad_index)
    logp = torch.log_softmax(model(src, tgt_in).float(), dim=-1)
    last = lengths if ended is None else lengths + ended.long() - 1
    inside = torch.arange(tgt_out.shape[1], device=tgt.device) <= last[:, None]
    picked = logp.gather(2, tgt_out.clamp(min=0)[:, :, None]).squeeze(2)
    return picked.masked_fill(~inside, 0.0).sum(dim=1)
