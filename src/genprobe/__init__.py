"""genprobe: did a sequence model learn the rule, or only the training distribution?

    from genprobe import read_tables
    tables = read_tables("runs/weber")   # any run's results as tidy pandas DataFrames

`read_tables` and `export_tables` are `genprobe.studies.tables`'s, imported on first use (so
the command line starts without pandas).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_TABLES = ("read_tables", "export_tables")


def __getattr__(name: str) -> Any:
    if name not in _TABLES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("genprobe.studies.tables"), name)


__all__ = ["__version__", *_TABLES]
