"""What a study declares once, in its own `study.py`: the kind its runs record in
`config.json`, its config and its driver, the commands that run it and what a rerun of an
interrupted one keeps, the stages its shards run in, the function that writes its report and
the one that reads its results as tidy tables.

The study's driver opens its runs under `kind`, its stages name their shards by `stages`, its
readers accept only run directories of its kinds, and `genprobe.studies.STUDIES` lists every
declaration for `genprobe report` and for the command line (what a command interrupted by
Ctrl-C says a rerun keeps). A declaration names its modules by string and imports nothing of
its study, so reading one loads no model, SymPy or plotting library. The command line
registers each command a declaration names (`commands`, `report_commands`: the words typed
after `genprobe`, and the function of `genprobe.cli` that runs it) from `STUDIES`.

A report written by `write_report` records what it was made from (`REPORT_STAMP`: a digest of
config.json, the shard manifests, which name every recorded file's sha256, each checked, and
the study's `report_inputs`; its settings; genprobe's code; the sha256 of the files it wrote),
so a command rerun on a finished run writes it again only when one of them changed
(`update_report`), without importing the report's modules (matplotlib, SciPy).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genprobe.errors import RunDirError
from genprobe.runs.atomic import write_json
from genprobe.runs.provenance import file_sha256
from genprobe.runs.rundir import CONFIG_FILE, lock_run, read_config, writing
from genprobe.runs.shards import MANIFESTS, ShardStore
from genprobe.user_code import remember

REPORT_STAMP = "report.stamp.json"  # what the run's report was written from
REPORT_FILES = ("report.md", "report.html")
FIGURES = "figures"  # where reports draw


@dataclass(frozen=True)
class Study:
    kind: str  # what `config.json` records as the run's kind
    name: str  # the study in words, as an error message names it ("a SAGGA search")
    # "module:Class": the config its runs record (a `genprobe.runs.config.RunConfig`)
    config: str
    # "module:function": its driver, which makes the run directory of a config or resumes it
    run: str
    # the commands that run it, as typed after `genprobe` ("rewriting sweep") -> the function
    # of the command line that is the command ("module:function")
    commands: Mapping[str, str]
    # what a rerun of an interrupted run keeps, as Ctrl-C in one of `commands` says
    resumes: str
    report: str  # "module:function": takes the run directory, returns (report.md, report.html)
    # "module:function": takes the run directory, returns its tables ({name: DataFrame})
    tables: str
    stages: tuple[str, ...] = ()  # the stages of its shards (`shards/<stage>/`), in run order
    report_settings: tuple[str, ...] = ()  # what its report takes beside the run directory
    older_kinds: tuple[str, ...] = ()  # former names of `kind`: their runs are runs of it
    # files its report reads that no shard records (run-relative: those of runs made before
    # their study recorded them); a recorded file is in the stamp through its manifest
    report_inputs: tuple[str, ...] = ()
    # files its report writes beside report.md and report.html that its commands read after
    report_outputs: tuple[str, ...] = ()
    # the commands that write its report alone where writing it runs shards of its own (a
    # SAGGA search's tagging), as `commands`, and what a rerun of an interrupted one keeps
    report_commands: Mapping[str, str] = field(default_factory=dict)
    report_resumes: str = ""

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.kind, *self.older_kinds)

    @property
    def resumed(self) -> dict[str, str]:
        """Each command that runs it or its report, as typed -> what a rerun of it keeps."""
        return {
            **dict.fromkeys(self.commands, self.resumes),
            **dict.fromkeys(self.report_commands, self.report_resumes),
        }

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

    def write_report(self, run: str | Path, **settings: Any) -> tuple[Path, Path]:
        """Write the run's report with `settings` (its `report` function), then what it was
        made from (`REPORT_STAMP`); returns (report.md, report.html).

        Raises:
            RunDirError: `run` is no run directory, or another process is writing it.
        """
        run = Path(run)
        read_config(run)  # a folder that is no run is told so, and gets no lock file
        with writing():
            lock_run(run)
            stamp = self._stamp(run, settings)  # before: the report writes files of its own
            written = load_function(self.report)(run, **settings)
            write_json(run / REPORT_STAMP, {**stamp, "outputs": self._outputs(run)})
        return written

    def report_current(self, run: str | Path, **settings: Any) -> bool:
        """Whether the run's report was written by `write_report` with these settings from
        the files the run holds now, by this code, and its files are all there as written."""
        run = Path(run)
        try:
            stored = json.loads((run / REPORT_STAMP).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if not isinstance(stored, dict):
            return False
        outputs = stored.pop("outputs", None)
        return (
            outputs is not None
            and outputs == self._outputs(run)
            and stored == self._stamp(run, settings)
        )

    def _outputs(self, run: Path) -> dict[str, str] | None:
        """The sha256 of each file the report writes (its figures too); None where one of
        those it always writes is missing."""
        files = (*REPORT_FILES, *self.report_outputs)
        if not all((run / name).is_file() for name in files):
            return None
        figures = [path.relative_to(run).as_posix() for path in (run / FIGURES).glob("*.png")]
        return {name: file_sha256(run / name) for name in (*files, *sorted(figures))}

    def update_report(self, run: str | Path, **settings: Any) -> bool:
        """Write the run's report unless it is current (a finished run's rerun reads it);
        returns whether it was written."""
        if self.report_current(run, **settings):
            return False
        self.write_report(run, **settings)
        return True

    def _stamp(self, run: Path, settings: dict[str, Any]) -> dict[str, Any]:
        ShardStore(run).check_records()  # what the stamp is made from is named where damaged
        digest = hashlib.sha256()
        manifests = sorted((run / MANIFESTS).rglob("*.json"))
        for path in [run / CONFIG_FILE, *manifests, *(run / name for name in self.report_inputs)]:
            if path.is_file():
                digest.update(f"{path.relative_to(run)}\0".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
        return {
            "inputs": digest.hexdigest(),
            "settings": json.loads(json.dumps(settings, sort_keys=True)),
            "code": code_digest(),
        }


def code_digest() -> str:
    """A digest of genprobe's version and of the names, sizes and times of its source files:
    a report written by other code is written again."""
    from genprobe import __version__

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(__version__.encode())
    for folder, dirs, names in os.walk(package):
        dirs.sort()
        for name in sorted(n for n in names if n.endswith(".py")):
            stat = os.stat(os.path.join(folder, name))
            where = os.path.relpath(os.path.join(folder, name), package)
            digest.update(f"{where}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def load_function(spec: str) -> Callable[..., Any]:
    """The function (or class) a declaration names as "module:name", imported now."""
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function)
