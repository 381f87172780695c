"""Studies: each turns a config into a run directory of result files and reports it.

`REPORTS` is the one table from a run's kind (`config.json`) to the function that writes its
report, as "module:function", imported only when a run of that kind is reported (so reporting
one study never loads another's dependencies). A report function takes the run directory,
reads only its result files, and returns the paths of `report.md` and `report.html`
(`genprobe.analysis.render.write_report` writes both from a list of blocks).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from genprobe.errors import ConfigError, RunDirError
from genprobe.runs.rundir import read_config

REPORTS: dict[str, str] = {
    "seed-sweep": "genprobe.studies.seed_sensitivity.report:write_report",
    "rewriting-sweep": "genprobe.studies.seed_sensitivity.report:write_report",  # before tasks
    "integration-brittleness": "genprobe.studies.brittleness.report:write_report",
    "integration-sagga": "genprobe.studies.sagga.report:write_sagga_report",
    "integration-train": "genprobe.studies.integration_train.report:write_train_report",
}


# The settings a study's report takes beside the run directory.
SETTINGS = {"seed-sweep": ("threshold",), "rewriting-sweep": ("threshold",)}


def report_run(run: str | Path, **settings: Any) -> tuple[Path, Path]:
    """Write the report of the run in `run`, whatever its study; returns (report.md, report.html).
    `settings` (e.g. a seed sweep's `threshold`) go to the study's report function.

    Raises:
        RunDirError: `run` has no readable config.json, or its kind has no report.
        ConfigError: a setting the study's report does not take.
    """
    kind = read_config(run).get("kind")
    target = REPORTS.get(kind) if isinstance(kind, str) else None
    if target is None:
        raise RunDirError(
            f"{run}: no report for runs of kind {kind!r} (known: {', '.join(sorted(REPORTS))})"
        )
    for name in settings:
        if name not in SETTINGS.get(kind, ()):
            raise ConfigError(name, f"a setting of this run's report ({kind})", "given")
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)(Path(run), **settings)
