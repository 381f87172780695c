"""A multilayer perceptron over a fixed-length input, S independent members in one set of tensors.

The model of the grokking literature (Power et al. 2022's MLP baselines; Liu et al. 2022;
Gromov 2023, whose one hidden layer with a quadratic activation learns modular addition): each
input position is embedded, the embeddings are concatenated, hidden layers follow, and the
output layer scores every output position at once (one output per target position, no
decoder). It reads the task's longest training input (`ModelShape.src_len`) and writes its
longest training output with its end token (`tgt_len`): a longer input is cut to that many
positions and a longer output cannot be written, so on longer inputs it fails by construction.

Shapes: S members, B examples, L input positions, E embedding, H hidden, T output positions,
V output vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor

from genprobe.data.seq2seq import BOS, EOS
from genprobe.errors import ConfigError, check_choice
from genprobe.models.architectures.base import Architecture, ModelShape
from genprobe.models.member_stack import MemberStack, biased_bmm

ACTIVATIONS = ("relu", "gelu", "quadratic")


@dataclass(frozen=True)
class MLPConfig(Architecture):
    member_format: ClassVar[str] = "genprobe.mlp/1"

    emb: int = 32  # per input position
    hidden: int = 256
    layers: int = 1  # hidden layers
    activation: str = "relu"  # quadratic: x² (Gromov 2023)
    dropout: float = 0.0  # on each hidden layer's output

    def __post_init__(self) -> None:
        for name in ("emb", "hidden", "layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        check_choice("activation", self.activation, ACTIVATIONS)
        if not 0 <= self.dropout < 1:
            raise ConfigError("dropout", "in [0, 1)", self.dropout)

    def describe(self) -> str:
        layers = f"{self.layers} hidden layers" if self.layers > 1 else "1 hidden layer"
        return (
            f"MLP over a fixed-length input ({layers} of {self.hidden}, {self.activation}, "
            f"embedding {self.emb} per position, dropout {self.dropout}; every output position "
            "scored at once)"
        )

    def model_class(self) -> type[StackedMLP]:
        return StackedMLP

    def decode_footprint(self, input_length: int) -> int:
        return input_length * self.emb + self.hidden


def _shapes(c: MLPConfig, shape: ModelShape) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {"src_emb": (shape.src_vocab, c.emb)}
    width = shape.src_len * c.emb
    for layer in range(c.layers):
        shapes.update({f"h{layer}_w": (width, c.hidden), f"h{layer}_b": (1, c.hidden)})
        width = c.hidden
    outputs = shape.tgt_len * shape.tgt_vocab
    shapes.update(out_w=(width, outputs), out_b=(1, outputs))
    return shapes


@dataclass(frozen=True)
class MLPState:
    logits: Tensor  # (S, B, T, V): every output position, scored when decoding starts
    step: int


class StackedMLP(MemberStack):
    """S MLP members; parameter `name` has shape (S, *shape) for each entry of `_shapes`."""

    shapes = staticmethod(_shapes)
    capturable = False  # not yet recorded and replayed on a GPU

    @classmethod
    def initialized(cls, config: MLPConfig, shape: ModelShape, seeds: Sequence[int]) -> StackedMLP:
        """Member k drawn from `torch.Generator().manual_seed(seeds[k])` as `torch.nn` would:
        embeddings normal(0, 1), each layer's weights and biases uniform(±1/√fan_in)."""
        model = cls(config, shape, len(seeds))
        with torch.no_grad():
            for k, seed in enumerate(seeds):
                generator = torch.Generator().manual_seed(seed)
                for name, param in model.named_parameters():
                    if name == "src_emb":
                        param[k].normal_(0.0, 1.0, generator=generator)
                        continue
                    fan_in = getattr(model, name[:-1] + "w").shape[1]
                    bound = 1 / math.sqrt(fan_in)
                    param[k].uniform_(-bound, bound, generator=generator)
        return model

    def noise_shapes(self, batch: int, src_len: int, tgt_len: int) -> dict[str, tuple[int, ...]]:
        """Per member, the uniforms of one training step's dropout masks, one per layer."""
        if not self.config.dropout:
            return {}
        return {f"h{layer}": (batch, self.config.hidden) for layer in range(self.config.layers)}

    def scores(self, src: Tensor, noise: Mapping[str, Tensor] | None = None) -> Tensor:
        """Logits (S, B, T, V) of every output position for src (S, B, Ls)."""
        s, b, _ = src.shape
        width = self.shape.src_len
        src = F.pad(src[:, :, :width], (0, max(0, width - src.shape[2])))  # cut or pad to L
        x = self._embed(self.src_emb, src).reshape(s, b, -1)  # (S, B, L·E)
        p = self.config.dropout
        for layer in range(self.config.layers):
            weight, bias = getattr(self, f"h{layer}_w"), getattr(self, f"h{layer}_b")
            x = self._activate(biased_bmm(bias, x, weight))  # (S, B, H)
            if noise and (u := noise.get(f"h{layer}")) is not None:
                x = x * u.ge(p).to(x.dtype).mul_(1 / (1 - p))
        logits = biased_bmm(self.out_b, x, self.out_w)  # (S, B, T·V)
        return logits.view(s, b, self.shape.tgt_len, self.shape.tgt_vocab)

    def _activate(self, x: Tensor) -> Tensor:
        if self.config.activation == "quadratic":
            return x * x
        return F.gelu(x) if self.config.activation == "gelu" else F.relu(x)

    def teacher_forced(
        self, src: Tensor, tgt_in: Tensor, noise: Mapping[str, Tensor] | None = None
    ) -> Tensor:
        """Logits (S, B, T, V) of the first T = tgt_in's length output positions (the MLP does
        not read tgt_in: it writes every position at once)."""
        return self.scores(src, noise)[:, :, : tgt_in.shape[2]]

    # -- decoding (see `genprobe.decoding.greedy`) ---------------------------------------------

    def start(self, src: Tensor, max_len: int | None = None) -> tuple[MLPState, Tensor]:
        """Score every output position of src (B, Ls) at once: the state and BOS (S, B)."""
        logits = self.scores(src.unsqueeze(0).expand(self.members, -1, -1))
        return MLPState(logits, 0), torch.full(logits.shape[:2], BOS, device=src.device)

    def step(self, state: MLPState, token: Tensor) -> tuple[Tensor, MLPState]:
        """The scores (S, B, V) of the next position (the token fed is not read); past the
        last position it can write, the end of the sequence."""
        if state.step < state.logits.shape[2]:
            logits = state.logits[:, :, state.step]
        else:
            logits = torch.full_like(state.logits[:, :, 0], -math.inf)
            logits[..., EOS] = 0.0
        return logits, MLPState(state.logits, state.step + 1)
