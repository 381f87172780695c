"""Batched beam search over many sources at once, with Lample & Charton's semantics.

Every step scores all live beams of all unfinished sources in one model call and picks each
source's next beams with one top-k over beam × vocabulary; no Python loop runs over sources or
beams. Semantics follow L&C's `generate_beam`:

- beam b; the first step starts from one live beam per source;
- of the 2b best extensions, in score order, an extension ending in EOS (or reaching
  `max_len` tokens) becomes a finished hypothesis, any other fills the next beam; extensions
  after the b-th beam-filler are not considered;
- a finished hypothesis of n tokens (EOS included) with total log-probability s scores
  s / n ** length_penalty; each source keeps its b best (an older one wins a tie);
- a source is done when it has b hypotheses and either `early_stopping`, or no live beam can
  beat its worst one (best live total / max_len ** length_penalty <= worst, as L&C).

One deliberate difference: a hypothesis cut at `max_len` keeps the token it was cut at (L&C drop
it from the tokens but keep its log-probability in the score).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch import Tensor

from genprobe.decoding.greedy import IncrementalDecoder
from genprobe.errors import ConfigError


class BeamDecoder(IncrementalDecoder, Protocol):
    eos_index: int
    pad_index: int

    def expand(self, state: Any, n: int) -> Any:
        """Each row becomes n consecutive rows (a source's beams or samples)."""
        ...

    def reorder(self, state: Any, index: Tensor) -> Any:
        """Row i continues row index[i] (index keeps every row within its source)."""
        ...

    def keep(self, state: Any, sources: Tensor) -> Any:
        """Keep the rows of these sources (indices among the current ones), in this order."""
        ...


@dataclass(frozen=True)
class BeamResult:
    tokens: Tensor  # (B, k, T) generated ids, EOS excluded; pad_index after the end
    lengths: Tensor  # (B, k) tokens in `tokens` (0 for a missing hypothesis)
    scores: Tensor  # (B, k) length-normalized log-probability; -inf for a missing hypothesis
    logprobs: Tensor  # (B, k) total log-probability of the tokens and the EOS
    finished: Tensor  # (B, k) True when the hypothesis ended with EOS (not cut at max_len)


def _check(beam_size: int, k: int, max_len: int) -> None:
    if beam_size < 1:
        raise ConfigError("beam size", "at least 1", beam_size)
    if not 1 <= k <= beam_size:
        raise ConfigError("k", f"between 1 and the beam size ({beam_size})", k)
    if max_len < 1:
        raise ConfigError("max_len", "at least 1", max_len)


class _Hypotheses:
    """The b best finished hypotheses of every source (rows indexed by source)."""

    def __init__(self, n_src: int, b: int, max_len: int, pad: int, device: torch.device) -> None:
        self.b, self.max_len, self.pad = b, max_len, pad
        self.scores = torch.full((n_src, b), float("-inf"), device=device)
        self.logprobs = torch.full((n_src, b), float("-inf"), device=device)
        self.lengths = torch.zeros(n_src, b, dtype=torch.long, device=device)
        self.ended = torch.zeros(n_src, b, dtype=torch.bool, device=device)
        self.tokens = torch.full((n_src, b, max_len), pad, dtype=torch.long, device=device)

    def full(self, sources: Tensor) -> Tensor:
        return torch.isfinite(self.scores[sources]).all(dim=1)

    def merge(
        self, sources: Tensor, scores: Tensor, logprobs: Tensor, ended: Tensor, tokens: Tensor
    ) -> None:
        """Offer candidates (A, C) of `sources` (-inf score = not offered); tokens (A, C, n)."""
        n = tokens.shape[2]
        lengths = torch.where(ended, n - 1, n)
        tokens = tokens.masked_fill(
            ended[:, :, None] & (torch.arange(n, device=tokens.device) == n - 1), self.pad
        )
        tokens = torch.nn.functional.pad(tokens, (0, self.max_len - n), value=self.pad)

        def union(kept: Tensor, offered: Tensor) -> Tensor:
            return torch.cat([kept[sources], offered], dim=1)

        all_scores = union(self.scores, scores)
        # stable: on a tie the hypothesis kept from an earlier step stays (as L&C)
        order = all_scores.argsort(dim=1, descending=True, stable=True)[:, : self.b]
        self.scores[sources] = all_scores.gather(1, order)
        self.logprobs[sources] = union(self.logprobs, logprobs).gather(1, order)
        self.lengths[sources] = union(self.lengths, lengths).gather(1, order)
        self.ended[sources] = union(self.ended, ended).gather(1, order)
        index = order[:, :, None].expand(-1, -1, self.max_len)
        self.tokens[sources] = union(self.tokens, tokens).gather(1, index)

    def best(self, k: int) -> BeamResult:
        order = self.scores.argsort(dim=1, descending=True, stable=True)[:, :k]
        lengths = self.lengths.gather(1, order)
        width = max(int(lengths.max()), 1)
        index = order[:, :, None].expand(-1, -1, self.max_len)
        return BeamResult(
            tokens=self.tokens.gather(1, index)[:, :, :width],
            lengths=lengths,
            scores=self.scores.gather(1, order),
            logprobs=self.logprobs.gather(1, order),
            finished=self.ended.gather(1, order),
        )


@torch.no_grad()
def beam_search(
    model: BeamDecoder,
    src: Tensor,
    beam_size: int,
    k: int | None = None,
    length_penalty: float = 1.0,
    early_stopping: bool = True,
    max_len: int = 200,
) -> BeamResult:
    """The k best finished hypotheses for each source of src (B, Ls), best first.

    Args:
        model: any `BeamDecoder` (e.g. `Seq2SeqTransformer`).
        src: source ids, padded with the model's `pad_index`.
        beam_size: beams kept per source (b); also the hypotheses kept per source.
        k: hypotheses returned per source (default b).
        length_penalty: exponent of the length in the normalization; 0 ranks by total.
        early_stopping: stop a source as soon as it has b hypotheses.
        max_len: most generated tokens, EOS included.
    """
    k = beam_size if k is None else k
    _check(beam_size, k, max_len)
    b, n_src, device = beam_size, src.shape[0], src.device
    eos, pad = model.eos_index, model.pad_index
    neg_inf = float("-inf")
    hyps = _Hypotheses(n_src, b, max_len, pad, device)

    state, token = model.start(src)
    state = model.expand(state, b)
    token = token.repeat_interleave(b)
    # live sources (A of them) and their beams: (A, b) total log-probs, (A, b, t) tokens
    alive = torch.arange(n_src, device=device)
    beam_scores = torch.full((n_src, b), neg_inf, device=device)
    beam_scores[:, 0] = 0.0
    beam_tokens = torch.empty(n_src, b, 0, dtype=torch.long, device=device)

    for t in range(max_len):
        logits, state = model.step(state, token)
        n_alive, vocab = len(alive), logits.shape[-1]
        logp = torch.log_softmax(logits.float(), dim=-1).view(n_alive, b, vocab)
        totals, flat = (beam_scores[:, :, None] + logp).view(n_alive, -1).topk(2 * b, dim=1)
        source, word = flat // vocab, flat % vocab  # (A, 2b)
        length = t + 1  # generated tokens, this one included (L&C's len(hyp) with BOS)
        final = (word == eos) | (length == max_len)
        going = ~final
        # L&C walk the 2b extensions in order and stop once b beams are filled
        considered = (going.cumsum(1) - going.long()) < b
        done = hyps.full(alive)
        if not early_stopping:
            bound = totals[:, 0] / max_len**length_penalty
            done &= hyps.scores[alive].min(dim=1).values >= bound

        offered = final & considered & torch.isfinite(totals) & ~done[:, None]
        if bool(offered.any()):
            prefix = beam_tokens.gather(1, source[:, :, None].expand(-1, -1, t))
            hyps.merge(
                alive,
                torch.where(offered, totals / length**length_penalty, neg_inf),
                totals,
                word == eos,
                torch.cat([prefix, word[:, :, None]], dim=2),
            )
        if length == max_len:
            break
        if early_stopping:
            done = hyps.full(alive)

        # next beams: the first b non-final extensions, in score order
        rank = going.cumsum(1) - 1
        slot = torch.where(going & (rank < b), rank, b)  # column b collects the discarded
        beam_scores = _scatter(slot, totals.masked_fill(final, neg_inf), neg_inf, b)
        word = _scatter(slot, word, pad, b)
        source = _scatter(slot, source, 0, b)
        rows = (torch.arange(n_alive, device=device)[:, None] * b + source).view(-1)
        state = model.reorder(state, rows)
        prefix = beam_tokens.gather(1, source[:, :, None].expand(-1, -1, t))
        beam_tokens = torch.cat([prefix, word[:, :, None]], dim=2)

        live = ~done & torch.isfinite(beam_scores).any(dim=1)
        if not bool(live.all()):
            if not bool(live.any()):
                break
            keep = live.nonzero().squeeze(1)
            state = model.keep(state, keep)
            alive, beam_scores, beam_tokens = alive[keep], beam_scores[keep], beam_tokens[keep]
            word = word[keep]
        token = word.reshape(-1)
    return hyps.best(k)


def _scatter(slot: Tensor, values: Tensor, fill: float | int, b: int) -> Tensor:
    """(A, 2b) values placed at columns `slot` of an (A, b) result; column b is dropped."""
    out = torch.full((slot.shape[0], b + 1), fill, dtype=values.dtype, device=values.device)
    return out.scatter_(1, slot, values)[:, :b]
