"""Transformer seq2seq, S independent members in one set of tensors (as `architectures.recurrent`).

Two layouts: encoder-decoder (Vaswani et al., 2017) and decoder-only, where the input and the
output are one sequence (input, BOS, output) read causally and only the output is scored
(Zhou et al., 2024). Both are pre-LayerNorm with a final LayerNorm, GELU feed-forward layers,
and dropout on the embeddings and on each sublayer's output before it is added back.

Position encodings (`positions`): `sinusoidal` and `learned` are added to the embeddings,
`rope` rotates queries and keys (Su et al., 2021), `alibi` adds -slope·distance to the
attention scores (Press et al., 2022, geometric slopes 2^(-8i/h)), `none` gives no position.
Rotary and ALiBi act in self-attention only. `random_positions = R > 0` draws each sequence's
positions as a sorted random subset of 0..R-1 instead of 0..n-1 (Ruoss et al., 2023): in
training from the member's noise stream; in evaluation, as Ruoss et al.'s code does, too, from
a hash of the example, so that an output does not depend on the examples decoded beside it.

Every weight has a leading member axis S, member k is drawn from its own seed, and no
operation mixes members, so S seeds train as one model (`training.trainer`). Shapes: S
members, B examples, Ls source and T target positions, D width, N heads, F feed-forward width.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from genprobe.data.seq2seq import BOS, PAD
from genprobe.errors import ConfigError, check_choice
from genprobe.models.architectures.base import Architecture, ModelShape, fit_positions
from genprobe.models.member_stack import MemberStack, biased_bmm, scale_shift

POSITIONS = ("sinusoidal", "learned", "rope", "alibi", "none")
INIT_STD = 0.02  # GPT-2's normal initialization of every weight matrix and embedding
ATTENTION_MEMBERS = 16  # members per attention matmul on CUDA (`matmul_attention`)
# The most attention scores (heads x input x input) a member computes for one example at once,
# 512 MiB of floats: reading its input attends every input position to every other, so an
# input of 150,000 tokens would need 360 GB, and no table of positions bounds a sinusoidal,
# rotary or ALiBi transformer's input.
MAX_ATTENTION_SCORES = 1 << 27


@dataclass(frozen=True)
class TransformerSeedConfig(Architecture):
    member_format: ClassVar[str] = "genprobe.transformer/1"

    # The defaults are those `genprobe sweep --arch transformer` always had.
    width: int = 32
    heads: int = 4
    layers: int = 1  # in the encoder and in the decoder (decoder-only: in the one stack)
    ffn: int = 256  # feed-forward width
    dropout: float = 0.1
    decoder_only: bool = False
    positions: str = "sinusoidal"
    random_positions: int = 0  # R > 0: positions drawn from 0..R-1
    max_positions: int = 2048  # the learned table's size; positions at or past it are refused

    def __post_init__(self) -> None:
        check_choice("positions", self.positions, POSITIONS)
        for name in ("width", "heads", "layers", "ffn", "max_positions"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        if self.width % self.heads:
            raise ConfigError("heads", f"a divisor of the width {self.width}", self.heads)
        if self.positions == "rope" and (self.width // self.heads) % 2:
            raise ConfigError(
                "heads", "a count that leaves an even width per head (rope)", self.heads
            )
        if not isinstance(self.random_positions, int) or self.random_positions < 0:
            raise ConfigError("random_positions", "an integer >= 0", self.random_positions)
        if self.random_positions and self.positions == "none":
            raise ConfigError("random_positions", "0 when positions is none", self.random_positions)
        if self.positions == "learned" and self.random_positions > self.max_positions:
            raise ConfigError(
                "random_positions", f"<= max_positions {self.max_positions}", self.random_positions
            )
        if not 0 <= self.dropout < 1:
            raise ConfigError("dropout", "in [0, 1)", self.dropout)

    def describe(self) -> str:
        layers = f"{self.layers}-layer " if self.layers > 1 else ""
        layout = "decoder-only" if self.decoder_only else "encoder-decoder"
        positions = f"{self.positions} positions"
        if self.random_positions:
            positions = f"randomized {positions} (drawn from 0..{self.random_positions - 1})"
        return (
            f"{layers}{layout} transformer with {positions} (width {self.width}, "
            f"{self.heads} heads, feed-forward {self.ffn}, dropout {self.dropout})"
        )

    def model_class(self) -> type[StackedTransformer]:
        return StackedTransformer

    def takes(self, shape: ModelShape, src_len: np.ndarray, out_len: np.ndarray) -> np.ndarray:
        """Positions are drawn from 0..R-1 (random positions) or looked up in a learned table:
        input and output together (decoder-only) or each on its side must fit in them; and the
        input's attention scores in `MAX_ATTENTION_SCORES`."""
        limit = self.random_positions or (self.max_positions if self.positions == "learned" else 0)
        scores = self.heads * np.asarray(src_len, dtype=np.int64) ** 2
        return fit_positions(src_len, out_len, limit, self.decoder_only) & (
            scores <= MAX_ATTENTION_SCORES
        )

    def decode_footprint(self, input_length: int) -> int:
        return input_length * self.width * 2 * self.layers  # keys and values of every layer


