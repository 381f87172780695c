"""A SAGGA search's results as tidy tables (`genprobe.studies.tables` reads any run's):

examples     one row per distinct mutant of every finished generation, in the order made:
             the problem (prefix tokens and as text), the model's answers, the verdict,
             its fitness
archive      one row per novel failure, in the order found, with its exploit tag where
             tagged
generations  one row per generation: the search's statistics (attempts, mutants, archive
             size, seconds per step, deadlines met)
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from genprobe.studies.search.sagga.results import (
    read_mutants,
    read_state,
    read_tagged_archive,
    stored_config,
)


def run_tables(run: str | Path) -> dict[str, pd.DataFrame]:
    """The search's tables by name: examples, archive, generations.

    Raises:
        RunDirError: not a SAGGA run, or no generation finished yet.
    """
    model = str(stored_config(run).model.spec)
    state = read_state(run)
    stats = pd.json_normalize(state["stats"])
    tables = {
        "examples": read_mutants(run, state["generations"]),
        "archive": read_tagged_archive(run),
        "generations": stats[["generation", *stats.columns.drop("generation")]],
    }
    for name in ("examples", "archive"):
        tables[name].insert(0, "model", model)
    return tables
