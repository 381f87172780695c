"""A training step recorded once as a CUDA graph and replayed at every later step.

A step of the stacked recurrent model is about a thousand small kernels (a few per time step,
forward and backward). Launched one at a time from Python they take ~30 ms on an H100 however
few members there are, while the GPU's own work at 50 members is ~6 ms. A graph launches the
whole recorded step at once. What changes between steps lives in tensors the recording reads,
refilled before each replay from the host's pinned buffers or the device's tensors: the batch's
example indices, the dropout uniforms and the optimizer's scalars (`SweepTrainer._step` takes
nothing else).

The first `WARMUP` calls of a shape run eagerly on a side stream, as PyTorch's whole-network
capture requires (cuBLAS handles and autograd's buffers are created there, not in the graph);
they are real steps. A call whose inputs have other shapes (the shorter last batch of an epoch)
also runs eagerly. Replaying runs the same kernels on the same addresses, so a replayed step
computes what the eager one computes, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

WARMUP = 2

Step = Callable[[dict[str, Tensor]], None]


def shapes(inputs: dict[str, Tensor]) -> dict[str, tuple[int, ...]]:
    return {name: tuple(t.shape) for name, t in inputs.items()}


class CapturedStep:
    """`step(inputs)`, recorded on the first call after `WARMUP` eager ones of the same shapes.

    The model's parameters must stay the same tensors for the recording's life: a trainer that
    replaces its model (members leave the stack) makes a new `CapturedStep`.
    """

    def __init__(self, step: Step) -> None:
        self.step = step
        self.graph: torch.cuda.CUDAGraph | None = None
        self.static: dict[str, Tensor] = {}
        self.eager_calls = 0

    def __call__(self, inputs: dict[str, Tensor]) -> None:
        if self.graph is not None and shapes(inputs) == shapes(self.static):
            for name, value in inputs.items():
                self.static[name].copy_(value, non_blocking=True)
            self.graph.replay()
        elif self.graph is None and self.eager_calls >= WARMUP:
            self._record(inputs)
            self.graph.replay()
        else:
            self._eager(inputs)

    def _eager(self, inputs: dict[str, Tensor]) -> None:
        inputs = {name: value.to("cuda", non_blocking=True) for name, value in inputs.items()}
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.step(inputs)
        torch.cuda.current_stream().wait_stream(side)
        self.eager_calls += 1

    def _record(self, inputs: dict[str, Tensor]) -> None:
        self.static = {
            name: torch.empty_like(value, device="cuda").copy_(value)
            for name, value in inputs.items()
        }
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.step(self.static)
