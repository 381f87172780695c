"""Validation curves as a TensorBoard log, for those who browse runs there.

Needs the optional `tensorboard` package (`pip install 'genprobe[tensorboard]'`); without it
nothing is written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path


def write_validation_curves(run: Path, curves: Mapping[str, Sequence[float]]) -> Path | None:
    """Per seed, its validation accuracy per epoch (`curves`: seed -> one value per epoch) as
    TensorBoard scalars `validation/seed=N` in `run/tensorboard`, replacing an earlier log;
    None without the `tensorboard` package."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    target = run / "tensorboard"
    with tempfile.TemporaryDirectory(dir=run, prefix=".tensorboard-") as tmp:
        writer = SummaryWriter(tmp)
        for seed, values in curves.items():
            for epoch, value in enumerate(values, start=1):
                writer.add_scalar(f"validation/seed={seed}", value, epoch)
        writer.close()
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    return target
