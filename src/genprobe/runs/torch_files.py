"""torch files, the one home of every `torch.save` and `torch.load` genprobe does: the same
contents give the same bytes, and a file is read weights-only, refused in one line.

Same bytes: torch names the root folder of the zip archive it writes after the file it is
given by name (a random temporary name, when written atomically), and `archive` when given an
open file or a buffer; nothing else in the archive varies (every record is dated 1980-01-01,
and its serialization id is a hash of the records). So a file is always made in a buffer, and
two runs that save the same objects get files that compare equal.

Refused in one line: a file holding objects other than tensors and plain data is refused by
`weights_only=True` with a traceback that advises `weights_only=False`; genprobe never does
that, and says instead which file it will not load.

torch is imported where it is used: the executor checks states in processes that need none.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genprobe.errors import CheckpointError
from genprobe.runs.atomic import atomic_path

if TYPE_CHECKING:
    import torch


def torch_bytes(obj: Any) -> bytes:
    """The contents of a `torch.save` file of `obj`, the same bytes for the same objects."""
    import torch

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def save_torch(path: str | Path, obj: Any) -> None:
    """Write `obj` to `path` as `torch_bytes` gives it, atomically: a reader finds the previous
    file or this one, whole.

    Raises:
        DiskFullError: the file system ran out of space while writing it.
    """
    # made in memory, then written: torch.save writing a file itself reports a full disk as
    # a RuntimeError ("unexpected pos"), which the atomic write cannot tell from any other
    data = torch_bytes(obj)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def load_torch(
    path: str | Path, map_location: torch.device | str = "cpu", recovery: str = ""
) -> Any:
    """What the `torch.save` file at `path` holds, weights-only, its tensors on `map_location`.

    `map_location` is a device this machine has: the caller checks it (`present_device`), so
    that torch's error for a missing one is not taken for a file genprobe cannot load.

    Raises:
        CheckpointError: `path` cannot be read, or is not a `torch.save` file of tensors and
            plain data; one line naming it, followed by `recovery` if given.
    """
    import torch

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
