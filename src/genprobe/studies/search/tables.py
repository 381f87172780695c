"""A failure search's results as tidy tables (`genprobe.studies.tables` reads any run's):

examples     one row per input evaluated, in the order evaluated: its generation, the
             operator and parent that made it, every seed's outcome and answer, its fitness
archive      the archived inputs, in the order found
generations  one row per generation: inputs evaluated, failed, archived, archive size, and
             per operator the mutants asked for, not applicable, invalid and met before
clusters     one row per cluster of the archive: size, share of seeds failing, inputs all
             seeds fail (with --against, per run too: by_run.A.seeds_failing, ...), what sets
             it apart
slices       failure rate (mean share of seeds failing; per run with --against) per binned
             feature value
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from genprobe.studies.search.results import (
    CLUSTERS,
    SEARCH,
    read_archive,
    read_evaluated,
    read_json,
    read_slices,
    stored_config,
)


def run_tables(run: str | Path) -> dict[str, pd.DataFrame]:
    """The search's tables by name: examples, archive, generations, clusters, slices (of a
    search with SAGGA's breeder, SAGGA's: `sagga/tables.py`).

    Raises:
        RunDirError: not a failure search's run, or its search has not run yet.
    """
    config = stored_config(run)
    if config.breeder == "sagga":
        from genprobe.studies.search.sagga.tables import run_tables as sagga_tables

        return sagga_tables(run)
    model = config.model
    state = read_json(run, SEARCH)
    clusters = pd.json_normalize(read_json(run, CLUSTERS)["clusters"])  # by_run.A.seeds_failing
    if not clusters.empty:
        clusters = clusters.drop(columns=["rows", "examples"])
        clusters["apart"] = [
            "; ".join(f"{a['feature']} {a['low']:g}-{a['high']:g}" for a in apart)
            for apart in clusters["apart"]
        ]
    tables = {
        "examples": read_evaluated(run, state["generations"]),
        "archive": read_archive(run),
        "generations": pd.json_normalize(state["stats"]),
        "clusters": clusters,
        "slices": read_slices(run),
    }
    for name in ("examples", "archive"):
        tables[name].insert(0, "model", model)
    return tables
