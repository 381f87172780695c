"""Temperature sampling of n outputs per source, all sources and samples in one batch.

Each source draws its randomness from a generator of its own, seeded by the caller, so its
samples are the same whichever batch it is decoded in. A token is drawn as
argmax(logits / T + Gumbel noise), which samples softmax(logits / T); the noise is drawn for
`NOISE_STEPS` steps at a time, so the per-source draws stay out of the per-step loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from genprobe.decoding.beam import BeamDecoder
from genprobe.errors import ConfigError

NOISE_STEPS = 32


@dataclass(frozen=True)
class Samples:
    tokens: Tensor  # (B, n, T) sampled ids, EOS excluded; pad_index after the end
    lengths: Tensor  # (B, n)
    logprobs: Tensor  # (B, n) total log-probability under the model (temperature 1), EOS included
    finished: Tensor  # (B, n) False where max_len was reached before EOS


@torch.no_grad()
def sample(
    model: BeamDecoder,
    src: Tensor,
    n: int,
    temperature: float = 1.0,
    max_len: int = 200,
    seeds: Sequence[int] | None = None,
) -> Samples:
    """n independent samples per source of src (B, Ls), drawn from softmax(logits / T); source
    i's depend only on seeds[i] (default: i)."""
    if n < 1:
        raise ConfigError("n", "at least 1", n)
    if not temperature > 0:
        raise ConfigError("temperature", "a positive number", temperature)
    eos, pad = model.eos_index, model.pad_index
    n_src, device = src.shape[0], src.device
    seeds = range(n_src) if seeds is None else seeds
    if len(seeds) != n_src:
        raise ConfigError("seeds", f"one per source ({n_src})", len(seeds))
    generators = [torch.Generator(device).manual_seed(seed) for seed in seeds]
    state, token = model.start(src)
    state = model.expand(state, n)
    token = token.repeat_interleave(n)
    done = torch.zeros(n_src * n, dtype=torch.bool, device=device)
    totals = torch.zeros(n_src * n, device=device)
    out: list[Tensor] = []
    for t in range(max_len):
        logits, state = model.step(state, token)
        logits = logits.float()
        if t % NOISE_STEPS == 0:
            noise = _gumbel(generators, n, logits.shape[-1], device)
        token = (logits / temperature + noise[:, t % NOISE_STEPS]).argmax(dim=-1)
        step_logp = torch.log_softmax(logits, dim=-1).gather(1, token[:, None]).squeeze(1)
        totals += step_logp.masked_fill(done, 0.0)
        token = token.masked_fill(done, pad)
        out.append(token)
        done |= token == eos
        if bool(done.all()):
            break
    tokens = torch.stack(out, dim=1)  # (B·n, t)
    is_eos = tokens == eos
    lengths = torch.where(is_eos.any(1), is_eos.long().argmax(1), tokens.shape[1])
    tokens = tokens.masked_fill(
        torch.arange(tokens.shape[1], device=device) >= lengths[:, None], pad
    )
    return Samples(
        tokens.view(n_src, n, -1),
        lengths.view(n_src, n),
        totals.view(n_src, n),
        done.view(n_src, n),
    )


def _gumbel(generators: list[torch.Generator], n: int, vocab: int, device) -> Tensor:
    """Gumbel noise (B·n, NOISE_STEPS, V), source i's from generators[i]."""
    shape = (n, NOISE_STEPS, vocab)
    u = torch.stack([torch.rand(shape, generator=g, device=device) for g in generators])
    tiny = torch.finfo(u.dtype).tiny
    return -torch.log(-torch.log(u.clamp_min(tiny))).flatten(0, 1)
