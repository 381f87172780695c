"""One transformer member written the plain torch.nn way, to check and to time the stacked one.

`NNTransformer` is what a researcher would write for one seed of `StackedTransformer` with
sinusoidal positions: embeddings + sinusoidal positions, `nn.TransformerEncoder` /
`nn.TransformerDecoder` of pre-LN GELU layers (`norm_first=True`, `batch_first=True`) with a
final LayerNorm, and an output `nn.Linear`. Decoder-only is an `nn.TransformerEncoder` read
causally over (input, BOS, output). `load_member` copies member k of a stacked model into it,
after which both compute the same logits (tests/models/test_transformer_reference.py).

Not the same when training with dropout: torch.nn also drops attention weights and the
feed-forward's hidden units, the stacked model only each sublayer's output and the embeddings.

Used by `benchmarks/transformer_throughput.py` (imported by path) as its baseline.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from genprobe.data.seq2seq import PAD
from genprobe.models.architectures import ModelShape
from genprobe.models.architectures.transformer import StackedTransformer, TransformerSeedConfig


def sinusoid_table(n: int, width: int) -> Tensor:
    """(n, width): PE[p, 2i] = sin(p / 10000^(2i/width)), PE[p, 2i+1] = cos(…) (Vaswani)."""
    position = torch.arange(n, dtype=torch.float32).unsqueeze(1)
    rate = torch.exp(torch.arange(0, width, 2, dtype=torch.float32) * (-math.log(10_000.0) / width))
    table = torch.zeros(n, width)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate)
    return table


class NNTransformer(nn.Module):
    """One member: forward(src (B, Ls), tgt_in (B, T)) → logits (B, T, V)."""

    def __init__(self, c: TransformerSeedConfig, shape: ModelShape, max_len: int = 512) -> None:
        super().__init__()
        if c.positions != "sinusoidal" or c.random_positions:
            raise ValueError(f"NNTransformer has sinusoidal positions only. Got {c.positions}.")
        self.config = c
        layer = {
            "d_model": c.width,
            "nhead": c.heads,
            "dim_feedforward": c.ffn,
            "dropout": c.dropout,
            "activation": "gelu",
            "batch_first": True,
            "norm_first": True,
        }
        self.src_emb = nn.Embedding(shape.src_vocab, c.width)
        self.tgt_emb = nn.Embedding(shape.tgt_vocab, c.width)
        self.register_buffer("positions", sinusoid_table(max_len, c.width), persistent=False)
        self.drop = nn.Dropout(c.dropout)
        if c.decoder_only:  # the one stack is an encoder read causally
            self.decoder = _encoder(layer, c)
        else:
            self.encoder = _encoder(layer, c)
            self.decoder = nn.TransformerDecoder(
                nn.TransformerDecoderLayer(**layer), c.layers, norm=nn.LayerNorm(c.width)
            )
        self.gen = nn.Linear(c.width, shape.tgt_vocab)

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        (b, ls), t = src.shape, tgt_in.shape[1]
        pad = src == PAD  # (B, Ls)
        if self.config.decoder_only:
            # The output's positions go on right after the input's last real token.
            out_pos = pad.logical_not().sum(1, keepdim=True) + torch.arange(t, device=src.device)
            x = torch.cat([self.src_emb(src), self.tgt_emb(tgt_in)], dim=1)
            pos = torch.cat([self.positions[:ls].expand(b, -1, -1), self.positions[out_pos]], 1)
            x = self.drop(x + pos)
            causal = _future(ls + t, src.device)
            key_pad = torch.cat([pad, pad.new_zeros(b, t)], dim=1)
            x = self.decoder(x, mask=causal, src_key_padding_mask=key_pad, is_causal=True)
            return self.gen(x[:, ls:])
        memory = self.encoder(
            self.drop(self.src_emb(src) + self.positions[:ls]), src_key_padding_mask=pad
        )
        y = self.drop(self.tgt_emb(tgt_in) + self.positions[:t])
        causal = _future(t, src.device)
        y = self.decoder(
            y, memory, tgt_mask=causal, tgt_is_causal=True, memory_key_padding_mask=pad
        )
        return self.gen(y)

    @torch.no_grad()
    def load_member(self, stacked: StackedTransformer, k: int) -> NNTransformer:
        """Copy member k's weights in; returns self."""
        w = stacked.member_state(k)
        heads = self.config.heads
        self.src_emb.weight.copy_(w["src_emb"])
        self.tgt_emb.weight.copy_(w["tgt_emb"])
        _linear(self.gen, w, "gen")
        sides = [("dec", self.decoder)]
        if not self.config.decoder_only:
            sides.insert(0, ("enc", self.encoder))
        for side, stack in sides:
            _norm(stack.norm, w, f"{side}_ln")
            for i, layer in enumerate(stack.layers):
                p = f"{side}{i}"
                _norm(layer.norm1, w, f"{p}_ln1")
                _attention(layer.self_attn, w, [f"{p}_qkv"], heads, 3)
                _linear(layer.self_attn.out_proj, w, f"{p}_out")
                ffn_norm = layer.norm2
                if isinstance(layer, nn.TransformerDecoderLayer):
                    _norm(layer.norm2, w, f"{p}_lnx")
                    _attention(layer.multihead_attn, w, [f"{p}_xq", f"{p}_xkv"], heads, 2)
                    _linear(layer.multihead_attn.out_proj, w, f"{p}_xout")
                    ffn_norm = layer.norm3
                _norm(ffn_norm, w, f"{p}_ln2")
                _linear(layer.linear1, w, f"{p}_ff1")
                _linear(layer.linear2, w, f"{p}_ff2")
        return self


