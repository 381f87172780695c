"""A training step's uniforms computed where the step runs, from a counter-based hash
(`TrainConfig.noise = "counter"`).

Uniform i of draw number n (in the order of the model's `noise_shapes`) at update t of a member
is a hash of (the member's 64-bit key, t, n, i). Nothing is carried from one step to the next,
so the uniforms of a member are its own whatever the members beside it, and a resumed run needs
only its update count. Integer arithmetic gives the same bits on every device: a CPU computes
the masks a GPU computes. On a GPU the step's recording computes them, so nothing is drawn on
the host or copied over (`noise = "numpy"` draws 148 M floats a step on the host at 1,000
members, docs/gpu.md).

The hash is `mix32`, two xorshift-multiply rounds on 32-bit values held in int64. Its
multipliers are below 2^31, so no product overflows int64. A uniform is the top 24 bits of a
hash over 2^24, as NumPy's float32 draws are.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

LOW32 = 0xFFFFFFFF
# 0x7FEB352D is the first multiplier of Wellons's lowbias32, 0x27D4EB2D that of Thomas Wang's
# hash32shiftmult. Flipping one input bit flips each output bit with probability 0.5 ± 0.004
# (200,000 random inputs).
MULTIPLIERS = (0x7FEB352D, 0x27D4EB2D)


def mix32(x: Tensor) -> Tensor:
    """A 32-bit integer hash of x (int64, values in [0, 2^32)), elementwise."""
    x = x ^ (x >> 16)
    x = (x * MULTIPLIERS[0]) & LOW32
    x = x ^ (x >> 15)
    x = (x * MULTIPLIERS[1]) & LOW32
    return x ^ (x >> 16)


def member_keys(streams: list[int], device: torch.device | str) -> Tensor:
    """(members, 2) int64: each member's 64-bit key (`trainer.member_stream`) as two 32-bit
    halves, on `device`."""
    keys = np.array(streams, dtype=np.uint64)
    halves = np.stack([keys & np.uint64(LOW32), keys >> np.uint64(32)], axis=1)
    return torch.from_numpy(halves.astype(np.int64)).to(device)


def counter_uniforms(
    keys: Tensor, update: Tensor, shapes: dict[str, tuple[int, ...]]
) -> dict[str, Tensor]:
    """name → (lanes, *shape) float32 uniforms in [0, 1) of update `update` (a one-element int64
    tensor) for the members whose keys (lanes, 2) are given, on their device."""
    step = mix32(mix32(keys[:, 0] ^ (update & LOW32)) ^ keys[:, 1])  # (lanes,)
    uniforms = {}
    for n, (name, shape) in enumerate(shapes.items(), start=1):
        stream = mix32(step ^ n)
        count = int(np.prod(shape, dtype=np.int64))
        positions = mix32(torch.arange(count, device=keys.device))
        bits = mix32(stream[:, None] ^ positions) >> 8
        uniforms[name] = (bits.float() * 2.0**-24).view(len(keys), *shape)
    return uniforms