def _shapes(c: TransformerSeedConfig, shape: ModelShape) -> dict[str, tuple[int, ...]]:
    d, f = c.width, c.ffn
    shapes: dict[str, tuple[int, ...]] = {
        "src_emb": (shape.src_vocab, d),
        "tgt_emb": (shape.tgt_vocab, d),
    }
    if c.positions == "learned":
        shapes["pos_emb"] = (c.max_positions, d)

    def norm(name: str) -> None:
        shapes.update({f"{name}_w": (1, d), f"{name}_b": (1, d)})

    def linear(name: str, n_in: int, n_out: int) -> None:
        shapes.update({f"{name}_w": (n_in, n_out), f"{name}_b": (1, n_out)})

    sides = ("dec",) if c.decoder_only else ("enc", "dec")
    for side in sides:
        for layer in range(c.layers):
            p = f"{side}{layer}"
            norm(f"{p}_ln1")
            linear(f"{p}_qkv", d, 3 * d)
            linear(f"{p}_out", d, d)
            if side == "dec" and not c.decoder_only:
                norm(f"{p}_lnx")
                linear(f"{p}_xq", d, d)
                linear(f"{p}_xkv", d, 2 * d)
                linear(f"{p}_xout", d, d)
            norm(f"{p}_ln2")
            linear(f"{p}_ff1", d, f)
            linear(f"{p}_ff2", f, d)
        norm(f"{side}_ln")
    linear("gen", d, shape.tgt_vocab)
    return shapes


@dataclass(frozen=True)
class TransformerState:
    """What incremental decoding carries from step to step."""

    keys: tuple[Tensor, ...]  # per layer (S, B, N, t, D/N): self-attention keys so far
    values: tuple[Tensor, ...]
    real: Tensor  # (S, B, t): which keys so far are not padding
    key_pos: Tensor  # (S, B, t): their positions
    tgt_pos: Tensor  # (S, B, max_len): the positions of the output tokens
    # Encoder-decoder: per layer the encoder's keys and values, and which are real (S, B, Ls).
    cross: tuple[tuple[Tensor, Tensor, Tensor], ...]
    step: int


