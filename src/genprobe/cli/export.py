"""`genprobe export RUN_DIR --format csv|parquet [--out DIR] [--table NAME]`: any study's run
as tidy tables (`genprobe.studies.tables`), read from its result files alone: no model runs and
no SymPy."""

from __future__ import annotations

from pathlib import Path

import typer

from genprobe.cli.console import console


def export(
    run_dir: Path = typer.Argument(..., help="A run directory of any study."),
    format: str = typer.Option("csv", "--format", help="csv or parquet."),
    out: Path = typer.Option(None, help="Where the tables go (default: RUN_DIR/tables)."),
    table: list[str] = typer.Option(
        None,
        help="Only this table (repeatable; a sweep with --subsets also has memorization, "
        "consistency and copies).",
    ),
) -> None:
    """Write the run's results as tidy tables: one file per table (a seed sweep: scores,
    members, curves, judged). `judged`, a sweep's, a probe's and a brittleness run's:
    every output judged, in one schema (docs/results-schema.md)."""
    from genprobe.studies.tables import export_tables

    paths = export_tables(run_dir, format, out, table or ())
    console.print(f"wrote {', '.join(p.name for p in paths)} to {paths[0].parent}")
