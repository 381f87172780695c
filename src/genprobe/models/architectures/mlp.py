"""A multilayer perceptron over a fixed-length input, S independent members in one set of tensors.

The model of the grokking literature (Power et al. 2022's MLP baselines; Liu et al. 2022;
Gromov 2023, whose one hidden layer with a quadratic activation learns modular addition): each
input position is embedded (`input_encoding=embedding`) or one-hot encoded (`one_hot`, as
Gromov's), the encodings are concatenated, hidden layers follow, and the output layer scores
every output position at once (one output per target position, no decoder; `readout`).

Shapes: S members, B examples, L input positions, E embedding, H hidden, T output positions,
V output vocabulary, Vs input vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import Tensor

from genprobe.errors import ConfigError, check_choice
from genprobe.models.architectures.base import ModelShape
from genprobe.models.architectures.readout import ReadoutArchitecture, ReadoutStack, activate
from genprobe.models.member_stack import add_bias, biased_bmm

ACTIVATIONS = ("relu", "gelu", "quadratic")
INPUT_ENCODINGS = ("embedding", "one_hot")


@dataclass(frozen=True)
class MLPConfig(ReadoutArchitecture):
    member_format: ClassVar[str] = "genprobe.mlp/1"
    added_options: ClassVar[Mapping[str, object]] = {"input_encoding": "embedding"}

    emb: int = 32  # per input position
    hidden: int = 256
    layers: int = 1  # hidden layers
    activation: str = "relu"  # quadratic: x² (Gromov 2023)
    dropout: float = 0.0  # on each hidden layer's output
    # one_hot: each position one-hot (L·Vs inputs) into the first hidden layer; `emb` unused
    input_encoding: str = "embedding"

    def __post_init__(self) -> None:
        for name in ("emb", "hidden", "layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        check_choice("activation", self.activation, ACTIVATIONS)
        check_choice("input_encoding", self.input_encoding, INPUT_ENCODINGS)
        if not 0 <= self.dropout < 1:
            raise ConfigError("dropout", "in [0, 1)", self.dropout)

    def describe(self) -> str:
        layers = f"{self.layers} hidden layers" if self.layers > 1 else "1 hidden layer"
        return (
            f"MLP over a fixed-length input ({layers} of {self.hidden}, {self.activation}, "
            f"{self._encoding()}, dropout {self.dropout}; every output position scored at once)"
        )

    def _encoding(self) -> str:
        if self.input_encoding == "one_hot":
            return "each input position one-hot (emb unused)"
        return f"embedding {self.emb} per position"

    def model_class(self) -> type[StackedMLP]:
        return StackedMLP

    def decode_footprint(self, input_length: int) -> int:
        encoded = self.hidden if self.input_encoding == "one_hot" else self.emb
        return input_length * encoded + self.hidden


def _shapes(c: MLPConfig, shape: ModelShape) -> dict[str, tuple[int, ...]]:
    if c.input_encoding == "one_hot":
        shapes: dict[str, tuple[int, ...]] = {}
        width = shape.src_len * shape.src_vocab
    else:
        shapes = {"src_emb": (shape.src_vocab, c.emb)}
        width = shape.src_len * c.emb
    for layer in range(c.layers):
        shapes.update({f"h{layer}_w": (width, c.hidden), f"h{layer}_b": (1, c.hidden)})
        width = c.hidden
    outputs = shape.tgt_len * shape.tgt_vocab
    shapes.update(out_w=(width, outputs), out_b=(1, outputs))
    return shapes


class StackedMLP(ReadoutStack):
    """S MLP members; parameter `name` has shape (S, *shape) for each entry of `_shapes`."""

    shapes = staticmethod(_shapes)

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
        src = self.fixed_input(src)
        one_hot = self.config.input_encoding == "one_hot"
        x = src if one_hot else self._embed(self.src_emb, src).reshape(s, b, -1)  # (S, B, L·E)
        p = self.config.dropout
        for layer in range(self.config.layers):
            weight, bias = getattr(self, f"h{layer}_w"), getattr(self, f"h{layer}_b")
            if layer == 0 and one_hot:
                x = add_bias(self._one_hot_matmul(x, weight), bias)
            else:
                x = biased_bmm(bias, x, weight)
            x = activate(x, self.config.activation)  # (S, B, H)
            if noise and (u := noise.get(f"h{layer}")) is not None:
                x = x * u.ge(p).to(x.dtype).mul_(1 / (1 - p))
        logits = biased_bmm(self.out_b, x, self.out_w)  # (S, B, T·V)
        return logits.view(s, b, self.shape.tgt_len, self.shape.tgt_vocab)

    def _one_hot_matmul(self, src: Tensor, weight: Tensor) -> Tensor:
        """one_hot(src) (S, B, L·Vs) @ weight (S, L·Vs, H) → (S, B, H), as the sum of the
        weight rows the positions' tokens pick: no (B, L·Vs) one-hot tensor is made."""
        rows = src + torch.arange(src.shape[2], device=src.device) * self.shape.src_vocab
        return self._embed(weight, rows).sum(2)
