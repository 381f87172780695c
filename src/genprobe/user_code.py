"""The user's own code named in a spec (`py:module:function`, `py:module:Class`)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

from genprobe.errors import GenprobeError


def import_user_module(name: str, spec: str) -> ModuleType:
    """Module `name`, found on the Python path or in the current directory (as `python -m`
    finds it; the `genprobe` script alone would not look there).

    Raises:
        GenprobeError: it cannot be imported; the message starts with `spec`.
    """
    here = str(Path.cwd())
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
        importlib.invalidate_caches()
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise GenprobeError(f"{spec}: cannot import {name!r}: {error}") from None
