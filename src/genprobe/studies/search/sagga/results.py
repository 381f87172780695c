"""Reading a SAGGA run's result files: the one reader, for the search's own steps (seeds,
successes) and for the report, which runs no model and no SymPy.

    config.json             the run's config
    archive.parquet         one row per novel failure, in the order found (a run made before
                            it holds archive.jsonl, one JSON row a line: read as it is, and
                            replaced by archive.parquet once its search goes on)
    search.json             stats per generation, why the search stopped (these two the
                            driver's shards of stage `progress`, `studies/search/loop.py`)
    generations/*.parquet   every mutant of a finished generation, with its verdict
    analysis/clusters.json  the clusters of the archive, with their slices, in the one schema
                            of `studies/search/clusters.py` (stage `cluster`; a run made
                            before it holds an older one, read as it is: `read_clusters`)
    analysis/tags/*.parquet exploit tags, by problem (stage `tag`)
    analysis/nearby/*.json  a nearby success per cluster (stage `nearby`)

Each is read through its record (`ShardStore`): one damaged, or whose record is, is named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.errors import RunDirError
from genprobe.runs.rundir import read_config
from genprobe.runs.shards import ShardStore
from genprobe.studies.search import loop
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.sagga.config import SaggaConfig
from genprobe.studies.search.sagga.study import CLUSTER, GENERATION, NEARBY, PROGRESS, SAGGA
from genprobe.studies.search.study import SEARCH
from genprobe.studies.search.tags import read_tags

ARCHIVE = loop.ARCHIVE
JSONL_ARCHIVE = "archive.jsonl"  # the archive of runs made before ARCHIVE
CLUSTERS = "analysis/clusters.json"
ARCHIVE_COLUMNS = (
    "generation", "problem", "text", "length", "fitness", "answers", "outcome", "detail",
    "difference",
)  # fmt: skip


def stored_config(run: str | Path) -> SearchConfig:
    """The run's config as the failure search's, rebuilt from its `config.json`: a SAGGA run's
    (`SaggaConfig.as_search`), or a failure search's with SAGGA's breeder.

    Raises:
        RunDirError: `run` is not a run directory, or holds another study's run.
    """
    if read_config(run).get("kind") not in SEARCH.kinds:
        return SaggaConfig.from_identity(SAGGA.recorded(run)["config"]).as_search()
    config = SearchConfig.from_identity(SEARCH.recorded(run)["config"])
    if config.breeder != "sagga":
        raise RunDirError(f"{run} holds a failure search with the task's breeder, not SAGGA's")
    return config


def archive_file(run: str | Path) -> str:
    """The name of the run's archive: ARCHIVE, or JSONL_ARCHIVE in a run made before it whose
    search has not gone on since."""
    run = Path(run)
    before = not (run / ARCHIVE).exists() and (run / JSONL_ARCHIVE).exists()
    return JSONL_ARCHIVE if before else ARCHIVE


def read_archive(run: str | Path) -> pd.DataFrame:
    """One row per novel failure, in the order found (ARCHIVE_COLUMNS; answers as lists), of
    either file.

    Raises:
        RunDirError: the run has no archive yet.
        DamagedFileError: it is not the one the run recorded.
    """
    path = ShardStore(run).required(PROGRESS, archive_file(run), loop.RESUME)
    if path.name == JSONL_ARCHIVE:
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line]
        return pd.DataFrame(rows, columns=list(ARCHIVE_COLUMNS))
    frame = pd.read_parquet(path)
    return frame.assign(answers=frame["answers"].map(list))


def read_state(run: str | Path) -> dict[str, Any]:
    """`search.json`: why the search stopped, after how many generations, stats of each.

    Raises:
        RunDirError: the run has none yet.
        DamagedFileError: it is not the one the run recorded.
    """
    state = loop.read_state(Path(run))
    if state is None:
        raise RunDirError(f"{run} has no finished generation yet: run the search")
    return state


def read_mutants(
    run: str | Path, generations: int, columns: list[str] | None = None
) -> pd.DataFrame:
    """Every distinct mutant of the first `generations` generations with its verdict (only
    `columns`, where given), in the order made."""
    paths = ShardStore(run).outputs(GENERATION, ".parquet")[:generations]  # each checked
    frames = [pd.read_parquet(path, columns=columns) for path in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def successes(run: str | Path, generations: int) -> pd.DataFrame:
    """Every distinct problem the model solved in the first `generations` generations."""
    mutants = read_mutants(run, generations, ["problem", "text", "status"])
    return mutants[mutants["status"] == "solved"].drop_duplicates("problem")[["problem", "text"]]


@dataclass(frozen=True)
class FoundCluster:
    """A cluster of the archive (a record of `clusters.py`'s schema, `read_clusters`), with the
    nearby success found (or None)."""

    rows: tuple[int, ...]  # archive rows, nearest the centroid first
    central: tuple[str, ...]  # the problems whose mutants the nearby stage tried
    slice: dict[str, Any]  # text, coverage, precision (and more: `read_clusters`)
    nearby: dict[str, Any] | None


@dataclass(frozen=True)
class SaggaResults:
    config: SearchConfig  # `stored_config`
    state: dict[str, Any]
    archive: pd.DataFrame  # with `tag` and `why` where tagged
    clusters: list[FoundCluster]

    @property
    def stats(self) -> pd.DataFrame:
        return pd.DataFrame(self.state["stats"])


def read_tagged_archive(run: str | Path) -> pd.DataFrame:
    """The archive with each failure's exploit tag, why and tag_status, where tagged."""
    return read_archive(run).merge(read_tags(run), on="problem", how="left")


def read_results(run: str | Path) -> SaggaResults:
    """Everything the report shows.

    Raises:
        RunDirError: not a SAGGA run, or its analysis (clusters, tags, nearby successes) was
            not finished for the generations on disk: rerunning the search finishes it.
    """
    run = Path(run)
    config = stored_config(run)
    state = read_state(run)
    archive = read_tagged_archive(run)
    found = read_clusters(run)
    if (found["generations"], found["archive_size"]) != (state["generations"], len(archive)):
        raise _unfinished(run)
    nearby = {
        tuple(result["members"]): result["found"]
        for result in (
            json.loads(p.read_text(encoding="utf-8")) for p in ShardStore(run).outputs(NEARBY)
        )
    }
    clusters = []
    for c in found["clusters"]:
        central = tuple(c["central"])
        if central not in nearby:
            raise _unfinished(run)
        clusters.append(FoundCluster(tuple(c["rows"]), central, c["slice"], nearby[central]))
    return SaggaResults(config, state, archive, clusters)


def read_clusters(run: str | Path) -> dict[str, Any]:
    """`analysis/clusters.json`: generations, archive_size and clusters, each a record of the
    one schema (`clusters.py`: size, rows, apart, slice {text, conditions, coverage,
    precision, contrast}, central). A run made before that schema holds members, central,
    slice (its text), coverage and precision per cluster: read as size, rows, central and
    slice {text, coverage, precision}, the rest of the schema absent.

    Raises:
        RunDirError: the run has none yet (its analysis is not finished).
        DamagedFileError: it is not the one the run recorded.
    """
    path = ShardStore(run).file(CLUSTER, CLUSTERS)
    if path is None:
        raise _unfinished(Path(run))
    found = json.loads(path.read_text(encoding="utf-8"))
    found["clusters"] = [
        c if "rows" in c else {
            "size": len(c["members"]), "rows": c["members"], "central": c["central"],
            "slice": {"text": c["slice"], "coverage": c["coverage"], "precision": c["precision"]},
        }
        for c in found["clusters"]
    ]  # fmt: skip
    return found


def _unfinished(run: Path) -> RunDirError:
    return RunDirError(
        f"{run}: the search's analysis (clusters, tags, nearby successes) is not finished; "
        "rerun the search with the same command to finish it"
    )