class StackedTransformer(MemberStack):
    """S transformer members; parameter `name` has shape (S, *shape) for each of `_shapes`."""

    shapes = staticmethod(_shapes)

    @classmethod
    def initialized(
        cls, config: TransformerSeedConfig, shape: ModelShape, seeds: Sequence[int]
    ) -> StackedTransformer:
        """Member k drawn from `torch.Generator().manual_seed(seeds[k])`: weights and
        embeddings normal(0, 0.02), biases 0, LayerNorm gains 1."""
        model = cls(config, shape, len(seeds))
        with torch.no_grad():
            for k, seed in enumerate(seeds):
                generator = torch.Generator().manual_seed(seed)
                for name, param in model.named_parameters():
                    if "_ln" in name and name.endswith("_w"):
                        param[k].fill_(1.0)
                    elif name.endswith("_b"):
                        param[k].zero_()
                    else:
                        param[k].normal_(0.0, INIT_STD, generator=generator)
        return model

    # -- the random draws of a training step ------------------------------------------------

    def noise_shapes(self, batch: int, src_len: int, tgt_len: int) -> dict[str, tuple[int, ...]]:
        """Per member, the uniform draws one training step takes, by name, in draw order:
        dropout masks, then randomized positions."""
        c, d = self.config, self.config.width
        shapes: dict[str, tuple[int, ...]] = {}
        if c.dropout:
            if c.decoder_only:
                stacks = {"dec": (src_len + tgt_len, ("attn", "ffn"))}
            else:
                stacks = {"enc": (src_len, ("attn", "ffn")), "dec": (tgt_len, ("attn", "x", "ffn"))}
            for side, (length, parts) in stacks.items():
                shapes[f"{side}_emb"] = (batch, length, d)
                for layer in range(c.layers):
                    for part in parts:
                        shapes[f"{side}{layer}_{part}"] = (batch, length, d)
        if c.random_positions:
            for side in ("dec",) if c.decoder_only else ("enc", "dec"):
                shapes[f"{side}_pos"] = (batch, c.random_positions)
        return shapes

    # -- building blocks --------------------------------------------------------------------

    def _linear(self, name: str, x: Tensor) -> Tensor:
        """(S, B, L, in) @ (S, in, out) + (S, 1, out) → (S, B, L, out), one batched matmul."""
        s, b, t, _ = x.shape
        weight, bias = getattr(self, f"{name}_w"), getattr(self, f"{name}_b")
        return biased_bmm(bias, x.reshape(s, b * t, -1), weight).view(s, b, t, -1)

    def _norm(self, name: str, x: Tensor) -> Tensor:
        weight, bias = getattr(self, f"{name}_w"), getattr(self, f"{name}_b")
        return scale_shift(F.layer_norm(x, x.shape[-1:]), weight, bias)

    def _heads(self, x: Tensor) -> Tensor:
        """(S, B, L, D) → (S, B, N, L, D/N)."""
        s, b, t, _ = x.shape
        return x.view(s, b, t, self.config.heads, -1).transpose(2, 3)

    def _attention(
        self, q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, bias: Tensor | None
    ) -> Tensor:
        """Softmax attention of q (S, B, N, Lq, E) over the keys and values k, v (S, B, N, Lk, E)
        that `allowed` (broadcast to (S, B, N, Lq, Lk)) lets each query read; heads merged
        back: (S, B, Lq, D)."""
        # ALiBi's bias is not scaled by 1/sqrt(E) (Press et al.), and is added as a float mask.
        mask = allowed if bias is None else bias.masked_fill(~allowed, float("-inf"))
        if q.is_cuda:
            out = matmul_attention(q, k, v, mask)
        else:
            # The fused kernel: no (Lq, Lk) score tensor held for the backward pass.
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (S, B, N, Lq, E)
        s, b, _, t, _ = out.shape
        return out.transpose(2, 3).reshape(s, b, t, -1)

    def _rotate(self, x: Tensor, pos: Tensor) -> Tensor:
        """Rotary encoding of x (S, B, N, L, E) at positions pos (S, B, L)."""
        half = x.shape[-1] // 2
        freq = 10_000.0 ** (-torch.arange(half, device=x.device, dtype=x.dtype) / half)
        angle = pos[:, :, None, :, None].to(x.dtype) * freq  # (S, B, 1, L, E/2)
        cos, sin = angle.cos(), angle.sin()
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def _alibi(self, q_pos: Tensor, k_pos: Tensor) -> Tensor:
        """-slope_n · |q - k| (S, B, N, Lq, Lk) from positions (S, B, Lq) and (S, B, Lk)."""
        heads = self.config.heads
        slopes = 2.0 ** (-8.0 * torch.arange(1, heads + 1, device=q_pos.device) / heads)
        distance = (q_pos[:, :, None, :, None] - k_pos[:, :, None, None, :]).abs()
        return distance.float() * -slopes.view(1, 1, -1, 1, 1)

    def _layer(
        self,
        p: str,
        x: Tensor,
        pos: Tensor,
        allowed: Tensor,
        drop: Dropout,
        past: tuple[Tensor, Tensor, Tensor] | None = None,
        cross: tuple[Tensor, Tensor, Tensor] | None = None,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """One pre-LN block on x (S, B, L, D) at positions pos (S, B, L): self-attention (over
        `past` = earlier (keys, values, positions) and x), cross-attention on `cross` = the
        encoder's (keys, values, real), feed-forward. Returns x and all self-attention keys
        and values."""
        q, k, v = self._heads(self._linear(f"{p}_qkv", self._norm(f"{p}_ln1", x))).chunk(3, -1)
        if self.config.positions == "rope":
            q, k = self._rotate(q, pos), self._rotate(k, pos)
        key_pos = pos
        if past is not None:
            k, v = torch.cat([past[0], k], dim=3), torch.cat([past[1], v], dim=3)
            key_pos = torch.cat([past[2], pos], dim=2)
        bias = self._alibi(pos, key_pos) if self.config.positions == "alibi" else None
        x = x + drop(f"{p}_attn", self._linear(f"{p}_out", self._attention(q, k, v, allowed, bias)))
        if cross is not None:
            xq = self._heads(self._linear(f"{p}_xq", self._norm(f"{p}_lnx", x)))
            context = self._attention(xq, cross[0], cross[1], cross[2][:, :, None, None], None)
            x = x + drop(f"{p}_x", self._linear(f"{p}_xout", context))
        hidden = F.gelu(self._linear(f"{p}_ff1", self._norm(f"{p}_ln2", x)))
        return x + drop(f"{p}_ffn", self._linear(f"{p}_ff2", hidden)), k, v

    def _cross(self, p: str, enc: Tensor, src_real: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        k, v = self._heads(self._linear(f"{p}_xkv", enc)).chunk(2, dim=-1)
        return k, v, src_real

    # -- positions ---------------------------------------------------------------------------

    def _positions(self, n: int, draw: Tensor | None, lead: tuple[int, int]) -> Tensor:
        """(S, B, n) positions: 0..n-1, or per row the sorted n smallest of `draw`'s (S, B, R)
        uniforms' indices: a sorted random subset of 0..R-1."""
        c = self.config
        if not c.random_positions:
            if c.positions == "learned" and n > c.max_positions:
                raise ConfigError("max_positions", f">= {n} (positions needed)", c.max_positions)
            return torch.arange(n, device=self.src_emb.device).expand(*lead, n)
        if n > c.random_positions:
            raise ConfigError("random_positions", f">= {n} (positions needed)", c.random_positions)
        assert draw is not None
        return torch.topk(draw, n, dim=-1, largest=False).indices.sort(dim=-1).values

    def _draw(self, noise: Mapping[str, Tensor], name: str, src: Tensor) -> Tensor | None:
        """The uniforms (S, B, R) that pick the positions `name` ("enc_pos" or "dec_pos") of
        src (S, B, Ls): the training step's, or in evaluation a hash of each example."""
        if name in noise or not self.config.random_positions:
            return noise.get(name)
        salt = ("enc_pos", "dec_pos").index(name)
        draw = example_uniforms(src[0].cpu().numpy(), self.config.random_positions, salt)
        return torch.from_numpy(draw).to(src.device).expand(src.shape[0], -1, -1)

    # -- training ----------------------------------------------------------------------------

    def forward(
        self, src: Tensor, tgt_in: Tensor, noise: Mapping[str, Tensor] | None = None
    ) -> Tensor:
        """Teacher-forced states (S, B, T, D) that `logits` reads, for src (S, B, Ls) and
        tgt_in (S, B, T); `noise`: the uniforms named by `noise_shapes` (None: evaluation)."""
        noise = noise or {}
        drop = _dropout(noise, self.config.dropout)
        (s, b, ls), t = src.shape, tgt_in.shape[2]
        src_real = src != PAD
        if self.config.decoder_only:
            draw = self._draw(noise, "dec_pos", src)
            pos = self._sequence_positions(src_real, t, draw)
            x = torch.cat([self._embed(self.src_emb, src), self._embed(self.tgt_emb, tgt_in)], 2)
            x = drop("dec_emb", x + self._position_vectors(pos))
            real = torch.cat([src_real, src_real.new_ones(s, b, t)], dim=2)
            allowed = _causal(ls + t, src.device, real)
            for layer in range(self.config.layers):
                x = self._layer(f"dec{layer}", x, pos, allowed, drop)[0]
            return self._norm("dec_ln", x[:, :, ls:])
        enc = self._encode(src, self._draw(noise, "enc_pos", src), drop)
        pos = self._positions(t, self._draw(noise, "dec_pos", src), (s, b))
        y = drop("dec_emb", self._embed(self.tgt_emb, tgt_in) + self._position_vectors(pos))
        allowed = _causal(t, src.device)
        for layer in range(self.config.layers):
            cross = self._cross(f"dec{layer}", enc, src_real)
            y = self._layer(f"dec{layer}", y, pos, allowed, drop, cross=cross)[0]
        return self._norm("dec_ln", y)

    def _encode(self, src: Tensor, draw: Tensor | None, drop: Dropout) -> Tensor:
        s, b, ls = src.shape
        pos = self._positions(ls, draw, (s, b))
        x = drop("enc_emb", self._embed(self.src_emb, src) + self._position_vectors(pos))
        allowed = (src != PAD)[:, :, None, None, :]
        for layer in range(self.config.layers):
            x = self._layer(f"enc{layer}", x, pos, allowed, drop)[0]
        return self._norm("enc_ln", x)

    def _sequence_positions(self, src_real: Tensor, t: int, draw: Tensor | None) -> Tensor:
        """Decoder-only: positions (S, B, Ls + T) of the input's slots and then the output's,
        the output going on right after the input's last real token."""
        s, b, ls = src_real.shape
        base = self._positions(ls + t, draw, (s, b))
        after = src_real.sum(-1, keepdim=True) + torch.arange(t, device=base.device)
        slots = torch.cat([torch.arange(ls, device=base.device).expand(s, b, ls), after], dim=2)
        return base.gather(2, slots)

    def _position_vectors(self, pos: Tensor) -> Tensor | float:
        """What is added to the embeddings at positions pos (S, B, L): a vector or 0."""
        c = self.config
        if c.positions == "learned":
            return self._embed(self.pos_emb, pos)
        if c.positions == "sinusoidal":
            return sinusoid(pos, c.width)
        return 0.0

    # -- incremental decoding (see `genprobe.decoding.greedy`) -------------------------------

    def start(self, src: Tensor, max_len: int | None = None) -> tuple[TransformerState, Tensor]:
        """Read src (B, Ls), the same inputs for every member, for up to `max_len` output
        tokens (needed: the output's positions are laid out here): the state and BOS (S, B)."""
        if max_len is None:
            raise ValueError("StackedTransformer.start needs max_len")
        src = src.unsqueeze(0).expand(self.members, -1, -1)
        (s, b, ls), layers = src.shape, self.config.layers
        src_real = src != PAD
        off = _dropout({}, 0.0)
        if self.config.decoder_only:
            draw = self._draw({}, "dec_pos", src)
            pos = self._sequence_positions(src_real, max_len, draw)
            x = self._embed(self.src_emb, src) + self._position_vectors(pos[:, :, :ls])
            allowed, keys, values = _causal(ls, src.device, src_real), [], []
            for layer in range(layers):
                x, k, v = self._layer(f"dec{layer}", x, pos[:, :, :ls], allowed, off)
                keys.append(k)
                values.append(v)
            state = TransformerState(
                tuple(keys), tuple(values), src_real, pos[:, :, :ls], pos[:, :, ls:], (), 0
            )
        else:
            enc = self._encode(src, self._draw({}, "enc_pos", src), off)
            empty = enc.new_zeros(
                s, b, self.config.heads, 0, self.config.width // self.config.heads
            )
            no_keys = src_real.new_zeros(s, b, 0)
            state = TransformerState(
                (empty,) * layers,
                (empty,) * layers,
                no_keys,
                no_keys.long(),
                self._positions(max_len, self._draw({}, "dec_pos", src), (s, b)),
                tuple(self._cross(f"dec{layer}", enc, src_real) for layer in range(layers)),
                0,
            )
        return state, torch.full((s, b), BOS, device=src.device)

    def step(self, state: TransformerState, token: Tensor) -> tuple[Tensor, TransformerState]:
        """Feed token (S, B); return next-token logits (S, B, V) and the new state."""
        pos = state.tgt_pos[:, :, state.step : state.step + 1]
        y = self._embed(self.tgt_emb, token.unsqueeze(2)) + self._position_vectors(pos)
        real = torch.cat([state.real, state.real.new_ones(*token.shape, 1)], dim=2)
        allowed = real[:, :, None, None, :]
        off, keys, values = _dropout({}, 0.0), [], []
        for layer in range(self.config.layers):
            past = (state.keys[layer], state.values[layer], state.key_pos)
            cross = state.cross[layer] if state.cross else None
            y, k, v = self._layer(f"dec{layer}", y, pos, allowed, off, past, cross)
            keys.append(k)
            values.append(v)
        logits = self.logits(self._norm("dec_ln", y)).squeeze(2)
        key_pos = torch.cat([state.key_pos, pos], dim=2)
        new = TransformerState(
            tuple(keys), tuple(values), real, key_pos, state.tgt_pos, state.cross, state.step + 1
        )
        return logits, new


Dropout = Callable[[str, Tensor], Tensor]


def _dropout(noise: Mapping[str, Tensor], p: float) -> Dropout:
    """x ↦ x scaled by the dropout mask of `noise[name]` (uniforms), or x if there is none."""

    def drop(name: str, x: Tensor) -> Tensor:
        u = noise.get(name)
        return x if u is None else x * u.ge(p).to(x.dtype).mul_(1 / (1 - p))

    return drop


def _causal(n: int, device: torch.device, real: Tensor | None = None) -> Tensor:
    """Which keys each of n queries may read: the ones at or before it, and if `real` (S, B, n)
    is given only real ones (and always itself, so that no row is empty); broadcastable to
    (S, B, N, n, n)."""
    causal = torch.ones(n, n, dtype=torch.bool, device=device).tril()
    if real is None:
        return causal
    itself = torch.eye(n, dtype=torch.bool, device=device)
    return causal & (real[:, :, None, None, :] | itself)


def matmul_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
    """`F.scaled_dot_product_attention(q, k, v, attn_mask=mask)` as plain matmuls over
    `ATTENTION_MEMBERS` members at a time, a smaller last group padded.

    On CUDA the result of a batched matmul depends on how many matrices it holds (members ×
    examples × heads; from ~200 members its kernels round differently than for 16 on an H200)
    and may depend on their strides; the fused kernels split their backward pass by the batch
    too. Groups of one size and one layout (contiguous: the padded group is built by
    concatenation) keep each member's arithmetic what it is alone, in a stack of 16 lanes
    (`training.trainer`; docs/gpu.md)."""
    q, k, v = (t.contiguous() for t in (q, k, v))
    mask = mask.expand(*q.shape[:-1], k.shape[-2])
    outputs = []
    for start in range(0, q.shape[0], ATTENTION_MEMBERS):
        group = [t[start : start + ATTENTION_MEMBERS] for t in (q, k, v, mask)]
        missing = ATTENTION_MEMBERS - len(group[0])
        if missing:
            group = [torch.cat([t, t.new_ones(missing, *t.shape[1:])]) for t in group]
        outputs.append(_attend(*group)[: ATTENTION_MEMBERS - missing])
    return torch.cat(outputs)


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    if mask.dtype != torch.bool:
        return torch.softmax(scores + mask, dim=-1) @ v
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ v


def sinusoid(pos: Tensor, width: int) -> Tensor:
    """Vaswani et al.'s encoding of positions pos (...) → (..., width): sines in the even
    dimensions, cosines in the odd."""
    rate = torch.exp(torch.arange(0, width, 2, device=pos.device) * (-math.log(10_000.0) / width))
    angle = pos.unsqueeze(-1).float() * rate
    return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(-2)


_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _MIX[0]
    z = (z ^ (z >> np.uint64(27))) * _MIX[1]
    return z ^ (z >> np.uint64(31))


def example_uniforms(src: np.ndarray, count: int, salt: int) -> np.ndarray:
    """(B, count) float32 uniforms in [0, 1) that depend only on each row's real tokens
    (src (B, Ls), 0 = padding) and `salt`: SplitMix64 over a running hash of the tokens."""
    with np.errstate(over="ignore"):
        h = np.full(len(src), np.uint64(salt) * _GOLDEN, dtype=np.uint64)
        for column in np.asarray(src, dtype=np.uint64).T:
            h = np.where(column != 0, _splitmix(h ^ column), h)
        slots = np.arange(count, dtype=np.uint64) * _GOLDEN
        bits = _splitmix(h[:, None] + slots) >> np.uint64(40)
    return (bits.astype(np.float32) / np.float32(1 << 24)).astype(np.float32)
