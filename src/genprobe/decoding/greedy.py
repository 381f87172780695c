"""Greedy decoding of any model that exposes `start(src)` and `step(state, token)`."""

from __future__ import annotations

from typing import Any, Protocol

import torch
from torch import Tensor


class IncrementalDecoder(Protocol):
    def start(self, src: Tensor, max_len: int | None = None) -> tuple[Any, Tensor]:
        """Encode src (B, Ls) for up to `max_len` steps (None: not known); return the decoder
        state and the BOS tokens (*lead, B)."""
        ...

    def step(self, state: Any, token: Tensor) -> tuple[Tensor, Any]: ...


@torch.no_grad()
def greedy(model: IncrementalDecoder, src: Tensor, max_len: int, *, eos: int, pad: int) -> Tensor:
    """Decode src (B, Ls) by always taking the most likely next token.

    Returns token ids (*lead, B, max_len), where `lead` is whatever leading axes the model's
    logits carry (the member axis S of a stacked model); positions after EOS hold `pad`.
    `eos` and `pad` are the ids of the model's vocabulary (`genprobe.data.seq2seq`'s for the
    stacked seed-study models; EOS 0, PAD 1 for the integration transformer).
    """
    state, token = model.start(src, max_len=max_len)
    done = torch.zeros_like(token, dtype=torch.bool)
    out: list[Tensor] = []
    for _ in range(max_len):
        logits, state = model.step(state, token)
        token = logits.argmax(-1)
        done |= token == eos
        out.append(token)
        if bool(done.all()):
            break
    tokens = torch.stack(out, dim=-1)
    is_eos = (tokens == eos).long()
    tokens = tokens.masked_fill(is_eos.cumsum(-1) - is_eos > 0, pad)
    return torch.nn.functional.pad(tokens, (0, max_len - tokens.shape[-1]), value=pad)
