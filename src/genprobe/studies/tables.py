"""Any run's results as tidy pandas DataFrames, and the same tables as CSV or Parquet files.

    from genprobe import read_tables
    tables = read_tables("runs/weber")   # a seed sweep: scores, members, curves, judged
    tables["scores"].groupby("suite")["accuracy"].describe()

`read_tables` finds the run's study by the kind its `config.json` records (`study_of`) and
calls the one tables function that study declares in its `study.py`, as `report_run` calls
its report. The tables by study (each study's `tables.py` lists their columns):

    seed sweep   scores (seed × suite), members (seed), curves (seed × epoch), judged (its
                 predictions as stored: example × seed × suite)
    language model (the seed study's, `evaluate --model`)
                 scores (member × suite), members, judged (example × member × suite)
    brittleness  examples (problem), candidates (problem × rank), scores (suite × policy),
                 budget (candidate of the large search, with --search-budget), judged
    SAGGA        examples (mutant), archive (novel failure), generations (generation)
    training     curves (validation of `integration train`)
    probe        results (member × input × suite), members (member × suite), inputs (input:
                 how many members fail it), judged, search (the large search's candidates,
                 with --search-budget)
    search       examples (input evaluated), archive, generations, clusters, slices

`judged` is the same schema in every study that judges outputs: one row per member × suite ×
input × output (`analysis.judged`, docs/results-schema.md).

`export_tables` (`genprobe export RUN --format csv|parquet [--out DIR] [--table NAME]...`)
writes each table (or those named) to
`DIR/<name>.csv` or `DIR/<name>.parquet` (DIR defaults to `RUN/tables`), each atomically
(`analysis.tables.write_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from genprobe.analysis.tables import FORMATS, write_table
from genprobe.errors import ConfigError, check_choice
from genprobe.studies import study_of
from genprobe.studies.study import load_function

TABLES_DIR = "tables"  # where `export_tables` writes by default, inside the run


def read_tables(run: str | Path) -> dict[str, pd.DataFrame]:
    """The run's results as tidy tables, by name, whatever its study.

    Raises:
        RunDirError: `run` is not a run directory, holds a run of a kind no study knows, or
            has no results yet.
    """
    return load_function(study_of(run).tables)(Path(run))


def export_tables(
    run: str | Path,
    format: str = "csv",
    out: str | Path | None = None,
    names: Sequence[str] = (),
) -> list[Path]:
    """Write every table of `read_tables(run)` (or those `names` asks for) as
    `out/<name>.<format>`; returns the paths.

    Raises:
        ConfigError: a format other than csv or parquet, `out` is a file, or a name that is
            not one of the run's tables (a sweep's memorization tables need `--subsets`),
            before anything is written.
        RunDirError: as `read_tables`.
    """
    check_choice("format", format, FORMATS)
    out = Path(run) / TABLES_DIR if out is None else Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError("out", "a directory", str(out))
    tables = read_tables(run)
    for name in names:
        if name not in tables:
            raise ConfigError("table", f"one of this run's tables ({', '.join(tables)})", name)
    chosen = {name: tables[name] for name in names} if names else tables
    return [write_table(table, out / f"{name}.{format}") for name, table in chosen.items()]
