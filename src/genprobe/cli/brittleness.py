"""`genprobe integration brittleness` and `evaluate`: a model on the brittleness study's suites,
or on one dataset; both write a run directory (resumable) and its report.

Examples:
    genprobe integration brittleness --model ckpt:runs/bwd8-small --out runs/brittle \
        --validation data/bwd8.txt.test --preset quick
    genprobe integration brittleness --model lc:fwd_bwd_ibp.pth --out runs/lc \
        --validation prim_fwd.valid --suites robustness-simple compositionality --k 1 10 50
    genprobe integration evaluate --model sympy --data prim_bwd.test --k 1 10 --out runs/sympy
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from genprobe.cli.backend import BACKEND, RAY_ADDRESS, Backend, model_study_executor
from genprobe.cli.config_options import FROM_CONFIG, with_config_options
from genprobe.cli.model_options import INTEGRATION, ModelOptions, with_model_options
from genprobe.cli.paths import output_folder
from genprobe.studies.brittleness.config import (
    EVALUATE_KS,
    EVALUATE_SETTINGS,
    BrittlenessConfig,
)

if TYPE_CHECKING:
    from genprobe.runs.executor import Executor


@with_model_options(INTEGRATION)
@with_config_options(BrittlenessConfig, "given", dict, given_only=True)
def brittleness(
    model: ModelOptions,
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ],
    preset: str = typer.Option("paper", help="Suite sizes: paper or quick."),
    n: int = typer.Option(None, "--n", help="Every suite's N (as in `integration suite`)."),
    given: dict[str, Any] = FROM_CONFIG,  # --suites, --k, --validation, …
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
) -> None:
    """Robustness, compositionality, extrapolation and search-vs-model probes on any model
    (Welleck et al., 2022); writes RUN_DIR/report.html."""
    config = BrittlenessConfig.from_preset(preset, n, model.settings(), **given)
    _run(config, out, model_study_executor(backend, ray_address, None, model.device))


@with_model_options(INTEGRATION)
@with_config_options(
    BrittlenessConfig,
    "given",
    dict,
    derived={"ks": ",".join(map(str, EVALUATE_KS))},  # its own k
    flags={"ks": "--k", "validation": "--data"},  # `validation` in a help: --data
    omit=tuple(f.name for f in fields(BrittlenessConfig) if f.name not in EVALUATE_SETTINGS),
    given_only=True,
)
def evaluate(
    model: ModelOptions,
    data: Annotated[
        Path, typer.Option("--data", help="Problems file (see docs).", exists=True, dir_okay=False)
    ],
    out: Path = typer.Option(
        None, "--out", help="Run directory [default: DATA.eval].", callback=output_folder
    ),
    n: int = typer.Option(None, "--n", help="A sample of N problems [default: all]."),
    given: dict[str, Any] = FROM_CONFIG,  # --k, --seed, --policy, …
) -> None:
    """Fail@k of a model on one dataset, checked by the verifier. It is the brittleness study's
    in-distribution suite alone (per-example rows in RUN_DIR/examples.parquet)."""
    config = BrittlenessConfig.for_dataset(data, n, model.settings(), **given)
    _run(config, output_folder(out or data.with_name(data.name + ".eval")))


def _run(config: Any, out: Path, executor: Executor | None = None) -> None:
    from genprobe.cli.console import console, status
    from genprobe.studies.brittleness.run import run_brittleness
    from genprobe.studies.brittleness.study import BRITTLENESS

    with executor or contextlib.nullcontext(), status("starting") as log:
        run = run_brittleness(config, out, log=log, executor=executor)
    BRITTLENESS.update_report(run)
    _print_summary(run, config.policy, config.ks)
    console.print(f"report: {run / 'report.html'}")


def _with_interval(percent: float, n: int) -> str:
    """`4.2 [3.5, 5.0]`: a Fail@k of n problems and its 95 % Wilson interval, in percent."""
    from genprobe.analysis.stats import wilson_interval

    if n == 0:
        return "–"
    low, high = wilson_interval(round(percent * n / 100), n)
    return f"{percent:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def _print_summary(run: Path, policy: str, ks: tuple[int, ...]) -> None:
    from rich.table import Table

    from genprobe.cli.console import console
    from genprobe.studies.brittleness.tables import fail_columns

    summary = json.loads((run / "summary.json").read_text())
    rows = summary["fail"][policy]
    columns = fail_columns(ks)
    table = Table(title=f"Fail@k (%) per suite, {policy} policy [95 % Wilson interval]")
    for column in ("suite", "n", *columns):
        table.add_column(column, justify="left" if column == "suite" else "right")
    for row in rows:
        table.add_row(
            row["suite"], str(row["n"]), *(_with_interval(row[c], row["n"]) for c in columns)
        )
    console.print(table)
    for warning in summary["deadline_warnings"]:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    for suite, why in summary["left_out"].items():
        console.print(f"left out {suite}: {why}", highlight=False)
