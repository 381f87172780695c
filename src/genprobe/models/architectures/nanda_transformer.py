"""The one-layer transformer of Nanda et al. 2023 ("Progress measures for grokking via mechanistic
interpretability"), S independent members in one set of tensors.

As their code (github.com/mechanistic-interpretability-grokking/progress-measures-paper,
`transformers.py`) builds it: a decoder-only transformer without LayerNorm, a learned position
embedding, attention without biases, a ReLU MLP with biases and an unembedding without bias;
the residual stream of the last input position (their "=") is unembedded. The parameters keep
their names, layouts and draw order (a bias as a row), so a member is drawn as their model is
after `torch.manual_seed`. Unlike theirs, it reads any task: the fixed-length input of
`readout` (their three tokens [x, y, "="] for `binary_operation`), and the last position's
residual stream is unembedded into every output position at once, T × V logits with the
output's special ids, where theirs has one position of p + 1 classes.

Shapes: S members, B examples, L input positions, Lq query positions, D width, N heads, H head
width, M MLP width, T output positions, V output vocabulary, Vs input vocabulary.
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
from genprobe.models.member_stack import add_bias

ACTIVATIONS = ("relu", "gelu")


@dataclass(frozen=True)
class NandaTransformerConfig(ReadoutArchitecture):
    member_format: ClassVar[str] = "genprobe.nanda_transformer/1"

    # Nanda et al.'s: d_model 128, 4 heads of 32, d_mlp 512, one layer, ReLU
    width: int = 128
    heads: int = 4
    mlp: int = 512
    layers: int = 1
    activation: str = "relu"

    def __post_init__(self) -> None:
        for name in ("width", "heads", "mlp", "layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        if self.width % self.heads:
            raise ConfigError("heads", f"a divisor of the width {self.width}", self.heads)
        check_choice("activation", self.activation, ACTIVATIONS)

    def describe(self) -> str:
        layers = "1 layer" if self.layers == 1 else f"{self.layers} layers"
        return (
            f"Nanda et al. 2023's decoder-only transformer ({layers}, width {self.width}, "
            f"{self.heads} heads of {self.width // self.heads}, MLP {self.mlp}, "
            f"{self.activation}, no LayerNorm, learned positions; causal attention over the "
            "fixed-length input, the last position unembedded into every output position at "
            "once, special ids included)"
        )

    def model_class(self) -> type[StackedNandaTransformer]:
        return StackedNandaTransformer

    def decode_footprint(self, input_length: int) -> int:
        return input_length * self.width * 3 + self.mlp  # residual stream, keys, values


def _shapes(c: NandaTransformerConfig, shape: ModelShape) -> dict[str, tuple[int, ...]]:
    """Their parameters in their order and layouts, blocks as `b{layer}_`."""
    d, n, m = c.width, c.heads, c.mlp
    shapes: dict[str, tuple[int, ...]] = {"W_E": (d, shape.src_vocab), "W_pos": (shape.src_len, d)}
    for layer in range(c.layers):
        block = {"W_K": (n, d // n, d), "W_Q": (n, d // n, d), "W_V": (n, d // n, d)}
        block.update(W_O=(d, d), W_in=(m, d), b_in=(1, m), W_out=(d, m), b_out=(1, d))
        shapes.update({f"b{layer}_{name}": size for name, size in block.items()})
    shapes["W_U"] = (d, shape.tgt_len * shape.tgt_vocab)
    return shapes


class StackedNandaTransformer(ReadoutStack):
    """S members; parameter `name` has shape (S, *shape) for each entry of `_shapes`."""

    shapes = staticmethod(_shapes)

    @classmethod
    def initialized(
        cls, config: NandaTransformerConfig, shape: ModelShape, seeds: Sequence[int]
    ) -> StackedNandaTransformer:
        """Member k drawn from `torch.Generator().manual_seed(seeds[k])` as their code draws:
        each weight normal(0, 1) / √width in their order, the unembedding's / √V (their
        vocabulary, ours one output position's), biases 0."""
        model = cls(config, shape, len(seeds))
        with torch.no_grad():
            for k, seed in enumerate(seeds):
                generator = torch.Generator().manual_seed(seed)
                for name, param in model.named_parameters():
                    if "_b_" in name:
                        param[k].zero_()
                        continue
                    fan = shape.tgt_vocab if name == "W_U" else config.width
                    drawn = torch.randn(param.shape[1:], generator=generator)
                    param[k].copy_(drawn / math.sqrt(fan))
        return model

    def noise_shapes(self, batch: int, src_len: int, tgt_len: int) -> dict[str, tuple[int, ...]]:
        return {}  # no dropout, as theirs

    def scores(self, src: Tensor, noise: Mapping[str, Tensor] | None = None) -> Tensor:
        """Logits (S, B, T, V) of every output position for src (S, B, Ls)."""
        s, b, _ = src.shape
        ids = self.fixed_input(src)
        x = self._embed(self.W_E.transpose(1, 2), ids) + self.W_pos.unsqueeze(1)  # (S, B, L, D)
        for layer in range(self.config.layers):
            # Only the last position is unembedded, so the last block needs the keys and values
            # of every position but the query, attention output and MLP of the last one alone.
            last = layer == self.config.layers - 1
            x = self._block(layer, x, x[:, :, -1:] if last else x)
        logits = torch.einsum("sdo,sbd->sbo", self.W_U, x[:, :, -1])  # (S, B, T·V)
        return logits.view(s, b, self.shape.tgt_len, self.shape.tgt_vocab)

    def _block(self, layer: int, x: Tensor, resid: Tensor) -> Tensor:
        """Block `layer` at the last Lq positions of x (S, B, L, D), whose residual stream is
        resid = x[:, :, -Lq:]: attention over the positions up to each query's, then the MLP.
        Returns (S, B, Lq, D)."""

        def weight(name: str) -> Tensor:
            return getattr(self, f"b{layer}_{name}")

        keys = torch.einsum("snhd,sbpd->sbnph", weight("W_K"), x)
        values = torch.einsum("snhd,sbpd->sbnph", weight("W_V"), x)
        queries = torch.einsum("snhd,sbqd->sbnqh", weight("W_Q"), resid)
        scores = torch.einsum("sbnph,sbnqh->sbnqp", keys, queries) / math.sqrt(keys.shape[-1])
        length, asked = x.shape[2], resid.shape[2]
        causal = torch.ones(asked, length, dtype=torch.bool, device=x.device).tril(length - asked)
        attention = scores.masked_fill(~causal, -math.inf).softmax(-1)
        heads = torch.einsum("sbnph,sbnqp->sbqnh", values, attention).flatten(3)
        resid = resid + torch.einsum("sdf,sbqf->sbqd", weight("W_O"), heads)
        s, b, q, d = resid.shape
        hidden = torch.einsum("smd,sbd->sbm", weight("W_in"), resid.reshape(s, b * q, d))
        hidden = activate(add_bias(hidden, weight("b_in")), self.config.activation)
        out = add_bias(torch.einsum("sdm,sbm->sbd", weight("W_out"), hidden), weight("b_out"))
        return resid + out.view(s, b, q, d)
