"""The device a sweep's stages run on (`genprobe.models.device`), checked only where it is used.

Whether the device exists here is checked only when a stage has shards to run, so a run
trained on a GPU can be reported, evaluated or resumed on a machine without one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from genprobe.models.device import present_device
from genprobe.runs.provenance import cpu_model

# Float rounding depends on the thread count (a reduction split over threads sums in another
# order), so a member's numbers would depend on how many processes share the machine. One
# thread per stacked model is also the fastest layout at these shapes (docs/rewriting.md).
CPU_THREADS = 1


@contextmanager
def cpu_threads(n: int = CPU_THREADS) -> Iterator[None]:
    """Run the block with `n` torch threads, restoring the previous count after."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def device_facts(name: str) -> dict[str, Any]:
    """What a shard's manifest records about where it ran; refuses a device not visible here.

    Raises:
        ConfigError: a CUDA device that this machine does not have.
    """
    device = present_device(name)
    facts: dict[str, Any] = {"device": name, "torch_threads": CPU_THREADS}
    if device.type == "cpu":
        # the kernel set (AVX2, AVX512) rounds floats its own way: docs/rewriting.md#other-cpus
        facts.update(cpu=cpu_model(), kernels=torch.backends.cpu.get_cpu_capability())
    if device.type == "cuda":
        facts["gpu"] = torch.cuda.get_device_name(device)
        facts["cublas_workspace_config"] = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    return facts
