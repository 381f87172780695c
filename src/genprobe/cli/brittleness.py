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
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from genprobe.cli.backend import (
    BACKEND,
    RAY_ADDRESS,
    Backend,
    model_study_executor,
    verifier_workers,
)
from genprobe.cli.model_options import INTEGRATION, ModelOptions, with_model_options
from genprobe.cli.paths import output_folder
from genprobe.cli.suites import SOLVED_BY_HELP

if TYPE_CHECKING:
    from genprobe.runs.executor import Executor

SUITE_CACHE_HELP = (
    "Directory of the suites that need no model, shared by runs: a later run with the same "
    "suite settings takes them from it [$GENPROBE_CACHE/suites, else "
    "$XDG_CACHE_HOME/genprobe/suites, else ~/.cache/genprobe/suites]."
)
SUITE_HELP = (
    "Suites to run [all but integer-extrapolation; those needing --validation only with it]: "
    "in-distribution, robustness-simple, integer-extrapolation, robustness-validation, "
    "compositionality, operator-extrapolation."
)
OVERLAP = typer.Option(
    "auto",
    help="Verify a batch while the model decodes the next: on, off, or auto (time both on the "
    "first batches, keep the faster).",
)


@with_model_options(INTEGRATION)
def brittleness(
    model: ModelOptions,
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ],
    suites: list[str] = typer.Option(None, "--suites", help=SUITE_HELP, metavar="SUITE…"),
    n: int = typer.Option(None, "--n", help="Every suite's N (as in `integration suite`)."),
    ks: list[int] = typer.Option(
        None, "--k", help="Fail@k for each k [preset's: 1 10 50].", metavar="K…"
    ),
    preset: str = typer.Option("paper", help="Suite sizes: paper or quick."),
    search_budget: int = typer.Option(
        None, help="Section 6: beam and samples of this size on k1*{exp,sin,cos,tan}(k2*x)."
    ),
    policy: str = typer.Option("strict", help="The report's main timeout policy."),
    validation: Path = typer.Option(
        None,
        help="Test or validation file (L&C text, JSONL, …); bundled:integration-cpu's "
        "test split is data/mix6.txt.test, made by `make strong-data`.",
    ),
    split: str = typer.Option(None, help="Its split, for JSONL/Parquet datasets."),
    method: str = typer.Option("bwd", help="operator-extrapolation: fwd, bwd or ibp."),
    deadline: float = typer.Option(2.0, help="Verifier seconds per candidate."),
    workers: int = typer.Option(
        None, help="Verifier and generator processes [one per CPU; per Ray worker: 1]."
    ),
    seed: int = typer.Option(43, help="Seed of every suite."),
    solved_by: str = typer.Option("paper", "--solved-by", help=SOLVED_BY_HELP),
    train_max_ops: int = typer.Option(
        None,
        help="The model's training max_ops M: operator-extrapolation's sets are 1-M, M+5 … M+20 "
        "[read from a ckpt: model's training data, else 15].",
        show_default=False,
    ),
    train_data: Path = typer.Option(
        None,
        help="The model's training data: the report gives the share of its integers per "
        "coefficient range beside Figure 2 [read from a ckpt: model's run directory].",
        show_default=False,
    ),
    suite_cache: Path = typer.Option(
        None,
        "--suite-cache",
        metavar="DIR",
        help=SUITE_CACHE_HELP,
        show_default=False,
        callback=output_folder,
    ),
    no_suite_cache: bool = typer.Option(
        False, "--no-suite-cache", help="Build every suite; read and write no suite cache."
    ),
    overlap: str = OVERLAP,
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
) -> None:
    """Robustness, compositionality, extrapolation and search-vs-model probes on any model
    (Welleck et al., 2022); writes RUN_DIR/report.html."""
    from genprobe.studies.brittleness.config import (
        PRESETS,
        BrittlenessConfig,
        default_suites,
        resolve_sizes,
    )

    sizes = resolve_sizes(preset, n)
    validation_text = None if validation is None else str(validation)
    config = BrittlenessConfig(
        model=model.settings(),
        suites=tuple(suites) if suites else default_suites(validation_text),
        sizes=sizes,
        ks=tuple(sorted(set(ks))) if ks else PRESETS[preset].ks,
        seed=seed, policy=policy, deadline=deadline, validation=validation_text, split=split,
        method=method, search_budget=search_budget, workers=verifier_workers(workers, backend),
        solved_by=solved_by, train_max_ops=train_max_ops,
        train_data=None if train_data is None else str(train_data),
        suite_cache=_suite_cache(suite_cache, no_suite_cache), overlap=overlap,
    )  # fmt: skip
    _run(config, out, model_study_executor(backend, ray_address, workers, model.device))


def _suite_cache(directory: Path | None, off: bool) -> str | None:
    """The suite cache a run uses: `--suite-cache DIR`, else the default; None when off."""
    from genprobe.errors import ConfigError
    from genprobe.studies.brittleness.suite_cache import default_directory

    if off:
        if directory is not None:
            raise ConfigError("--suite-cache", "left out with --no-suite-cache", str(directory))
        return None
    return str(directory or default_directory())


@with_model_options(INTEGRATION)
def evaluate(
    model: ModelOptions,
    data: Annotated[
        Path, typer.Option("--data", help="Problems file (see docs).", exists=True, dir_okay=False)
    ],
    ks: list[int] = typer.Option(
        [1, 10], "--k", help="Fail@k for each k: --k 1 10 50.", metavar="K…"
    ),
    out: Path = typer.Option(
        None, "--out", help="Run directory [default: DATA.eval].", callback=output_folder
    ),
    split: str = typer.Option(None, help="Only rows of this split (JSONL/Parquet datasets)."),
    n: int = typer.Option(None, "--n", help="A sample of N problems [default: all]."),
    policy: str = typer.Option("strict", help="strict (timeout fails) or generous (passes)."),
    deadline: float = typer.Option(2.0, help="Verifier seconds per candidate."),
    workers: int = typer.Option(None, help="Verifier processes [default: one per CPU]."),
    seed: int = typer.Option(43, help="Seed of the sample."),
    overlap: str = OVERLAP,
) -> None:
    """Fail@k of a model on one dataset, checked by the verifier. It is the brittleness study's
    in-distribution suite alone (per-example rows in RUN_DIR/examples.parquet)."""
    from genprobe.studies.brittleness.config import BrittlenessConfig

    config = BrittlenessConfig(
        model=model.settings(),
        suites=("in-distribution",),
        sizes={} if n is None else {"in-distribution": n},
        ks=tuple(sorted(set(ks))),
        seed=seed, policy=policy, deadline=deadline, validation=str(data), split=split,
        workers=workers, overlap=overlap,
    )  # fmt: skip
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
