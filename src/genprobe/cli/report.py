"""`genprobe report RUN_DIR`: statistics, figures, report.md and report.html of a run."""

from __future__ import annotations

from pathlib import Path

import typer

from genprobe.cli.console import console


def report(run_dir: Path = typer.Argument(..., help="A run directory with predictions.")) -> None:
    """Write report.md and a self-contained report.html with tables and figures."""
    from genprobe.analysis.report import write_report

    md, page = write_report(run_dir)
    console.print(f"wrote {md} and {page}")
