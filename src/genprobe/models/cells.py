"""Recurrent cell updates: the LSTM cell with a hand-written backward, and the GRU cell.

Autograd's version of `i, f, o, g = split(gates)` assembles the gate gradient with two
concatenations per time step, and keeps one graph node per elementwise op; over ~40 steps of
a stacked training batch that is a tenth of the step. Here the backward writes the four gate
gradients into one preallocated tensor.
"""

from __future__ import annotations

import torch
from torch import Tensor


class _LSTMCell(torch.autograd.Function):
    @staticmethod
    def forward(ctx, gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        h_size = c.shape[-1]
        act = torch.empty_like(gates)
        torch.sigmoid(gates[..., : 3 * h_size], out=act[..., : 3 * h_size])
        torch.tanh(gates[..., 3 * h_size :], out=act[..., 3 * h_size :])
        i, f, o, g = act.split(h_size, dim=-1)
        c_new = torch.addcmul(f * c, i, g)
        tanh_c = torch.tanh(c_new)
        ctx.save_for_backward(act, c, tanh_c)
        return o * tanh_c, c_new

    @staticmethod
    def backward(ctx, grad_h: Tensor, grad_c: Tensor) -> tuple[Tensor, Tensor]:
        act, c, tanh_c = ctx.saved_tensors
        i, f, o, g = act.split(c.shape[-1], dim=-1)
        d_c = torch.addcmul(grad_c, grad_h * o, 1 - tanh_c * tanh_c)
        d_gates = torch.empty_like(act)
        d_i, d_f, d_o, d_g = d_gates.split(c.shape[-1], dim=-1)
        torch.mul(d_c * g, i * (1 - i), out=d_i)
        torch.mul(d_c * c, f * (1 - f), out=d_f)
        torch.mul(grad_h * tanh_c, o * (1 - o), out=d_o)
        torch.mul(d_c * i, 1 - g * g, out=d_g)
        return d_gates, d_c * f


def lstm_cell(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """(h, c) after one step, from gate pre-activations (…, 4H) ordered i, f, o, g and c (…, H)."""
    return _LSTMCell.apply(gates, c)


def gru_cell(x_gates: Tensor, h_gates: Tensor, h: Tensor) -> Tensor:
    """h after one GRU step (PyTorch's `nn.GRU` equations), from the input's and the state's
    gate pre-activations (…, 3H), each ordered r, z, n and with its own bias, and h (…, H)."""
    h_size = h.shape[-1]
    reset, update = torch.sigmoid(x_gates[..., : 2 * h_size] + h_gates[..., : 2 * h_size]).chunk(
        2, dim=-1
    )
    new = torch.tanh(x_gates[..., 2 * h_size :] + reset * h_gates[..., 2 * h_size :])
    return torch.lerp(new, h, update)  # (1 - z) n + z h
