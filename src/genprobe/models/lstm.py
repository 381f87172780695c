"""LSTM seq2seq with bilinear attention, S independent members in one set of tensors.

Table 1 of Weber et al. (2018): one-layer unidirectional LSTM encoder and decoder, embeddings
and hidden size 32, Luong "general" (bilinear) attention, attentional hidden state
tanh(W_c [ctx; h]) → output layer, dropout on the input and output layers.

Every weight has a leading member axis S; member k is initialized from its own seed and never
mixes with another member, so S seeds train as one model (see `training.trainer`). Shapes in
comments: S members, B examples, Ls source and T target positions, E embedding, H hidden, V
target vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from genprobe.data.seq2seq import BOS, PAD
from genprobe.models.lstm_cell import lstm_cell


@dataclass(frozen=True)
class LSTMConfig:
    src_vocab: int  # source symbols + padding (id 0)
    tgt_vocab: int  # target tokens + PAD, BOS, EOS
    emb: int = 32
    hidden: int = 32
    dropout: float = 0.1  # on the embeddings and on the attentional hidden state
    init_range: float = 0.1  # weights start uniform in (-init_range, init_range)

    def to_dict(self) -> dict:
        return asdict(self)


# name → shape without the member axis; the order fixes how a member's seed fills them.
def _shapes(c: LSTMConfig) -> dict[str, tuple[int, ...]]:
    e, h = c.emb, c.hidden
    return {
        "src_emb": (c.src_vocab, e),
        "enc_w_ih": (e, 4 * h),
        "enc_w_hh": (h, 4 * h),
        "enc_b": (1, 4 * h),
        "tgt_emb": (c.tgt_vocab, e),
        "dec_w_ih": (e, 4 * h),
        "dec_w_hh": (h, 4 * h),
        "dec_b": (1, 4 * h),
        "attn_w": (h, h),
        "out_w_ctx": (h, h),  # W_c = [out_w_ctx; out_w_h]: two products instead of a concat
        "out_w_h": (h, h),
        "gen_w": (h, c.tgt_vocab),
        "gen_b": (1, c.tgt_vocab),
    }


class StackedSeq2Seq(nn.Module):
    """S seq2seq members; parameter `name` has shape (S, *shape) for each entry of `_shapes`."""

    def __init__(self, config: LSTMConfig, members: int) -> None:
        super().__init__()
        self.config = config
        for name, shape in _shapes(config).items():
            self.register_parameter(name, nn.Parameter(torch.empty(members, *shape)))

    @classmethod
    def initialized(cls, config: LSTMConfig, seeds: Sequence[int]) -> StackedSeq2Seq:
        """A model whose member k is drawn from `torch.Generator().manual_seed(seeds[k])`."""
        model = cls(config, len(seeds))
        with torch.no_grad():
            for k, seed in enumerate(seeds):
                generator = torch.Generator().manual_seed(seed)
                for param in model.parameters():
                    param[k].uniform_(-config.init_range, config.init_range, generator=generator)
        return model

    @classmethod
    def from_members(
        cls, config: LSTMConfig, states: Sequence[dict[str, Tensor]]
    ) -> StackedSeq2Seq:
        """Stack single-member state dicts (as `member_state` returns) into one model."""
        model = cls(config, len(states))
        with torch.no_grad():
            for name, param in model.named_parameters():
                param.copy_(torch.stack([state[name] for state in states]))
        return model

    @property
    def members(self) -> int:
        return self.src_emb.shape[0]

    def member_state(self, k: int) -> dict[str, Tensor]:
        return {name: param[k].detach().clone() for name, param in self.named_parameters()}

    def subset(self, keep: Sequence[int]) -> StackedSeq2Seq:
        """A new model holding only the members at positions `keep` (fresh leaf tensors)."""
        return self.from_members(self.config, [self.member_state(k) for k in keep])

    # -- building blocks ------------------------------------------------------------------

    def _embed(self, table: Tensor, ids: Tensor) -> Tensor:
        """Per-member lookup: table (S, V, E), ids (S, ...) → (S, ..., E)."""
        members, vocab, _ = table.shape
        offset = torch.arange(members, device=ids.device).view(-1, *[1] * (ids.dim() - 1)) * vocab
        return F.embedding(ids + offset, table.reshape(members * vocab, -1))

    def _project(self, x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        """(S, B, T, in) @ (S, in, out) [+ bias (S, 1, out)] → (S, B, T, out), one matmul."""
        s, b, t, _ = x.shape
        flat = x.reshape(s, b * t, -1)
        out = torch.bmm(flat, weight) if bias is None else torch.baddbmm(bias, flat, weight)
        return out.view(s, b, t, -1)

    def encode(self, src: Tensor, dropout: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """src (S, B, Ls) → encoder states (S, B, Ls, H) and the final (h, c), each (S, B, H)."""
        x = self._embed(self.src_emb, src)  # (S, B, Ls, E)
        if dropout is not None:
            x = x * dropout
        x_gates = self._project(x, self.enc_w_ih, self.enc_b)  # (S, B, Ls, 4H)
        s, b, _ = src.shape
        h = x.new_zeros(s, b, self.config.hidden)
        c = torch.zeros_like(h)
        real = (src != PAD).unsqueeze(-1).unbind(2)  # Ls × (S, B, 1)
        states = []
        # unbind, not x_gates[:, :, t]: the backward of T selects would write T full-size zeros.
        for x_t, real_t in zip(x_gates.unbind(2), real, strict=True):
            h_new, c_new = lstm_cell(x_t + torch.bmm(h, self.enc_w_hh), c)
            # Padding comes after the end, so holding the state there keeps the last real one.
            h = torch.where(real_t, h_new, h)
            c = torch.where(real_t, c_new, c)
            states.append(h_new)
        return torch.stack(states, dim=2), h, c

    def _attend(self, dec: Tensor, enc: Tensor, src_pad: Tensor) -> Tensor:
        """Luong general attention + attentional hidden state.

        dec (S, B, T, H), enc (S, B, Ls, H), src_pad (S, B, Ls) → tanh(W_c [ctx; h]) (S, B, T, H).
        """
        s, b, t, h = dec.shape
        query = self._project(dec, self.attn_w).reshape(s * b, t, h)
        keys = enc.reshape(s * b, -1, h)
        scores = torch.bmm(query, keys.transpose(1, 2))  # (S*B, T, Ls)
        scores = scores.masked_fill(src_pad.reshape(s * b, 1, -1), float("-inf"))
        context = torch.bmm(torch.softmax(scores, dim=-1), keys)  # (S*B, T, H)
        mixed = torch.baddbmm(
            self._project(dec, self.out_w_h).view(s, b * t, h),
            context.view(s, b * t, h),
            self.out_w_ctx,
        )
        return torch.tanh(mixed).view(s, b, t, h)

    def logits(self, hidden: Tensor) -> Tensor:
        """Output layer: attentional hidden states (S, …, H) → logits (S, …, V)."""
        flat = hidden.reshape(hidden.shape[0], -1, hidden.shape[-1])
        return torch.baddbmm(self.gen_b, flat, self.gen_w).view(*hidden.shape[:-1], -1)

    # -- training -------------------------------------------------------------------------

    def forward(self, src: Tensor, tgt_in: Tensor, masks: Sequence[Tensor] | None = None) -> Tensor:
        """Teacher-forced attentional hidden states (S, B, T, H) for src (S, B, Ls) and tgt_in
        (S, B, T); `logits` turns them (or a selection of them) into scores.

        `masks` are the scaled dropout masks for (source embeddings, target embeddings,
        attentional hidden state), each broadcastable to its tensor; None = no dropout.
        """
        src_mask, tgt_mask, out_mask = masks if masks is not None else (None, None, None)
        enc, h, c = self.encode(src, src_mask)
        y = self._embed(self.tgt_emb, tgt_in)  # (S, B, T, E)
        if tgt_mask is not None:
            y = y * tgt_mask
        y_gates = self._project(y, self.dec_w_ih, self.dec_b)  # (S, B, T, 4H)
        states = []
        for y_t in y_gates.unbind(2):
            h, c = lstm_cell(y_t + torch.bmm(h, self.dec_w_hh), c)
            states.append(h)
        hidden = self._attend(torch.stack(states, dim=2), enc, src == PAD)
        if out_mask is not None:
            hidden = hidden * out_mask
        return hidden

    # -- incremental decoding (see `genprobe.decoding.greedy`) -----------------------------

    def start(self, src: Tensor) -> tuple[DecoderState, Tensor]:
        """Encode src (B, Ls), the same inputs for every member: the state and BOS (S, B)."""
        src = src.unsqueeze(0).expand(self.members, -1, -1)
        enc, h, c = self.encode(src)
        return DecoderState(enc, src == PAD, h, c), torch.full(
            src.shape[:2], BOS, device=src.device
        )

    def step(self, state: DecoderState, token: Tensor) -> tuple[Tensor, DecoderState]:
        """Feed token (S, B); return next-token logits (S, B, V) and the new state."""
        y = self._embed(self.tgt_emb, token)  # (S, B, E)
        gates = torch.bmm(y, self.dec_w_ih) + self.dec_b + torch.bmm(state.h, self.dec_w_hh)
        h, c = lstm_cell(gates, state.c)
        hidden = self._attend(h.unsqueeze(2), state.enc, state.src_pad)  # (S, B, 1, H)
        return self.logits(hidden).squeeze(2), DecoderState(state.enc, state.src_pad, h, c)


@dataclass(frozen=True)
class DecoderState:
    enc: Tensor  # (S, B, Ls, H)
    src_pad: Tensor  # (S, B, Ls)
    h: Tensor  # (S, B, H)
    c: Tensor  # (S, B, H)
