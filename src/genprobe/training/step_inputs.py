"""What a training step reads from the host: each member's uniforms and the update's scalars.

Member k's uniforms come from its own NumPy stream, in the order of the model's `noise_shapes`,
so the draws of a member do not depend on the members beside it or on the device. On a CPU
they are drawn into fresh arrays, one member after another. On a GPU they are drawn by a pool
of threads (NumPy releases the GIL while it fills an array) into one of two sets of pinned
buffers used in turn: the next step is drawn while the GPU still copies and runs this one.
Lanes beyond the members (a stack padded on a GPU, `training.trainer`) repeat member 0's draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from torch import Tensor

from genprobe.runs.cpus import usable_cpus

# More threads were slower on a 16-core GPU machine: at 1,000 members, 8 threads drew a step's
# dropout uniforms in 121 ms, 16 in 294 ms (NumPy 2.5, docs/gpu.md).
MAX_THREADS = 8


class StepInputs:
    def __init__(self, device: torch.device) -> None:
        self.pinned = device.type == "cuda"
        self.pool = ThreadPoolExecutor(min(MAX_THREADS, usable_cpus())) if self.pinned else None
        self.buffers: list[dict[str, Tensor]] = [{}, {}]
        self.copied: list[torch.cuda.Event | None] = [None, None]
        self.slot = 0

    def draw(
        self,
        rngs: Sequence[np.random.Generator],
        shapes: dict[str, tuple[int, ...]],
        lanes: int,
        scalars: Sequence[float],
    ) -> tuple[dict[str, Tensor], Tensor]:
        """(name → (max(members, lanes), *shape) float32 uniforms, the scalars as float32)."""
        rows = max(len(rngs), lanes)
        sizes = {"scalars": (len(scalars),), **{n: (rows, *shape) for n, shape in shapes.items()}}
        host = self._host(sizes)
        arrays = {name: host[name].numpy() for name in shapes}

        def fill(k: int) -> None:
            for out in arrays.values():
                rngs[k].random(out=out[k], dtype=np.float32)

        if self.pool is None:
            for k in range(len(rngs)):
                fill(k)
        else:
            list(self.pool.map(fill, range(len(rngs))))
        for out in arrays.values():
            out[len(rngs) :] = out[0]
        host["scalars"].numpy()[:] = scalars
        noise = {name: host[name] for name in shapes}
        return noise, host["scalars"]

    def _host(self, sizes: dict[str, tuple[int, ...]]) -> dict[str, Tensor]:
        if not self.pinned:
            return {name: torch.empty(size) for name, size in sizes.items()}
        # What was enqueued until now includes the copy out of the buffers filled last time;
        # the other set was copied before the previous draw, which recorded its event.
        done = torch.cuda.Event()
        done.record()
        self.copied[self.slot] = done
        self.slot ^= 1
        if (event := self.copied[self.slot]) is not None:
            event.synchronize()
        buffers = self.buffers[self.slot]
        for name, size in sizes.items():
            if name not in buffers or tuple(buffers[name].shape) != size:
                buffers[name] = torch.empty(size, pin_memory=True)
        return {name: buffers[name] for name in sizes}
