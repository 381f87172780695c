"""`genprobe integration sagga` and `sagga-report`: a genetic search for a model's failures
(Welleck et al. 2022, section 2.2), against any model spec, and its cluster report.

Examples:
    genprobe integration sagga --model ckpt:runs/bwd8-small --out runs/sagga \
        --basis polynomial_robustness --mutation-params robustness --minutes 30
    genprobe integration sagga --model sympy --out runs/sagga-cas --generations 5
    genprobe integration sagga-report runs/sagga
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer

from genprobe.cli.backend import (
    BACKEND,
    RAY_ADDRESS,
    Backend,
    model_study_executor,
    verifier_workers,
)
from genprobe.cli.config_options import FROM_CONFIG, with_config_options
from genprobe.cli.model_options import INTEGRATION, ModelOptions, with_model_options
from genprobe.cli.paths import output_folder
from genprobe.errors import GenprobeError
from genprobe.studies.search.sagga.config import SaggaConfig


@with_model_options(INTEGRATION)
@with_config_options(SaggaConfig, "searched", dict, given_only=True)
def sagga(
    model: ModelOptions,
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ],
    searched: dict[str, Any] = FROM_CONFIG,  # --mutation-params, --basis, --tau, … as given
    # --mutation-params' name before --preset came to mean a study's sizes only; still read
    old_preset: str = typer.Option(None, "--preset", hidden=True),
    basis_file: Path = typer.Option(None, help="Seeds from a file, one problem per line."),
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
) -> None:
    """Mutate equation trees, archive the problems the model fails, cluster and tag them;
    writes RUN_DIR/report.html."""
    from genprobe.cli.console import status
    from genprobe.studies.search.sagga.run import run_sagga
    from genprobe.studies.search.sagga.study import SAGGA

    if old_preset is not None:
        if "preset" in searched:
            raise GenprobeError(
                "--mutation-params is given twice: as --preset (its old name) and as "
                "--mutation-params"
            )
        searched["preset"] = old_preset
    if basis_file is not None:
        searched.update(basis="file", basis_file=str(basis_file))
    workers = searched.get("workers")
    searched["workers"] = verifier_workers(workers, backend)
    config = SaggaConfig(model=model.settings(), **searched)
    executor = model_study_executor(backend, ray_address, workers, model.device)
    with executor or contextlib.nullcontext(), status("starting") as log:
        run = run_sagga(config, out, log=log, executor=executor)
    SAGGA.update_report(run)
    _print(run)


def sagga_report(run: Annotated[Path, typer.Argument(help="A SAGGA run directory.")]) -> None:
    """(Re)write a SAGGA run's cluster report from its files (no model, no SymPy)."""
    from genprobe.studies.search.sagga.study import SAGGA

    SAGGA.write_report(run)
    _print(run)


def _print(run: Path) -> None:
    import json

    from genprobe.cli.console import console

    summary = json.loads((run / "summary.json").read_text())
    effort = summary["effort"]
    console.print(
        f"{summary['archive_size']} failures archived in {summary['generations']} generations "
        f"(stopped by the {summary['stop']}; {effort['mutants']:,} mutants, "
        f"{effort['queries']:,} model queries), {len(summary['clusters'])} clusters"
    )
    for warning in effort["deadline_warnings"]:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    console.print(f"report: {run / 'report.html'}")
