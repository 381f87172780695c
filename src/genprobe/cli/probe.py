"""`genprobe probe`: the probe study on any token task, against every seed of a sweep.

Examples:
    genprobe probe --model run:runs/scan-transformer --out runs/scan-probe
    genprobe probe --model run:runs/addition --families operand_swap,carry_chain --k 5 \
        --out runs/addition-probe
    genprobe probe --model openai:base-model@http://localhost:8000/v1 --api completions \
        --task addition --formats 4 --concurrency 32 --out runs/base-model-probe
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer

from genprobe.cli.backend import BACKEND, RAY_ADDRESS, Backend, model_study_executor
from genprobe.cli.config_options import FROM_CONFIG, with_config_options
from genprobe.cli.model_options import SEQUENCE, ModelOptions, with_model_options
from genprobe.cli.paths import output_folder
from genprobe.cli.sweep import TASK_OPTION, THRESHOLD
from genprobe.options import parse_pairs
from genprobe.studies.probe.config import ProbeConfig


@with_model_options(
    SEQUENCE,
    model_spec=typer.Option(
        ...,
        "--model",
        help="The model under test: run:RUN_DIR[@SEEDS] (a finished sweep), hf:PATH or "
        "hf:ORG/NAME (a causal language model in a folder or named on the Hugging Face hub) "
        "or openai:MODEL@URL (an OpenAI-compatible endpoint), asked by prompts (needs "
        "--task), or an integration model (ckpt:, lc:, bundled:, sympy, py:, openai:) for "
        "--task integration.",
    ),
    device=typer.Option("cpu", help="cpu, cuda or cuda:N."),
)
@with_config_options(ProbeConfig, "probed", dict)
def probe(
    model: ModelOptions,  # `with_model_options`: --model, --formats, --api, …
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ],
    probed: dict[str, Any] = FROM_CONFIG,  # --families, --k, --search-budget, …
    task_option: list[str] = TASK_OPTION,
    inputs: list[Path] = typer.Option(
        [],
        "--input",
        help="A file of inputs to decode as a suite of its name: JSON lines "
        'with an "input" field, and for a task with many right outputs optionally a right '
        '"output" on every line, the reference of the search-vs-model split (repeatable).',
    ),
    suite_size: list[str] = typer.Option(
        None,
        "--suite-size",
        metavar="SUITE=N",
        help="N inputs in this task split's or derived suite, as the report names it "
        "(task-operator-extrapolation=40), where it is not --size (repeatable).",
    ),
    search_where: list[str] = typer.Option(
        None,
        "--search-where",
        metavar="COLUMN=V1|V2",
        help="With --search-budget: search only the inputs whose column (a set, a template: "
        "the report's columns of a suite) holds one of these values (repeatable: every one "
        "must hold).",
    ),
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
    threshold: float = THRESHOLD,
) -> None:
    """Perturb a task's inputs by its families and relations (and compositions), decode them
    with every member of the model, verify; writes RUN_DIR/report.html."""
    from genprobe.cli.console import console, status

    settings = model.settings()  # a mistyped or missing model is told before the studies load
    from genprobe.studies.probe.run import run_probe
    from genprobe.studies.probe.study import PROBE

    config = ProbeConfig(
        model=settings,
        task_options=tuple(sorted(parse_pairs(task_option, "--task-option").items())),
        inputs=tuple(map(str, inputs)),
        suite_sizes=_suite_sizes(suite_size),
        search_where=tuple(sorted(parse_pairs(search_where, "--search-where").items())),
        **probed,
    )
    executor = model_study_executor(backend, ray_address, None, settings.device)
    with executor or contextlib.nullcontext(), status("starting") as log:
        run = run_probe(config, out, executor=executor, log=log)
    PROBE.update_report(run, threshold=threshold)
    console.print(f"report: {run / 'report.html'}")


def _suite_sizes(given: list[str] | None) -> tuple[tuple[str, int], ...]:
    """--suite-size's SUITE=N pairs, N a number (`ProbeConfig.validated` checks the rest)."""
    from genprobe.errors import ConfigError

    sizes = parse_pairs(given, "--suite-size")
    for key, inputs in sizes.items():
        if not inputs.isdigit():
            raise ConfigError("--suite-size", f"{key}=N with N a whole number", f"{key}={inputs}")
    return tuple(sorted((key, int(inputs)) for key, inputs in sizes.items()))
