"""Recurrent seq2seq with attention, S independent members in one set of tensors.

The default is Table 1 of Weber et al. (2018): one-layer unidirectional LSTM encoder and
decoder, embeddings and hidden size 32, Luong "general" (bilinear) attention, attentional
hidden state tanh(W_c [ctx; h]) → output layer, dropout on the input and output layers. The
paper leaves details open (see docs/rewriting.md, "Architecture variants"), so each is a
setting: the cell (LSTM or GRU), the number of stacked layers, the attention score (bilinear,
dot, mlp, or none), Luong input feeding, and the tanh attentional layer. With several layers,
layer l of the decoder starts from the final state of layer l of the encoder, dropout also
acts between layers (as `nn.LSTM(dropout=p)`), input feeding enters the first layer, and
attention reads the top one.

Every weight has a leading member axis S; member k is initialized from its own seed and never
mixes with another member, so S seeds train as one model (see `training.trainer`). Shapes in
comments: S members, B examples, Ls source and T target positions, E embedding, H hidden, V
target vocabulary, O the size of what the output layer reads (`RecurrentConfig.out_size`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import Tensor

from genprobe.data.seq2seq import BOS, PAD
from genprobe.errors import ConfigError, check_choice, finite
from genprobe.models.architectures.base import Architecture, ModelShape
from genprobe.models.cells import gru_cell, lstm_cell
from genprobe.models.member_stack import MemberStack, biased_bmm

CELLS = ("lstm", "gru")
ATTENTIONS = ("bilinear", "dot", "mlp", "none")


@dataclass(frozen=True)
class RecurrentConfig(Architecture):
    member_format: ClassVar[str] = "genprobe.lstm-seq2seq/1"  # its first name, for older runs

    emb: int = 32
    hidden: int = 32
    layers: int = 1  # stacked recurrent layers, in the encoder and in the decoder
    dropout: float = 0.1  # on the embeddings, between layers and on what the output layer reads
    init_range: float = 0.1  # weights start uniform in (-init_range, init_range)
    cell: str = "lstm"
    # Luong et al. (2015): bilinear = h_dec' W h_enc ("general"), dot = h_dec' h_enc,
    # mlp = v' tanh(W_q h_dec + W_k h_enc) (Bahdanau-style), none = no attention.
    attention: str = "bilinear"
    input_feeding: bool = False  # the decoder also reads the previous attentional state
    attention_layer: bool = True  # tanh(W_c [ctx; h]) before the output layer; else [ctx; h]

    def __post_init__(self) -> None:
        check_choice("cell", self.cell, CELLS)
        check_choice("attention", self.attention, ATTENTIONS)
        if self.input_feeding and self.attention == "none":
            raise ConfigError("input_feeding", "off when attention is none", True)
        for name in ("emb", "hidden", "layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        if not 0 <= self.dropout < 1:
            raise ConfigError("dropout", "in [0, 1)", self.dropout)
        if not (finite(self.init_range) and self.init_range > 0):
            raise ConfigError("init_range", "a finite number > 0", self.init_range)

    @property
    def gates(self) -> int:
        return (4 if self.cell == "lstm" else 3) * self.hidden

    @property
    def out_size(self) -> int:
        """The size of the attentional state that the output layer reads."""
        if self.attention_layer or self.attention == "none":
            return self.hidden
        return 2 * self.hidden

    def describe(self) -> str:
        layers = f"{self.layers}-layer " if self.layers > 1 else ""
        attention = "no attention" if self.attention == "none" else f"{self.attention} attention"
        extras = [
            "input feeding" if self.input_feeding else "",
            "" if self.attention_layer else "no tanh attentional layer",
        ]
        architecture = ", ".join(e for e in [attention, *extras] if e)
        return (
            f"{layers}{self.cell.upper()} seq2seq with {architecture} (embedding {self.emb}, "
            f"hidden {self.hidden}, dropout {self.dropout})"
        )

    def model_class(self) -> type[StackedSeq2Seq]:
        return StackedSeq2Seq

    def decode_footprint(self, input_length: int) -> int:
        return input_length * self.hidden  # the encoder's states that attention reads


def layer_name(side: str, layer: int) -> str:
    """The prefix of a layer's weights: `enc`/`dec` for the first, `enc1`, `dec1`, … above."""
    return side if layer == 0 else f"{side}{layer}"


