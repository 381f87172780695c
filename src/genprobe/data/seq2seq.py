"""Pre-encoded seq2seq tensors and the target-side special tokens.

Source ids are the task's symbol ids (0 = padding). Target ids are the task's output token
indices shifted by `N_SPECIAL`, so that 0, 1, 2 are padding, begin and end of sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

PAD, BOS, EOS = 0, 1, 2
N_SPECIAL = 3


@dataclass(frozen=True)
class Seq2SeqTensors:
    src: torch.Tensor  # (N, Ls) source ids, PAD after the end
    tgt_in: torch.Tensor  # (N, Tt) BOS y_1 … y_m, PAD after
    tgt_out: torch.Tensor  # (N, Tt) y_1 … y_m EOS, PAD after

    def __len__(self) -> int:
        return len(self.src)

    def to(self, device: torch.device | str) -> Seq2SeqTensors:
        return Seq2SeqTensors(*(t.to(device) for t in (self.src, self.tgt_in, self.tgt_out)))


def encode(src: np.ndarray, tgt: np.ndarray) -> Seq2SeqTensors:
    """Encode (n, L) source ids and (n, M) target token indices (-1 = padding)."""
    n = len(tgt)
    length = (tgt >= 0).sum(axis=1)
    shifted = np.where(tgt >= 0, tgt + N_SPECIAL, PAD)
    tgt_in = np.concatenate([np.full((n, 1), BOS), shifted], axis=1)
    tgt_out = np.concatenate([shifted, np.full((n, 1), PAD)], axis=1)
    tgt_out[np.arange(n), length] = EOS
    return Seq2SeqTensors(
        torch.as_tensor(src, dtype=torch.long),
        torch.as_tensor(tgt_in, dtype=torch.long),
        torch.as_tensor(tgt_out, dtype=torch.long),
    )


def decoded_outputs(tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decoder ids (..., T) → (token indices with -1 for specials and after EOS, lengths).

    The length counts every token before the first EOS (all of them if there is none); a special
    token before the EOS stays in the output as -1, which no task accepts.
    """
    is_eos = tokens == EOS
    length = np.where(is_eos.any(axis=-1), is_eos.argmax(axis=-1), tokens.shape[-1])
    before_eos = np.arange(tokens.shape[-1]) < length[..., None]
    out = np.where(before_eos & (tokens >= N_SPECIAL), tokens - N_SPECIAL, -1)
    return out, length
