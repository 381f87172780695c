"""Token-level cross-entropy with the softmax gradient computed in the forward pass.

`F.cross_entropy` on (N, V) logits makes four passes over an (N, V) tensor in the backward
(a zero-filled NLL gradient, then the log-softmax backward); with S members × B × T rows that
is the largest memory traffic of a training step. Computing softmax − one-hot once in the
forward and scaling it in the backward gives the same gradient with fewer passes.
"""

from __future__ import annotations

import torch
from torch import Tensor

from genprobe.data.seq2seq import PAD, Seq2SeqTensors
from genprobe.models.member_stack import MemberStack, OutputLayer, biased_bmm


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


class _MemberOutputLoss(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx, hidden: Tensor, weight: Tensor, bias: Tensor, target: Tensor, ignore_index: int
    ) -> Tensor:
        grad_hidden = torch.zeros_like(hidden)
        grad_weight, grad_bias = torch.empty_like(weight), torch.empty_like(bias)
        losses = []
        for k in range(hidden.shape[0]):
            rows = torch.nonzero(target[k] != ignore_index).squeeze(1)
            h = hidden[k, rows]  # (n, H)
            log_probs = torch.addmm(bias[k], h, weight[k]).log_softmax(1)
            t = target[k, rows].unsqueeze(1)
            losses.append(-log_probs.gather(1, t).sum())
            grad = log_probs.exp_().scatter_add_(1, t, torch.full_like(t, -1, dtype=h.dtype))
            grad_hidden[k, rows] = grad @ weight[k].T
            torch.mm(h.T, grad, out=grad_weight[k])
            torch.sum(grad, dim=0, keepdim=True, out=grad_bias[k])
        ctx.save_for_backward(grad_hidden, grad_weight, grad_bias)
        return torch.stack(losses)

    @staticmethod
    def backward(ctx, grad_loss: Tensor) -> tuple[Tensor, Tensor, Tensor, None, None]:
        scale = [grad_loss.view(-1, *[1] * (g.dim() - 1)) for g in ctx.saved_tensors]
        # In place: the graph of a training step is walked once.
        return *(g.mul_(s) for g, s in zip(ctx.saved_tensors, scale, strict=True)), None, None


def member_output_loss(
    hidden: Tensor, weight: Tensor, bias: Tensor, target: Tensor, ignore_index: int
) -> Tensor:
    """Each member's summed token NLL of its output layer: (S,) from hidden (S, R, H), weight
    (S, H, V), bias (S, 1, V) and target (S, R).

    A member's logits are computed on its own real rows only, so its arithmetic does not depend
    on how many members are stacked or how long their batches are, and the (S, R, V) logits are
    never held in memory at once.
    """
    return _MemberOutputLoss.apply(hidden, weight, bias, target, ignore_index)


def batched_output_loss(
    hidden: Tensor, weight: Tensor, bias: Tensor, target: Tensor, ignore_index: int
) -> Tensor:
    """`member_output_loss` with every row of every member in one batched matmul: no loop over
    members and no host synchronization, so that a CUDA graph can record it. On a CPU a batched
    matmul rounds a member's rows differently for one member than for several; on CUDA it does
    not (cuBLAS without split-K, `training.trainer`), and the padding rows' zero gradients
    leave the sums unchanged."""
    logits = biased_bmm(bias, hidden, weight)
    members, rows, vocab = logits.shape
    nll = token_cross_entropy(logits.view(members * rows, vocab), target.reshape(-1), ignore_index)
    return nll.view(members, rows).sum(1)


def member_losses(
    out: Tensor | OutputLayer, target: Tensor, ignore_index: int, batched: bool
) -> Tensor:
    """Each member's summed token NLL (S,) of what a stacked model's `teacher_forced` gave:
    logits (S, B, T, V), or states and an output layer (`member_output_loss`, or with
    `batched` `batched_output_loss`); target (S, B, T)."""
    if isinstance(out, OutputLayer):
        loss = batched_output_loss if batched else member_output_loss
        return loss(out.hidden.flatten(1, 2), out.weight, out.bias, target.flatten(1), ignore_index)
    members, vocab = out.shape[0], out.shape[-1]
    nll = token_cross_entropy(out.reshape(-1, vocab), target.reshape(-1), ignore_index)
    return nll.view(members, -1).sum(1)


@torch.no_grad()
def shared_example_losses(
    model: MemberStack, data: Seq2SeqTensors, batched: bool, rows: int
) -> Tensor:
    """Each member's summed token NLL (S,) on the same examples, teacher-forced without noise
    (no dropout), `rows` examples at a time."""
    total = torch.zeros(model.members, device=data.src.device)
    for start in range(0, len(data), rows):
        src, tgt_in, tgt_out = (
            t[start : start + rows].unsqueeze(0).expand(model.members, -1, -1)
            for t in (data.src, data.tgt_in, data.tgt_out)
        )
        total += member_losses(model.teacher_forced(src, tgt_in), tgt_out, PAD, batched)
    return total