# name → shape without the member axis; the order fixes how a member's seed fills them (the
# weights of layers above the first come after all others, so one layer draws as before).
def _shapes(c: RecurrentConfig, shape: ModelShape) -> dict[str, tuple[int, ...]]:
    e, h, g = c.emb, c.hidden, c.gates
    gru = c.cell == "gru"
    shapes: dict[str, tuple[int, ...]] = {
        "src_emb": (shape.src_vocab, e),
        "enc_w_ih": (e, g),
        "enc_w_hh": (h, g),
        "enc_b": (1, g),
        **({"enc_b_hh": (1, g)} if gru else {}),
        "tgt_emb": (shape.tgt_vocab, e),
        "dec_w_ih": (e, g),
        **({"dec_w_feed": (c.out_size, g)} if c.input_feeding else {}),
        "dec_w_hh": (h, g),
        "dec_b": (1, g),
        **({"dec_b_hh": (1, g)} if gru else {}),
    }
    if c.attention == "bilinear":
        shapes["attn_w"] = (h, h)
    elif c.attention == "mlp":
        shapes.update(attn_w_q=(h, h), attn_w_k=(h, h), attn_v=(h, 1))
    if c.attention_layer:
        if c.attention != "none":
            shapes["out_w_ctx"] = (h, h)  # W_c = [out_w_ctx; out_w_h]: two products, no concat
        shapes["out_w_h"] = (h, h)
    shapes.update(gen_w=(c.out_size, shape.tgt_vocab), gen_b=(1, shape.tgt_vocab))
    for side in ("enc", "dec"):
        for layer in range(1, c.layers):
            name = layer_name(side, layer)
            shapes.update({f"{name}_w_ih": (h, g), f"{name}_w_hh": (h, g), f"{name}_b": (1, g)})
            if gru:
                shapes[f"{name}_b_hh"] = (1, g)
    return shapes


@dataclass(frozen=True)
class DropoutMasks:
    """Scaled dropout masks of one training step, each broadcastable to what it multiplies."""

    src: Tensor  # (S, B, Ls, E): source embeddings
    tgt: Tensor  # (S, B, T, E): target embeddings
    out: Tensor  # (S, B, T, O): what the output layer reads
    enc: tuple[Tensor, ...] = ()  # (S, B, Ls, H): the input of each encoder layer above the first
    dec: tuple[Tensor, ...] = ()  # (S, B, T, H): the same in the decoder


@dataclass(frozen=True)
class DecoderState:
    enc: Tensor  # (S, B, Ls, H): the top encoder layer's states
    src_pad: Tensor  # (S, B, Ls)
    h: tuple[Tensor, ...]  # per layer (S, B, H)
    c: tuple[Tensor | None, ...]  # per layer (S, B, H); None for a GRU
    feed: Tensor | None  # (S, B, O): the last attentional state, with input feeding


