"""`genprobe search`: a genetic search for the inputs that the seeds of a finished sweep fail,
on any token task that says which inputs are valid (docs/search.md).

Examples:
    genprobe search --model run:runs/scan --out runs/scan-search --generations 30
    genprobe search --model run:runs/parity --out runs/parity-disagree --target disagree:1,2
    genprobe search --model run:runs/scan-lstm --against run:runs/scan-transformer \
        --out runs/scan-lstm-vs-transformer --target disagree
    genprobe report runs/scan-search
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from genprobe.cli.backend import BACKEND, RAY_ADDRESS, Backend, model_study_executor
from genprobe.cli.paths import output_folder
from genprobe.cli.sweep import DEVICE, TASK_OPTION


def search(
    model: str = typer.Option(
        ...,
        help="run:RUN_DIR, a finished sweep: every seed is searched (run:RUN_DIR@1,3-5: those).",
    ),
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ] = ...,  # type: ignore[assignment]
    task: str = typer.Option(None, help="The task: the run's own (the default) or refused."),
    task_option: list[str] = TASK_OPTION,
    target: str = typer.Option(
        "most",
        help="Fitness of an input: most (share of seeds failing it), any (1 if a seed fails "
        "it) or disagree:A,B (1 if seed A is right and seed B is not). With --against: "
        "disagree (share of the run's seeds right less share of --against's, 0 if negative) "
        "or disagree:A,B (seed A of the run, seed B of --against's).",
    ),
    against: str = typer.Option(
        None,
        help="run:RUN_DIR[@SEEDS], a second finished sweep of the same task and options: "
        "search where the two disagree (--target disagree).",
    ),
    generations: int = typer.Option(20, help="Stop after this many generations after the base."),
    population: int = typer.Option(50, help="Parents selected per generation."),
    mutants: int = typer.Option(4, help="Mutants made of each parent."),
    archive_size: int = typer.Option(1000, help="Stop at this many archived inputs."),
    tau: float = typer.Option(0.5, help="Fitness an input needs to be archived (0-1]."),
    base_split: str = typer.Option(None, help="Generation 0's split [the task's validation]."),
    base_size: int = typer.Option(200, help="Inputs of generation 0."),
    seed: int = typer.Option(0, help="Seed of parent selection and mutation."),
    minutes: float = typer.Option(
        None,
        help="Stop after this many minutes of this process's CPU time (checked between "
        "generations; rerun to go on). --generations and --archive-size are the stops that do "
        "not depend on the machine.",
    ),
    workers: int = typer.Option(
        None, help="Threads of the decoding [torch's default]; per Ray worker: its CPUs."
    ),
    device: str = DEVICE,
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
) -> None:
    """Mutate inputs, archive those the seeds fail, cluster and slice them; writes
    RUN_DIR/report.html."""
    from genprobe.cli.console import console, status
    from genprobe.options import parse_pairs
    from genprobe.studies.search.config import SearchConfig
    from genprobe.studies.search.report import write_search_report
    from genprobe.studies.search.search import run_search
    from genprobe.tasks.registry import load_task

    asked = None if task is None else load_task(task, parse_pairs(task_option, "--task-option"))
    config = SearchConfig(
        model=model, target=target, generations=generations, population=population,
        mutants=mutants, archive_size=archive_size, tau=tau, base_split=base_split,
        base_size=base_size, seed=seed, against=against, minutes=minutes, workers=workers,
        device=device,
    )  # fmt: skip
    config.checked(asked)  # bad input: one line, before the executor starts
    executor = model_study_executor(backend, ray_address, workers, device)
    with executor or contextlib.nullcontext(), status("starting") as log:
        run = run_search(config, out, log=log, executor=executor, task=asked)
    write_search_report(run)
    console.print(f"report: {run / 'report.html'}")
