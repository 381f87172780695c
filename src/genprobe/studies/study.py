"""What a study declares once, in its own `study.py`: the kind its runs record in
`config.json`, the stages its shards run in, the function that writes its report and the one
that reads its results as tidy tables.

The study's driver opens its runs under `kind`, its stages name their shards by `stages`, its
readers accept only run directories of its kinds, and `genprobe.studies.STUDIES` lists every
declaration for `genprobe report`. A declaration imports nothing of its study, so reading one
loads no model, SymPy or plotting library.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genprobe.errors import RunDirError
from genprobe.runs.rundir import read_config
from genprobe.user_code import remember


@dataclass(frozen=True)
class Study:
    kind: str  # what `config.json` records as the run's kind
    name: str  # the study in words, as an error message names it ("a SAGGA search")
    report: str  # "module:function": takes the run directory, returns (report.md, report.html)
    # "module:function": takes the run directory, returns its tables ({name: DataFrame})
    tables: str
    stages: tuple[str, ...] = ()  # the stages of its shards (`shards/<stage>/`), in run order
    report_settings: tuple[str, ...] = ()  # what its report takes beside the run directory
    older_kinds: tuple[str, ...] = ()  # former names of `kind`: their runs are runs of it

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.kind, *self.older_kinds)

    def recorded(self, run: str | Path) -> dict[str, Any]:
        """The run's `config.json`: its kind, config hash and config; the user modules it
        records are looked for where it found them (`user_code.remember`).

        Raises:
            RunDirError: no config.json, or a run of another study.
        """
        stored = read_config(run)
        if stored.get("kind") not in self.kinds:
            raise RunDirError(f"{run} holds a {stored.get('kind')} run, not {self.name}")
        remember(stored.get("provenance", {}).get("user_modules", {}))  # a py: task or model
        return stored


def load_function(spec: str) -> Callable[..., Any]:
    """The function a declaration names as "module:function", imported now."""
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function)