class StackedSeq2Seq(MemberStack):
    """S seq2seq members; parameter `name` has shape (S, *shape) for each entry of `_shapes`."""

    shapes = staticmethod(_shapes)

    @classmethod
    def initialized(
        cls, config: RecurrentConfig, shape: ModelShape, seeds: Sequence[int]
    ) -> StackedSeq2Seq:
        """A model whose member k is drawn from `torch.Generator().manual_seed(seeds[k])`."""
        model = cls(config, shape, len(seeds))
        with torch.no_grad():
            for k, seed in enumerate(seeds):
                generator = torch.Generator().manual_seed(seed)
                for param in model.parameters():
                    param[k].uniform_(-config.init_range, config.init_range, generator=generator)
        return model

    def noise_shapes(self, batch: int, src_len: int, tgt_len: int) -> dict[str, tuple[int, ...]]:
        """Per member, the uniform draws of one training step's dropout masks, in draw order."""
        c = self.config
        if c.dropout == 0:
            return {}
        shapes = {
            "src": (batch, src_len, c.emb),
            "tgt": (batch, tgt_len, c.emb),
            "out": (batch, tgt_len, c.out_size),
        }
        for side, length in (("enc", src_len), ("dec", tgt_len)):
            for layer in range(1, c.layers):
                shapes[layer_name(side, layer)] = (batch, length, c.hidden)
        return shapes

    def _masks(self, noise: Mapping[str, Tensor]) -> DropoutMasks | None:
        """The dropout masks of `noise_shapes`' uniforms."""
        if not noise:
            return None
        p = self.config.dropout

        def mask(name: str) -> Tensor:
            return noise[name].ge(p).float().mul_(1 / (1 - p))

        between = range(1, self.config.layers)
        return DropoutMasks(
            mask("src"),
            mask("tgt"),
            mask("out"),
            tuple(mask(layer_name("enc", layer)) for layer in between),
            tuple(mask(layer_name("dec", layer)) for layer in between),
        )

    # -- building blocks ------------------------------------------------------------------

    def _project(self, x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        """(S, B, T, in) @ (S, in, out) [+ bias (S, 1, out)] → (S, B, T, out), one matmul."""
        s, b, t, _ = x.shape
        flat = x.reshape(s, b * t, -1)
        out = torch.bmm(flat, weight) if bias is None else biased_bmm(bias, flat, weight)
        return out.view(s, b, t, -1)

    def _cell(
        self, name: str, x_gates: Tensor, h: Tensor, c: Tensor | None
    ) -> tuple[Tensor, Tensor | None]:
        """One step of a layer's cell (`name` from `layer_name`)."""
        w_hh = getattr(self, f"{name}_w_hh")
        if c is not None:
            return lstm_cell(torch.baddbmm(x_gates, h, w_hh), c)
        return gru_cell(x_gates, torch.baddbmm(getattr(self, f"{name}_b_hh"), h, w_hh), h), None

    def _initial_c(self, h: Tensor) -> Tensor | None:
        return torch.zeros_like(h) if self.config.cell == "lstm" else None

    def _layer_input(
        self, side: str, layer: int, x: Tensor, masks: DropoutMasks | None
    ) -> tuple[Tensor, str]:
        """The gates (S, B, T, G) of layer `layer` for its input x (S, B, T, in)."""
        name = layer_name(side, layer)
        if masks is not None and layer > 0:
            x = x * getattr(masks, side)[layer - 1]
        return self._project(x, getattr(self, f"{name}_w_ih"), getattr(self, f"{name}_b")), name

    def encode(
        self, src: Tensor, masks: DropoutMasks | None = None
    ) -> tuple[Tensor, list[tuple[Tensor, Tensor | None]]]:
        """src (S, B, Ls) → the top layer's states (S, B, Ls, H) and each layer's final (h, c),
        each (S, B, H)."""
        x = self._embed(self.src_emb, src)  # (S, B, Ls, E)
        if masks is not None:
            x = x * masks.src
        s, b, _ = src.shape
        real = (src != PAD).unsqueeze(-1).unbind(2)  # Ls × (S, B, 1)
        finals = []
        for layer in range(self.config.layers):
            x_gates, name = self._layer_input("enc", layer, x, masks)  # (S, B, Ls, G)
            h = x_gates.new_zeros(s, b, self.config.hidden)
            c = self._initial_c(h)
            states = []
            # unbind, not x_gates[:, :, t]: the backward of T selects would write T full-size
            # zeros.
            for x_t, real_t in zip(x_gates.unbind(2), real, strict=True):
                h_new, c_new = self._cell(name, x_t, h, c)
                # Padding comes after the end, so holding the state there keeps the last real one.
                h = torch.where(real_t, h_new, h)
                if c is not None:
                    c = torch.where(real_t, c_new, c)
                states.append(h_new)
            x = torch.stack(states, dim=2)
            finals.append((h, c))
        return x, finals

    def _context(self, dec: Tensor, enc: Tensor, src_pad: Tensor) -> Tensor:
        """Attention: dec (S, B, T, H), enc (S, B, Ls, H), src_pad (S, B, Ls) → (S, B, T, H)."""
        s, b, t, h = dec.shape
        keys = enc.reshape(s * b, -1, h)
        if self.config.attention == "mlp":
            query = self._project(dec, self.attn_w_q).unsqueeze(3)  # (S, B, T, 1, H)
            key = self._project(enc, self.attn_w_k).unsqueeze(2)  # (S, B, 1, Ls, H)
            energy = torch.tanh(query + key).reshape(s, -1, h)  # (S, B*T*Ls, H)
            # One product per member: a batched matmul with one output column rounds
            # differently for one member than for several.
            scores = torch.stack([e @ v for e, v in zip(energy, self.attn_v, strict=True)])
            scores = scores.view(s * b, t, -1)
        else:
            query = self._project(dec, self.attn_w) if self.config.attention == "bilinear" else dec
            scores = torch.bmm(query.reshape(s * b, t, h), keys.transpose(1, 2))  # (S*B, T, Ls)
        scores = scores.masked_fill(src_pad.reshape(s * b, 1, -1), float("-inf"))
        return torch.bmm(torch.softmax(scores, dim=-1), keys).view(s, b, t, h)

    def _attend(self, dec: Tensor, enc: Tensor, src_pad: Tensor) -> Tensor:
        """The attentional state (S, B, T, O) of decoder states dec (S, B, T, H)."""
        c = self.config
        context = None if c.attention == "none" else self._context(dec, enc, src_pad)
        if not c.attention_layer:
            return dec if context is None else torch.cat([context, dec], dim=-1)
        s, b, t, h = dec.shape
        mixed = self._project(dec, self.out_w_h).view(s, b * t, h)
        if context is not None:
            mixed = torch.baddbmm(mixed, context.view(s, b * t, h), self.out_w_ctx)
        return torch.tanh(mixed).view(s, b, t, h)

    # -- training -------------------------------------------------------------------------

    def forward(
        self, src: Tensor, tgt_in: Tensor, noise: Mapping[str, Tensor] | None = None
    ) -> Tensor:
        """Teacher-forced attentional states (S, B, T, O) for src (S, B, Ls) and tgt_in
        (S, B, T); `logits` turns them (or a selection of them) into scores. `noise`: the
        uniforms named by `noise_shapes` (None: no dropout).
        """
        masks = self._masks(noise or {})
        enc, finals = self.encode(src, masks)
        y = self._embed(self.tgt_emb, tgt_in)  # (S, B, T, E)
        if masks is not None:
            y = y * masks.tgt
        src_pad = src == PAD
        if self.config.input_feeding:
            return self._fed_decoder(y, enc, src_pad, finals, masks)
        for layer, (h, c) in enumerate(finals):
            y_gates, name = self._layer_input("dec", layer, y, masks)  # (S, B, T, G)
            states = []
            for y_t in y_gates.unbind(2):
                h, c = self._cell(name, y_t, h, c)
                states.append(h)
            y = torch.stack(states, dim=2)
        hidden = self._attend(y, enc, src_pad)
        return hidden if masks is None else hidden * masks.out

    def _fed_decoder(
        self,
        y: Tensor,
        enc: Tensor,
        src_pad: Tensor,
        finals: list[tuple[Tensor, Tensor | None]],
        masks: DropoutMasks | None,
    ) -> Tensor:
        """Input feeding: attention runs inside the loop, since step t reads state t-1."""
        y_gates, _ = self._layer_input("dec", 0, y, masks)  # (S, B, T, G)
        s, b, t, _ = y_gates.shape
        feed = y_gates.new_zeros(s, b, self.config.out_size)
        if masks is None:
            out, between = [None] * t, [[None] * t] * (self.config.layers - 1)
        else:
            out = masks.out.expand(s, b, t, -1).unbind(2)
            between = [m.expand(s, b, t, -1).unbind(2) for m in masks.dec]
        h, c = map(list, zip(*finals, strict=True))
        states = []
        for step, (y_t, out_t) in enumerate(zip(y_gates.unbind(2), out, strict=True)):
            top = self._decoder_step(torch.baddbmm(y_t, feed, self.dec_w_feed), h, c, between, step)
            feed = self._attend(top.unsqueeze(2), enc, src_pad).squeeze(2)
            if out_t is not None:
                feed = feed * out_t  # the state fed back is the one the output layer reads
            states.append(feed)
        return torch.stack(states, dim=2)

    def _decoder_step(
        self,
        gates: Tensor,
        h: list[Tensor],
        c: list[Tensor | None],
        between: Sequence[Sequence[Tensor | None]],
        step: int,
    ) -> Tensor:
        """One time step through every decoder layer, updating `h` and `c` in place; the first
        layer's gates (S, B, G) are given. Returns the top layer's h (S, B, H)."""
        h[0], c[0] = self._cell("dec", gates, h[0], c[0])
        for layer in range(1, self.config.layers):
            name = layer_name("dec", layer)
            x = h[layer - 1]
            if (mask := between[layer - 1][step]) is not None:
                x = x * mask
            gates = torch.baddbmm(getattr(self, f"{name}_b"), x, getattr(self, f"{name}_w_ih"))
            h[layer], c[layer] = self._cell(name, gates, h[layer], c[layer])
        return h[-1]

    # -- incremental decoding (see `genprobe.decoding.greedy`) -----------------------------

    def start(self, src: Tensor, max_len: int | None = None) -> tuple[DecoderState, Tensor]:
        """Encode src (B, Ls), the same inputs for every member: the state and BOS (S, B).
        Any number of steps may follow (`max_len` is for models that need to know)."""
        src = src.unsqueeze(0).expand(self.members, -1, -1)
        enc, finals = self.encode(src)
        h, c = zip(*finals, strict=True)
        feed = None
        if self.config.input_feeding:
            feed = h[0].new_zeros(*h[0].shape[:2], self.config.out_size)
        state = DecoderState(enc, src == PAD, h, c, feed)
        return state, torch.full(src.shape[:2], BOS, device=src.device)

    def step(self, state: DecoderState, token: Tensor) -> tuple[Tensor, DecoderState]:
        """Feed token (S, B); return next-token logits (S, B, V) and the new state."""
        y = self._embed(self.tgt_emb, token)  # (S, B, E)
        gates = torch.baddbmm(self.dec_b, y, self.dec_w_ih)
        if state.feed is not None:
            gates = torch.baddbmm(gates, state.feed, self.dec_w_feed)
        h, c = list(state.h), list(state.c)
        no_dropout = [[None]] * (self.config.layers - 1)
        top = self._decoder_step(gates, h, c, no_dropout, 0)
        hidden = self._attend(top.unsqueeze(2), state.enc, state.src_pad)  # (S, B, 1, O)
        feed = hidden.squeeze(2) if state.feed is not None else None
        state = DecoderState(state.enc, state.src_pad, tuple(h), tuple(c), feed)
        return self.logits(hidden).squeeze(2), state
