"""Studies: each turns a config into a run directory of result files and reports it.

`STUDIES` is the one table of the studies, each declared once in its own `study.py`
(`genprobe.studies.study.Study`: the kind a run records in `config.json`, its config and
driver, the commands that run it and what a rerun of an interrupted one keeps, its stages, its
report, its tables); the command line registers their commands in its order. `study_of` finds
a run's study by its kind; `report_run` imports the report function only then (so reporting
one study never loads another's dependencies), as `studies.tables.read_tables` does its tables
function. A report function takes the run directory, reads only its result files, and returns
the paths of `report.md` and `report.html` (`genprobe.analysis.render.write_report` writes
both from a list of blocks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from genprobe.errors import ConfigError, RunDirError
from genprobe.runs.rundir import read_config
from genprobe.studies.brittleness.study import BRITTLENESS
from genprobe.studies.integration_train.study import INTEGRATION_TRAIN
from genprobe.studies.probe.study import PROBE
from genprobe.studies.search.sagga.study import SAGGA
from genprobe.studies.search.study import SEARCH
from genprobe.studies.seed_sensitivity.study import LANGUAGE_MODEL, SEED_SENSITIVITY
from genprobe.studies.study import Study

STUDIES: tuple[Study, ...] = (
    SEED_SENSITIVITY, LANGUAGE_MODEL, INTEGRATION_TRAIN, BRITTLENESS, SAGGA, PROBE, SEARCH,
)  # fmt: skip
KINDS: tuple[str, ...] = tuple(kind for study in STUDIES for kind in study.kinds)


def study_of(run: str | Path) -> Study:
    """The study whose run `run` holds, by the kind its config.json records.

    Raises:
        RunDirError: `run` has no readable config.json, or its kind is no study's.
    """
    kind = read_config(run).get("kind")
    study = next((s for s in STUDIES if kind in s.kinds), None)
    if study is None:
        raise RunDirError(
            f"{run} holds a run of kind {kind!r}, which no study knows "
            f"(known: {', '.join(sorted(KINDS))})"
        )
    return study


def report_run(run: str | Path, **settings: Any) -> tuple[Path, Path]:
    """Write the report of the run in `run`, whatever its study; returns (report.md, report.html).
    `settings` (e.g. a seed sweep's `threshold`) go to the study's report function.

    Raises:
        RunDirError: `run` has no readable config.json, or its kind is no study's.
        ConfigError: a setting the study's report does not take.
    """
    study = study_of(run)
    for name in settings:
        if name not in study.report_settings:
            raise ConfigError(name, f"a setting of this run's report ({study.kind})", "given")
    return study.write_report(run, **settings)
