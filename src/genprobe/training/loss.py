"""Token-level cross-entropy with the softmax gradient computed in the forward pass.

`F.cross_entropy` on (N, V) logits makes four passes over an (N, V) tensor in the backward
(a zero-filled NLL gradient, then the log-softmax backward); with S members × B × T rows that
is the largest memory traffic of a training step. Computing softmax − one-hot once in the
forward and scaling it in the backward gives the same gradient with fewer passes.
"""

from __future__ import annotations

import torch
from torch import Tensor


class _SoftmaxCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits: Tensor, target: Tensor, ignore_index: int) -> Tensor:
        keep = (target != ignore_index).unsqueeze(1)
        target = target.unsqueeze(1)
        log_probs = torch.log_softmax(logits, dim=1)
        loss = log_probs.gather(1, target).mul_(keep).neg_().squeeze(1)
        grad = log_probs.exp_()  # reuses the buffer: softmax
        grad.scatter_add_(1, target, torch.full_like(loss, -1.0).unsqueeze(1))
        ctx.save_for_backward(grad.mul_(keep))
        return loss

    @staticmethod
    def backward(ctx, grad_loss: Tensor) -> tuple[Tensor, None, None]:
        (grad,) = ctx.saved_tensors
        # In place: the graph of a training step is walked once.
        return grad.mul_(grad_loss.unsqueeze(1)), None, None


def token_cross_entropy(logits: Tensor, target: Tensor, ignore_index: int) -> Tensor:
    """Per-row negative log-likelihood of (N, V) logits and (N,) targets; 0 where ignored."""
    return _SoftmaxCrossEntropy.apply(logits, target, ignore_index)
