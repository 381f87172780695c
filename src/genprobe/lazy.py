"""A package's public names imported on first use: importing the package loads none of the
modules that define them (so the command line, which reads a config's fields, starts without
SymPy or torch)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, defined_in: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: each name of `defined_in` (a public name → the
    submodule of `package` that defines it) imported from that submodule when first asked.

    Example (in a package's __init__.py):
        __getattr__ = lazy_names(__name__, {"SweepConfig": "config", "run_sweep": "run"})
    """

    def __getattr__(name: str) -> Any:
        if name not in defined_in:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{defined_in[name]}"), name)

    return __getattr__
