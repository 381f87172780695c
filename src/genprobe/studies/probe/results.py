"""Reading a probe run's files: its config, its suites and every result row."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from genprobe.errors import RunDirError
from genprobe.runs.shards import ShardStore
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.study import DECODE, PROBE


def read_probe(run: str | Path) -> ProbeConfig:
    """The config of the probe run in `run`.

    Raises:
        RunDirError: no config.json, or a run of another study.
    """
    return ProbeConfig.from_identity(PROBE.recorded(run)["config"])


def read_suites(run: str | Path) -> pd.DataFrame:
    """One row per suite: suite, kind, name, inputs, invalid (perturbed inputs refused)."""
    return pd.DataFrame(json.loads((Path(run) / "suites.json").read_text()))


def read_results(run: str | Path) -> pd.DataFrame:
    """Every result row of the run (`decode.py`), each file checked against its manifest, the
    suites in the order the run built them.

    Raises:
        RunDirError: no suite has been decoded yet.
        DamagedFileError: a result file is not what its shard recorded.
    """
    paths = ShardStore(run).outputs(DECODE, ".parquet")
    if not paths:
        raise RunDirError(f"{run} has no results yet: run `genprobe probe` to decode its suites")
    listed = Path(run) / "suites.json"
    order = list(read_suites(run)["suite"]) if listed.exists() else []
    # in the run's order of suites (base, families, ..., as built), not the files' names
    paths = sorted(paths, key=lambda path: _position(order, Path(path).stem))
    return pd.concat([pd.read_parquet(path) for path in paths], ignore_index=True)


def _position(order: list[str], suite: str) -> int:
    return order.index(suite) if suite in order else len(order)
