"""Teacher forcing's layout of a target: what the decoder reads and what it must predict.

Lample & Charton's layout, where EOS both begins and ends a target. The integration trainer
builds its batches with it and decoding scores given outputs with it (`decoding.scoring`): it
is data, beneath both; the token ids come from the caller.
"""

from __future__ import annotations

import torch
from torch import Tensor


def decoder_io(tgt: Tensor, lengths: Tensor, eos: int, pad: int) -> tuple[Tensor, Tensor]:
    """Targets (B, T) of `lengths` tokens (EOS excluded, `pad` after) → decoder inputs
    `EOS y1..ym` and outputs `y1..ym EOS`, both (B, T + 1), `pad` after the end."""
    n, width = tgt.shape
    tgt_in = torch.cat([tgt.new_full((n, 1), eos), tgt], dim=1)
    tgt_out = torch.cat([tgt, tgt.new_full((n, 1), pad)], dim=1)
    tgt_out[torch.arange(n, device=tgt.device), lengths] = eos
    inside = torch.arange(width + 1, device=tgt.device) <= lengths[:, None]
    return tgt_in.masked_fill(~inside, pad), tgt_out.masked_fill(~inside, pad)
