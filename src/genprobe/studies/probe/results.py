"""Reading a probe run's files: its config, its suites and every result row."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.errors import RunDirError
from genprobe.runs.shards import ShardStore
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.study import DECODE, LARGE_SEARCH, PROBE, SUITES
from genprobe.studies.probe.suites import ARRAYS_FILE, SUITES_FILE, suite_columns


def read_probe(run: str | Path) -> ProbeConfig:
    """The config of the probe run in `run`.

    Raises:
        RunDirError: no config.json, or a run of another study.
    """
    return ProbeConfig.from_identity(PROBE.recorded(run)["config"])


def read_suites(run: str | Path) -> pd.DataFrame:
    """One row per suite: suite, kind, name, inputs, invalid (perturbed inputs refused), seen
    (inputs the model trained on; null where not known, absent in runs made before).

    Raises:
        RunDirError: the run has not built its suites yet.
        DamagedFileError: the list is not the one the run recorded.
    """
    suites = _built_suites(run)
    if suites is None:
        raise RunDirError(f"{run} has no suites yet: run `genprobe probe` to build them")
    return suites


def _built_suites(run: str | Path) -> pd.DataFrame | None:
    """`read_suites`, None where the run has none (or was made before it kept them)."""
    path = ShardStore(run).file(SUITES, SUITES_FILE)
    return None if path is None else pd.DataFrame(json.loads(path.read_text()))


def read_results(run: str | Path) -> pd.DataFrame:
    """Every result row of the run (`decode.py`), each file checked against its manifest, the
    suites in the order the run built them; with a column `seen` (the model trained on the
    input) where the run knows, and the suites' columns (`Suite.columns`: a brittleness
    suite's set, template and coefficient range) where they have them.

    Raises:
        RunDirError: no suite has been decoded yet.
        DamagedFileError: a result file is not what its shard recorded.
    """
    paths = ShardStore(run).outputs(DECODE, ".parquet")
    if not paths:
        raise RunDirError(f"{run} has no results yet: run `genprobe probe` to decode its suites")
    suites = _built_suites(run)
    order = [] if suites is None else list(suites["suite"])
    # in the run's order of suites (base, families, ..., as built), not the files' names
    paths = sorted(paths, key=lambda path: (_position(order, _suite_of(Path(path))), path))
    results = pd.concat([pd.read_parquet(path) for path in paths], ignore_index=True)
    if any(Path(path).parent.name != "results" for path in paths):  # a suite in chunks
        results = _member_major(results)
    return results if suites is None else _with_suites(Path(run), suites, results)


def read_large_search(run: str | Path) -> pd.DataFrame | None:
    """The large search's rows (`large_search.py`), in the run's order of suites, or None
    where the run made none (no --search-budget, or not yet).

    Raises:
        DamagedFileError: a file is not what its shard recorded.
    """
    paths = ShardStore(run).outputs(LARGE_SEARCH, ".parquet")
    if not paths:
        return None
    order = list(read_suites(run)["suite"])
    paths = sorted(paths, key=lambda path: (_position(order, Path(path).parent.name), path))
    return pd.concat([pd.read_parquet(path) for path in paths], ignore_index=True)


def _with_suites(run: Path, suites: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """`results` with what the run recorded of each row's input in its suites
    (`suites.build_suites`): a column `seen` (the model trained on it) where the run knows,
    and each suite's columns (`Suite.columns`; null where the input's suite lacks one)."""
    stored = ShardStore(run).file(SUITES, ARRAYS_FILE)
    if stored is None:  # kept by runs since they keep their suites
        return results
    seen = "seen" in suites and not suites["seen"].isna().any()
    with np.load(stored, allow_pickle=False) as arrays:
        kept = [suite_columns(arrays, i) for i in range(len(suites))]
        if not seen and not any(kept):
            return results
        added: dict[str, np.ndarray] = {}
        if seen:
            added["seen"] = np.zeros(len(results), dtype=bool)
        for name in dict.fromkeys(name for columns in kept for name in columns):
            added[name] = np.full(len(results), None, dtype=object)
        for i, suite in enumerate(suites["suite"]):
            rows = (results["suite"] == suite).to_numpy()
            index = results.loc[rows, "index"].to_numpy()
            if seen:
                added["seen"][rows] = arrays[f"{i}.seen"][index]
            for name, values in kept[i].items():
                added[name][rows] = [str(value) or None for value in values[index]]
    return results.assign(**added)


def _member_major(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of suites decoded in chunks as those of one shard a suite: per suite (in their
    order), each member's (in theirs), by index."""
    suite = pd.Categorical(results["suite"], categories=results["suite"].unique())
    member = pd.Categorical(results["member"], categories=results["member"].unique())
    order = np.lexsort((results["index"].to_numpy(), member.codes, suite.codes))
    return results.iloc[order].reset_index(drop=True)


def _suite_of(path: Path) -> str:
    """The suite of a decode shard's file: `results/<suite>.parquet`, or
    `results/<suite>/<chunk>.parquet` (`--shard-size`)."""
    return path.stem if path.parent.name == "results" else path.parent.name


def _position(order: list[str], suite: str) -> int:
    return order.index(suite) if suite in order else len(order)
