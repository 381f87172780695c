"""Temperature sampling of n outputs per source, all sources and samples in one batch.

Each source draws its randomness from a generator of its own, seeded by the caller, so its
samples are the same whichever batch it is decoded in. A token is drawn as
argmax(logits / T + Gumbel noise), which samples softmax(logits / T); the noise is drawn for
`NOISE_STEPS` steps at a time, so the per-source draws stay out of the per-step loop.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from genprobe.decoding.beam import BeamDecoder
from genprobe.decoding.greedy import IncrementalDecoder
from genprobe.decoding.member_beam import StackedDecoder, gather_rows
from genprobe.errors import ConfigError

NOISE_STEPS = 32


@dataclass(frozen=True)
class Samples:
    # (B, n, T) sampled ids, EOS excluded; pad_index after the end ((S, B, n, T) stacked)
    tokens: Tensor
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
    generators = _generators(src, n, temperature, seeds)
    state, token = model.start(src)
    state = model.expand(state, n)
    return _drawn(
        model, state, token.repeat_interleave(n), generators, n, temperature, max_len,
        model.eos_index, model.pad_index,
    )  # fmt: skip


@torch.no_grad()
def sample_stacked(
    model: StackedDecoder,
    src: Tensor,
    n: int,
    temperature: float,
    max_len: int,
    seeds: Sequence[int],
    *,
    eos: int,
    pad: int,
) -> Samples:
    """`sample` for every member of a stacked model at once: tokens (S, B, n, T), the rest
    (S, B, n). Every member draws with the same noise (source i's from seeds[i]), so a member's
    samples do not depend on the members stacked beside it."""
    generators = _generators(src, n, temperature, seeds)
    state, token = model.start(src, max_len=max_len)
    rows = torch.arange(src.shape[0], device=src.device).repeat_interleave(n)
    state = gather_rows(state, rows.expand(token.shape[0], -1))  # each source's rows n times
    token = token.repeat_interleave(n, dim=-1)
    return _drawn(model, state, token, generators, n, temperature, max_len, eos, pad)


def source_seed(seed: int, source: Sequence[int]) -> int:
    """A sampling seed of the source itself (its ids): its samples do not depend on its
    batch."""
    digest = hashlib.blake2b(f"{seed}:{list(source)}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1  # manual_seed takes < 2**63


def _generators(
    src: Tensor, n: int, temperature: float, seeds: Sequence[int] | None
) -> list[torch.Generator]:
    if n < 1:
        raise ConfigError("n", "at least 1", n)
    if not temperature > 0:
        raise ConfigError("temperature", "a positive number", temperature)
    seeds = range(src.shape[0]) if seeds is None else seeds
    if len(seeds) != src.shape[0]:
        raise ConfigError("seeds", f"one per source ({src.shape[0]})", len(seeds))
    return [torch.Generator(src.device).manual_seed(seed) for seed in seeds]


def _drawn(
    model: IncrementalDecoder,
    state: Any,
    token: Tensor,
    generators: list[torch.Generator],
    n: int,
    temperature: float,
    max_len: int,
    eos: int,
    pad: int,
) -> Samples:
    """The sampling loop from a started decoder: tokens (*lead, B·n), the rows of source i at
    i·n to i·n + n - 1 (lead: a stacked model's member axis)."""
    device = token.device
    done = torch.zeros_like(token, dtype=torch.bool)
    totals = torch.zeros(token.shape, device=device)
    out: list[Tensor] = []
    for t in range(max_len):
        logits, state = model.step(state, token)
        logits = logits.float()
        if t % NOISE_STEPS == 0:
            noise = _gumbel(generators, n, logits.shape[-1], device)
        token = (logits / temperature + noise[:, t % NOISE_STEPS]).argmax(dim=-1)
        step_logp = torch.log_softmax(logits, dim=-1).gather(-1, token[..., None])[..., 0]
        totals += step_logp.masked_fill(done, 0.0)
        token = token.masked_fill(done, pad)
        out.append(token)
        done |= token == eos
        if bool(done.all()):
            break
    tokens = torch.stack(out, dim=-1)  # (*lead, B·n, t)
    is_eos = tokens == eos
    lengths = torch.where(is_eos.any(-1), is_eos.long().argmax(-1), tokens.shape[-1])
    tokens = tokens.masked_fill(
        torch.arange(tokens.shape[-1], device=device) >= lengths[..., None], pad
    )
    by_source = (len(generators), n)
    return Samples(
        tokens.unflatten(-2, by_source),
        lengths.unflatten(-1, by_source),
        totals.unflatten(-1, by_source),
        done.unflatten(-1, by_source),
    )


def _gumbel(generators: list[torch.Generator], n: int, vocab: int, device) -> Tensor:
    """Gumbel noise (B·n, NOISE_STEPS, V), source i's from generators[i]."""
    shape = (n, NOISE_STEPS, vocab)
    u = torch.stack([torch.rand(shape, generator=g, device=device) for g in generators])
    tiny = torch.finfo(u.dtype).tiny
    return -torch.log(-torch.log(u.clamp_min(tiny))).flatten(0, 1)
