"""torch files, the one home of every `torch.load` genprobe does: a file is read weights-only,
and refused in one line.

A file holding objects other than tensors and plain data is refused by `weights_only=True`
with a traceback that advises `weights_only=False`; genprobe never does that, and says instead
which file it will not load.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from genprobe.errors import CheckpointError
from genprobe.models.device import present_device

if TYPE_CHECKING:
    import torch


def load_torch(
    path: str | Path, map_location: torch.device | str = "cpu", recovery: str = ""
) -> Any:
    """What the `torch.save` file at `path` holds, weights-only, its tensors on `map_location`.

    Raises:
        CheckpointError: `path` cannot be read, or is not a `torch.save` file of tensors and
            plain data; one line naming it, followed by `recovery` if given.
        ConfigError: `map_location` is a device this machine does not have (checked first,
            so that torch's error for it is not taken for a file genprobe cannot load).
    """
    import torch  # here: the executor checks states in processes that need no torch

    present_device(str(map_location))
    then = f"; {recovery}" if recovery else ""
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except OSError as error:
        raise CheckpointError(f"{path}: cannot read ({error}){then}") from None
    except Exception:
        # torch.load fails in many ways on other files, and on objects it will not unpickle
        # its message advises weights_only=False, which genprobe never does
        raise CheckpointError(
            f"{path}: not a checkpoint genprobe can load (a torch.save file of tensors and "
            f"plain data){then}"
        ) from None
