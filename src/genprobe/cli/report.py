"""`genprobe report RUN_DIR`: statistics, figures, report.md and report.html of any study's run
(the run's kind picks the study, see `genprobe.studies.STUDIES`), from its result files alone:
no model runs and no SymPy."""

from __future__ import annotations

from pathlib import Path

import typer

from genprobe.cli.console import console


def report(
    run_dir: Path = typer.Argument(..., help="A run directory of any study."),
    threshold: float = typer.Option(
        None,
        help="Seed sweeps and probes: the accuracy (0-1) at which a seed or member generalizes "
        "to a suite (default: 0.9).",
    ),
    grokking_threshold: float = typer.Option(
        None,
        help="Sweeps trained over time (and grids of them): the accuracy (0-1) at which a seed "
        "has memorized (training) or grokked (held out, and stays there) (default: 0.99).",
    ),
) -> None:
    """Write report.md and a self-contained report.html with tables and figures (of a grid of
    sweeps, `sweep --vary`: its phase diagram)."""
    from genprobe.studies import report_run
    from genprobe.studies.seed_sensitivity.study import is_grid

    if is_grid(run_dir):
        from genprobe.studies.seed_sensitivity.grid_report import report_grid

        md, page = report_grid(
            run_dir, *([] if grokking_threshold is None else [grokking_threshold])
        )
        console.print(f"wrote {md} and {page}")
        return
    settings = {"threshold": threshold, "grokking_threshold": grokking_threshold}
    md, page = report_run(run_dir, **{k: v for k, v in settings.items() if v is not None})
    console.print(f"wrote {md} and {page}")