def _future(n: int, device: torch.device) -> Tensor:
    """(n, n) True where a query may not read a key: the ones after it."""
    return torch.ones(n, n, dtype=torch.bool, device=device).triu(1)


def _encoder(layer: dict, c: TransformerSeedConfig) -> nn.TransformerEncoder:
    return nn.TransformerEncoder(
        nn.TransformerEncoderLayer(**layer),
        c.layers,
        norm=nn.LayerNorm(c.width),
        enable_nested_tensor=False,  # not with norm_first; says so in a warning otherwise
    )


def _linear(linear: nn.Linear, w: dict[str, Tensor], name: str) -> None:
    """Stacked (in, out) and (1, out) → nn's (out, in) and (out,)."""
    linear.weight.copy_(w[f"{name}_w"].T)
    linear.bias.copy_(w[f"{name}_b"].squeeze(0))


def _norm(norm: nn.LayerNorm, w: dict[str, Tensor], name: str) -> None:
    norm.weight.copy_(w[f"{name}_w"].squeeze(0))
    norm.bias.copy_(w[f"{name}_b"].squeeze(0))


def _attention(
    attn: nn.MultiheadAttention, w: dict[str, Tensor], names: list[str], heads: int, parts: int
) -> None:
    """nn's in_proj is [Wq; Wk; Wv] (3D, D). The stacked `qkv` (D, 3D) and `xkv` (D, 2D) are
    split into heads before q, k, v: their columns are head-major, (N, parts, E); `xq` is
    q alone. Self-attention: names [qkv], parts 3; cross-attention: [xq, xkv], parts 2."""
    weight = torch.cat([w[f"{name}_w"] for name in names], dim=1)  # (D, 3D)
    bias = torch.cat([w[f"{name}_b"] for name in names], dim=1)  # (1, 3D)

    def nn_order(x: Tensor) -> Tensor:  # (rows, 3D) → (rows, 3D) as [q | k | v]
        rows, d = x.shape[0], x.shape[1] // 3
        if parts == 3:  # (rows, N, 3, E) → (rows, 3, N, E)
            return x.view(rows, heads, 3, -1).transpose(1, 2).reshape(rows, -1)
        q, kv = x[:, :d], x[:, d:].view(rows, heads, 2, -1).transpose(1, 2).reshape(rows, -1)
        return torch.cat([q, kv], dim=1)

    attn.in_proj_weight.copy_(nn_order(weight).T)
    attn.in_proj_bias.copy_(nn_order(bias).squeeze(0))
