"""S models' weights in one set of tensors: what the seed-stacked models have in common.

Parameter `name` has shape (S, *shape) for each entry of the model's `shapes(config, shape)`;
member k lives at index k of every parameter and no operation mixes members, so S seeds train as
one model (`training.trainer`) and decode as one (`decoding.greedy`).

What the trainer and the decoder use of a stacked model: `members`, `member_state`, `subset`,
`noise_shapes` (the uniforms a training step draws per member), `teacher_forced` (what the loss
reads), `start`/`step` (incremental decoding), `stacking` and `capturable`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

M = TypeVar("M", bound="MemberStack")


class _RowBias(torch.autograd.Function):
    """out (S, R, N) + bias (S, 1, N), whose backward sums the bias's gradient along the
    fastest dimension (each column made a contiguous row first)."""

    @staticmethod
    def forward(ctx, out: Tensor, bias: Tensor) -> Tensor:
        return out + bias

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, Tensor]:
        return grad, _row_sums(grad)


def _row_sums(grad: Tensor) -> Tensor:
    """grad (S, R, N) summed down its R rows → (S, 1, N), each column made a contiguous row
    first: on CUDA autograd's own sum splits its work by the number of members S."""
    return grad.transpose(1, 2).contiguous().sum(-1).unsqueeze(1)


class _RowAffine(torch.autograd.Function):
    """x (S, R, N) * weight (S, 1, N) + bias (S, 1, N), the parameters' gradients summed as
    `_row_sums` does."""

    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
        ctx.save_for_backward(x, weight)
        return torch.addcmul(bias, x, weight)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        x, weight = ctx.saved_tensors
        return grad * weight, _row_sums(grad * x), _row_sums(grad)


def scale_shift(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """x (S, ..., N) * weight (S, 1, N) + bias (S, 1, N), per member (a LayerNorm's gain and
    bias). On CUDA the parameters' gradients are summed along rows, as in `biased_bmm`."""
    if not x.is_cuda:
        shape = (x.shape[0], *[1] * (x.dim() - 2), x.shape[-1])
        return torch.addcmul(bias.view(shape), x, weight.view(shape))
    flat = x.reshape(x.shape[0], -1, x.shape[-1])
    return _RowAffine.apply(flat, weight, bias).view(x.shape)


def biased_bmm(bias: Tensor, x: Tensor, weight: Tensor) -> Tensor:
    """`torch.baddbmm(bias, x, weight)`: bias (S, 1, N), x (S, R, K), weight (S, K, N).

    On CUDA, autograd's sum of the bias's gradient down R rows splits its work by the number of
    members (from ~200 members on at R = 1,984 rows, on an H100), so a member's gradient would
    depend on the members beside it; summed along rows instead it does not (docs/gpu.md).
    """
    if not x.is_cuda:
        return torch.baddbmm(bias, x, weight)
    return add_bias(torch.bmm(x, weight), bias)


def add_bias(out: Tensor, bias: Tensor) -> Tensor:
    """out (S, R, N) + bias (S, 1, N), whose gradient on CUDA is summed along rows, for the
    reason `biased_bmm` gives."""
    return _RowBias.apply(out, bias) if out.is_cuda else out + bias


@dataclass(frozen=True)
class OutputLayer:
    """Teacher-forced states and the output layer that turns them into logits, kept apart so
    that the loss need not hold every member's (B, T, V) logits at once."""

    hidden: Tensor  # (S, B, T, O)
    weight: Tensor  # (S, O, V)
    bias: Tensor  # (S, 1, V)


class MemberStack(nn.Module):
    """The member axis: building from and taking apart into single-member state dicts."""

    # config, shape → parameter shapes without S
    shapes: ClassVar[Callable[[Any, Any], dict[str, tuple[int, ...]]]]
    # Its training step can be recorded as a CUDA graph (`training.captured`): static shapes,
    # no host synchronization, no host-side randomness.
    capturable: ClassVar[bool] = True
    # Its batched kernels reduce across the members' rows, which CUDA splits differently for
    # few members: on a GPU a stack is padded to more lanes (`training.trainer.min_lanes`).
    pads_on_gpu: ClassVar[bool] = True
    # Its teacher-forced pass reads nothing but its parameters and inputs (no member count of
    # its own), so a CPU trainer may run it on slices of the members (`training.trainer`).
    chunkable: ClassVar[bool] = False

    def __init__(self, config: Any, shape: Any, members: int) -> None:
        super().__init__()
        self.config, self.shape = config, shape
        for name, size in type(self).shapes(config, shape).items():
            self.register_parameter(name, nn.Parameter(torch.empty(members, *size)))

    @classmethod
    def from_members(
        cls: type[M], config: Any, shape: Any, states: Sequence[dict[str, Tensor]]
    ) -> M:
        """Stack single-member state dicts (as `member_state` returns) into one model."""
        model = cls(config, shape, len(states)).to(next(iter(states[0].values())).device)
        with torch.no_grad():
            for name, param in model.named_parameters():
                param.copy_(torch.stack([state[name] for state in states]))
        return model

    @property
    def members(self) -> int:
        return next(self.parameters()).shape[0]

    def stacking(self) -> str:
        """How the members run: "stacked" (batched operations that keep each member's
        arithmetic its own); a module genprobe did not write: "vmap" or "loop"."""
        return "stacked"

    def member_state(self, k: int) -> dict[str, Tensor]:
        return {name: param[k].detach().clone() for name, param in self.named_parameters()}

    def subset(self: M, keep: Sequence[int]) -> M:
        """A new model holding only the members at positions `keep` (fresh leaf tensors)."""
        return self.from_members(self.config, self.shape, [self.member_state(k) for k in keep])

    def teacher_forced(
        self, src: Tensor, tgt_in: Tensor, noise: Mapping[str, Tensor] | None = None
    ) -> Tensor | OutputLayer:
        """What the training loss reads for src (S, B, Ls) and tgt_in (S, B, T): logits
        (S, B, T, V), or states and the output layer (here: `forward`'s states and `gen`)."""
        return OutputLayer(self(src, tgt_in, noise), self.gen_w, self.gen_b)

    def _embed(self, table: Tensor, ids: Tensor) -> Tensor:
        """Per-member lookup: table (S, V, E), ids (S, ...) → (S, ..., E)."""
        members, vocab, _ = table.shape
        offset = torch.arange(members, device=ids.device).view(-1, *[1] * (ids.dim() - 1)) * vocab
        return F.embedding(ids + offset, table.reshape(members * vocab, -1))

    def logits(self, hidden: Tensor) -> Tensor:
        """Output layer `gen`: what it reads (S, …, O) → logits (S, …, V)."""
        flat = hidden.reshape(hidden.shape[0], -1, hidden.shape[-1])
        return biased_bmm(self.gen_b, flat, self.gen_w).view(*hidden.shape[:-1], -1)
