"""`genprobe search`: a genetic search for the inputs that the seeds of a finished sweep, or a
language model's prompts, fail, on any token task that says which inputs are valid
(docs/search.md).

Examples:
    genprobe search --model run:runs/scan --out runs/scan-search --generations 30
    genprobe search --model hf:Qwen/Qwen2.5-0.5B --task addition --formats 4 --shots 2 \
        --out runs/qwen-search --target any
    genprobe search --model run:runs/parity --out runs/parity-disagree --target disagree:1,2
    genprobe search --model run:runs/scan-lstm --against run:runs/scan-transformer \
        --out runs/scan-lstm-vs-transformer --target disagree
    genprobe search --model ckpt:runs/bwd8-small --task integration --breeder sagga \
        --selection kmeans --fitness length_penalty --out runs/bwd-sagga
    genprobe report runs/scan-search
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
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
from genprobe.cli.model_options import SEQUENCE, ModelOptions, with_model_options
from genprobe.cli.paths import output_folder
from genprobe.cli.sweep import DEVICE, TASK_OPTION
from genprobe.studies.search.config import SearchConfig


@with_model_options(
    SEQUENCE,
    model_spec=typer.Option(
        ...,
        "--model",
        help="run:RUN_DIR, a finished sweep: every seed is searched (run:RUN_DIR@1,3-5: those); "
        "or hf:PATH, hf:ORG/NAME or openai:MODEL@URL, a language model asked by prompts (needs "
        "--task): every member of its prompt grid is searched.",
    ),
    device=DEVICE,
)
@with_config_options(SearchConfig, "searched", dict)
def search(
    model: ModelOptions,  # `with_model_options`: --model, --formats, --api, …
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ] = ...,  # type: ignore[assignment]
    searched: dict[str, Any] = FROM_CONFIG,  # --target, --generations, --fitness, …
    task_option: list[str] = TASK_OPTION,
    against: str = typer.Option(
        None,
        help="run:RUN_DIR[@SEEDS], a second finished sweep of the same task and options: "
        "search where the two disagree (--target disagree); with a run: --model only.",
    ),
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
) -> None:
    """Mutate inputs, archive those the seeds (or prompts) fail, cluster and slice them; writes
    RUN_DIR/report.html."""
    from genprobe.cli.console import console, status
    from genprobe.options import parse_pairs
    from genprobe.under_test.registry import ModelSpec

    against_spec = None if against is None else ModelSpec.parse(against, "--against")
    settings = model.settings()  # a mistyped or missing model is told before the study loads
    from genprobe.studies.search.search import run_search
    from genprobe.studies.search.study import SEARCH

    config = SearchConfig(
        model=settings,
        against=against_spec,
        task_options=tuple(sorted(parse_pairs(task_option, "--task-option").items())),
        **searched,
    )
    workers = config.workers
    if config.breeder == "sagga":  # verifier processes, as `integration sagga`'s
        config = replace(config, workers=verifier_workers(workers, backend))
    # the task's breeder checks the models too (their seeds or members)
    check = config.validated if config.breeder == "sagga" else config.checked
    if backend is not Backend.local:  # bad input: one line, before Ray starts
        check()
    executor = model_study_executor(backend, ray_address, workers, settings.device)
    with executor or contextlib.nullcontext(), status("starting") as log:
        run = run_search(config, out, log=log, executor=executor)
    SEARCH.update_report(run)
    console.print(f"report: {run / 'report.html'}")
