"""Encoder-decoder transformer with Lample & Charton's (2019) layout and parameter names.

Post-LayerNorm (residual, then LN, eps 1e-12), learned positions, LayerNorm after the embeddings,
separate q/k/v/out projections with bias, ReLU FFN of 4·dim, decoder layers self-attention →
cross-attention → FFN, output projection tied to the decoder embeddings. The state-dict keys are
theirs (`encoder.attentions.0.q_lin.weight`, `decoder.layer_norm15.3.bias`, `decoder.proj.bias`,
...), so their checkpoints load strictly (see `checkpoints.py`).

Token ids are the task's: `eos_index` (0 in L&C's vocabulary) is both BOS and EOS, `pad_index`
(1) pads. Shapes in comments: B sequences, Ls source and T target positions, D model dim,
H heads, d = D / H, V vocabulary, L layers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn.functional as F
from torch import Tensor, nn


@dataclass(frozen=True)
class TransformerConfig:
    n_words: int = 91  # vocabulary size; L&C's integration vocabulary has 91 tokens
    dim: int = 256
    n_enc_layers: int = 4
    n_dec_layers: int = 4
    n_heads: int = 8
    dropout: float = 0.0
    attention_dropout: float = 0.0
    # learned position table size; L&C use 4096 and their checkpoints carry that many rows
    max_positions: int = 4096
    eos_index: int = 0
    pad_index: int = 1

    def to_dict(self) -> dict:
        return asdict(self)


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int, dropout: float) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.dropout = dropout
        self.q_lin = nn.Linear(dim, dim)
        self.k_lin = nn.Linear(dim, dim)
        self.v_lin = nn.Linear(dim, dim)
        self.out_lin = nn.Linear(dim, dim)

    def attend_grouped(self, x: Tensor, k: Tensor, v: Tensor, mask: Tensor, group: int) -> Tensor:
        """One query per row of x (N, 1, D), rows in groups of `group` consecutive rows sharing
        keys/values (N / group, H, S, d) and mask (N / group, 1, 1, S): a source's beams attend
        to its encoder output in one matmul, and it is stored once, not once per beam."""
        n, _, dim = x.shape
        q = self.q_lin(x).view(n // group, group, self.n_heads, dim // self.n_heads)
        q = q.transpose(1, 2) * (dim // self.n_heads) ** -0.5  # (S, H, g, d)
        scores = (q @ k.transpose(2, 3)).masked_fill(~mask, float("-inf"))  # (S, H, g, S)
        out = torch.softmax(scores.float(), dim=-1).to(v.dtype) @ v  # (S, H, g, d)
        return self.out_lin(out.transpose(1, 2).reshape(n, 1, dim))

    def split(self, x: Tensor) -> Tensor:
        b, t, dim = x.shape
        return x.view(b, t, self.n_heads, dim // self.n_heads).transpose(1, 2)  # (B, H, T, d)

    def keys_values(self, x: Tensor) -> tuple[Tensor, Tensor]:
        return self.split(self.k_lin(x)), self.split(self.v_lin(x))

    def attend(self, x: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool) -> Tensor:
        """Queries from x (B, T, D) over keys and values (B, H, S, d); mask True = may attend."""
        q = self.split(self.q_lin(x))
        if q.shape[2] == 1 and not self.training:
            # one query per row (incremental decoding): plain matmuls beat the fused CPU kernel
            scores = (q * q.shape[-1] ** -0.5) @ k.transpose(2, 3)  # (B, H, 1, S)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            out = torch.softmax(scores.float(), dim=-1).to(v.dtype) @ v
        else:
            p = self.dropout if self.training else 0.0
            out = F.scaled_dot_product_attention(q, k, v, mask, dropout_p=p, is_causal=causal)
        b, _, t, _ = out.shape
        return self.out_lin(out.transpose(1, 2).reshape(b, t, -1))  # (B, T, D)


class FFN(nn.Module):
    def __init__(self, dim: int, dropout: float) -> None:
        super().__init__()
        self.lin1 = nn.Linear(dim, 4 * dim)
        self.lin2 = nn.Linear(4 * dim, dim)
        self.dropout = dropout

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(self.lin2(F.relu(self.lin1(x))), self.dropout, self.training)


class Stack(nn.Module):
    """One side (encoder or decoder); module names are L&C's `TransformerModel`'s."""

    def __init__(self, config: TransformerConfig, n_layers: int, is_decoder: bool) -> None:
        super().__init__()
        c = config
        self.dropout = c.dropout
        self.position_embeddings = nn.Embedding(c.max_positions, c.dim)
        self.embeddings = nn.Embedding(c.n_words, c.dim, padding_idx=c.pad_index)
        self.layer_norm_emb = nn.LayerNorm(c.dim, eps=1e-12)
        self.attentions = nn.ModuleList(
            MultiHeadAttention(c.dim, c.n_heads, c.attention_dropout) for _ in range(n_layers)
        )
        self.layer_norm1 = nn.ModuleList(nn.LayerNorm(c.dim, eps=1e-12) for _ in range(n_layers))
        if is_decoder:
            self.layer_norm15 = nn.ModuleList(
                nn.LayerNorm(c.dim, eps=1e-12) for _ in range(n_layers)
            )
            self.encoder_attn = nn.ModuleList(
                MultiHeadAttention(c.dim, c.n_heads, c.attention_dropout) for _ in range(n_layers)
            )
        self.ffns = nn.ModuleList(FFN(c.dim, c.dropout) for _ in range(n_layers))
        self.layer_norm2 = nn.ModuleList(nn.LayerNorm(c.dim, eps=1e-12) for _ in range(n_layers))
        if is_decoder:
            self.proj = nn.Linear(c.dim, c.n_words)
            self.proj.weight = self.embeddings.weight  # tied, as L&C's share_inout_emb
        for table in (self.position_embeddings, self.embeddings):
            nn.init.normal_(table.weight, std=c.dim**-0.5)
        with torch.no_grad():
            self.embeddings.weight[c.pad_index].zero_()

    def embed(self, tokens: Tensor, start: int = 0) -> Tensor:
        """tokens (B, T) at positions start.. → (B, T, D)."""
        positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        x = self.embeddings(tokens) + self.position_embeddings(positions)
        return F.dropout(self.layer_norm_emb(x), self.dropout, self.training)

    def residual(self, x: Tensor, update: Tensor, norm: nn.LayerNorm) -> Tensor:
        return norm(x + F.dropout(update, self.dropout, self.training))

    def ffn(self, i: int, x: Tensor) -> Tensor:
        return self.layer_norm2[i](x + self.ffns[i](x))


@dataclass(frozen=True)
class DecoderState:
    """Incremental decoding state: per-layer key/value caches of the tokens fed so far (a row
    per hypothesis), and the cross-attention keys/values of the encoder output (computed once,
    stored once per source)."""

    self_k: tuple[Tensor, ...]  # L × (N, H, t, d)
    self_v: tuple[Tensor, ...]
    cross_k: tuple[Tensor, ...]  # L × (S, H, Ls, d), once per source
    cross_v: tuple[Tensor, ...]
    src_mask: Tensor  # (S, 1, 1, Ls), True at real source tokens
    length: int  # tokens fed so far (the next position)
    group: int  # rows per source: N = S · group, each source's rows consecutive
    # row i of the self-attention caches is row pending[i] of the stored ones; applied by the
    # next step while it appends, so a reorder costs one copy of the cache, not two
    pending: Tensor | None = None


class Seq2SeqTransformer(nn.Module):
    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        if config.dim % config.n_heads:
            raise ValueError(
                f"dim must be a multiple of n_heads. Got {config.dim}, {config.n_heads}."
            )
        self.config = config
        self.eos_index = config.eos_index
        self.pad_index = config.pad_index
        self.encoder = Stack(config, config.n_enc_layers, is_decoder=False)
        self.decoder = Stack(config, config.n_dec_layers, is_decoder=True)

    # -- training and teacher-forced scoring ----------------------------------------------

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        """src (B, Ls), `pad_index` after the end → encoder output (B, Ls, D), mask (B,1,1,Ls)."""
        enc = self.encoder
        mask = (src != self.pad_index)[:, None, None, :]
        x = enc.embed(src)
        for i, attention in enumerate(enc.attentions):
            k, v = attention.keys_values(x)
            x = enc.residual(x, attention.attend(x, k, v, mask, causal=False), enc.layer_norm1[i])
            x = enc.ffn(i, x)
        return x, mask

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """Teacher-forced next-token logits (B, T, V) for decoder inputs tgt_in (B, T), which
        start with the BOS (= EOS) token; positions after a target's end are ignored."""
        memory, mask = self.encode(src)
        dec = self.decoder
        x = dec.embed(tgt_in)
        for i, attention in enumerate(dec.attentions):
            k, v = attention.keys_values(x)
            x = dec.residual(x, attention.attend(x, k, v, None, causal=True), dec.layer_norm1[i])
            ck, cv = dec.encoder_attn[i].keys_values(memory)
            cross = dec.encoder_attn[i].attend(x, ck, cv, mask, causal=False)
            x = dec.ffn(i, dec.residual(x, cross, dec.layer_norm15[i]))
        return dec.proj(x)

    # -- incremental decoding (`genprobe.decoding`) ----------------------------------------

    def start(self, src: Tensor, max_len: int | None = None) -> tuple[DecoderState, Tensor]:
        """Encode src (B, Ls); the empty decoder state and the BOS tokens (B,). Any number of
        steps may follow (`max_len` is for models that need to know)."""
        memory, mask = self.encode(src)
        cross = [attention.keys_values(memory) for attention in self.decoder.encoder_attn]
        empty = memory.new_zeros(
            src.shape[0], self.config.n_heads, 0, self.config.dim // self.config.n_heads
        )
        n = len(cross)
        state = DecoderState(
            (empty,) * n,
            (empty,) * n,
            tuple(k for k, _ in cross),
            tuple(v for _, v in cross),
            mask,
            length=0,
            group=1,
        )
        return state, torch.full((src.shape[0],), self.eos_index, device=src.device)

    def step(self, state: DecoderState, token: Tensor) -> tuple[Tensor, DecoderState]:
        """Feed token (N,); next-token logits (N, V) and the state with it cached."""
        dec = self.decoder
        x = dec.embed(token[:, None], start=state.length)  # (N, 1, D)
        self_k, self_v = [], []
        for i, attention in enumerate(dec.attentions):
            k, v = attention.keys_values(x)
            k = _append(state.self_k[i], k, state.pending)  # (N, H, t + 1, d)
            v = _append(state.self_v[i], v, state.pending)
            self_k.append(k)
            self_v.append(v)
            x = dec.residual(x, attention.attend(x, k, v, None, causal=False), dec.layer_norm1[i])
            cross = dec.encoder_attn[i].attend_grouped(
                x, state.cross_k[i], state.cross_v[i], state.src_mask, state.group
            )
            x = dec.ffn(i, dec.residual(x, cross, dec.layer_norm15[i]))
        new = replace(
            state, self_k=tuple(self_k), self_v=tuple(self_v), length=state.length + 1,
            pending=None,
        )  # fmt: skip
        return dec.proj(x[:, 0]), new

    def expand(self, state: DecoderState, n: int) -> DecoderState:
        """Each row becomes n consecutive rows (a source's beams or samples)."""
        rows = torch.arange(len(state.src_mask) * state.group, device=state.src_mask.device)
        return replace(self.reorder(state, rows.repeat_interleave(n)), group=state.group * n)

    def reorder(self, state: DecoderState, index: Tensor) -> DecoderState:
        """Row i continues row index[i]'s prefix. Rows keep their source, so the cross-attention
        cache stays where it is (L&C re-index it at every step)."""
        pending = index if state.pending is None else state.pending.index_select(0, index)
        return replace(state, pending=pending)

    def keep(self, state: DecoderState, sources: Tensor) -> DecoderState:
        """Only the rows of `sources` (indices among the current sources), in that order."""
        g = state.group
        rows = (sources[:, None] * g + torch.arange(g, device=sources.device)).view(-1)
        return replace(
            self.reorder(state, rows),
            cross_k=tuple(k.index_select(0, sources) for k in state.cross_k),
            cross_v=tuple(v.index_select(0, sources) for v in state.cross_v),
            src_mask=state.src_mask.index_select(0, sources),
        )


def pad_sequences(sequences: Sequence[Sequence[int]], pad: int) -> Tensor:
    """Token id sequences → one (B, longest) LongTensor, `pad` after each end."""
    rows = [torch.as_tensor(sequence, dtype=torch.long) for sequence in sequences]
    return nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=pad)


def _append(cache: Tensor, new: Tensor, rows: Tensor | None) -> Tensor:
    """cache (N0, H, t, d) with rows picked by `rows` (N,), then new (N, H, 1, d) appended."""
    if rows is None:
        return torch.cat([cache, new], dim=2)
    n, heads, _, d = new.shape
    out = cache.new_empty(n, heads, cache.shape[2] + 1, d)
    torch.index_select(cache, 0, rows, out=out[:, :, :-1])
    out[:, :, -1:] = new
    return out
