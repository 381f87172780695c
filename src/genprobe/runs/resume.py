"""Resume points: the state a long computation saves so that a rerun goes on where it stopped.

A state is a `torch.save` file, written atomically (the same state, the same bytes) and read
weights-only (`genprobe.runs.torch_files`). One that is damaged (truncated, a flipped bit: the
zip archive torch writes keeps a CRC of every record, which `torch.load` does not check) is set
aside and reported in one line naming it, and the computation starts again from the beginning
instead of failing on every rerun. An intact one that holds objects other than tensors and plain
data was not written by genprobe: it is refused in one line, not set aside, since throwing it
away would hide whatever put it there.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genprobe.errors import warn
from genprobe.runs.torch_files import load_torch, save_torch

if TYPE_CHECKING:
    import torch


def save_state(path: Path, state: dict[str, Any]) -> None:
    """Write `state` to `path`: a reader finds the previous state or this one, whole."""
    save_torch(path, state)


def check_state(path: Path, restart: str) -> None:
    """If the state at `path` is damaged, set it aside (as `<name>.damaged`) and say so in a
    `GenprobeWarning` naming it, with what happens instead (`restart`)."""
    if path.exists() and (damage := _damage(path)) is not None:
        aside = path.with_name(f"{path.name}.damaged")
        path.replace(aside)
        warn(f"{path} is damaged ({damage}): set aside as {aside.name}; {restart}")


def load_state(path: Path, device: torch.device | str, restart: str) -> dict[str, Any] | None:
    """The state saved at `path`, its tensors on `device`; None if there is none, or if it is
    damaged (see `check_state`).

    Only damage of the file itself counts: an intact file that does not load is an error.

    Raises:
        CheckpointError: an intact file holding objects other than tensors and plain data.
    """
    check_state(path, restart)
    if not path.exists():
        return None
    return load_torch(path, device, f"remove it and rerun: {restart}")


def _damage(path: Path) -> str | None:
    """What is wrong with the zip archive of a `torch.save` file, None if it is intact."""
    try:
        with zipfile.ZipFile(path) as archive:
            failed = archive.testzip()
    except (zipfile.BadZipFile, EOFError) as error:
        return f"not a whole torch file: {error}"
    return None if failed is None else f"its record {failed} fails its CRC check"
