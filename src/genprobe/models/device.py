"""Where a model runs: cpu, cuda or cuda:N, a runtime setting of every command that loads one.

`check_device` checks the name (at a command's start, so `--device tpu` fails before anything
is written); `present_device` also that this machine has it, where it is about to be used.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from genprobe.errors import ConfigError

if TYPE_CHECKING:
    import torch

_NAME = re.compile(r"^(cpu|cuda(:\d+)?)$")


def check_device(name: str) -> str:
    """`name` if it is cpu, cuda or cuda:N.

    Raises:
        ConfigError: any other name.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError("device", "cpu, cuda or cuda:N", name)
    return name


def present_device(name: str) -> torch.device:
    """The device `name`, which this machine has.

    Raises:
        ConfigError: a name other than cpu, cuda or cuda:N, or a CUDA device not visible here.
    """
    import torch  # here: a config checking its device name imports no torch

    device = torch.device(check_device(name))
    if device.type == "cuda":
        visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) >= visible:
            why = (
                "this torch is a CPU build; docs/gpu.md says how to install a CUDA build"
                if torch.version.cuda is None
                else f"{visible} CUDA GPUs visible"
            )
            raise ConfigError("device", f"a device that exists here ({why})", name)
    return device
