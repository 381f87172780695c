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
from typing import Annotated

import typer

from genprobe.cli.backend import BACKEND, RAY_ADDRESS, Backend, model_study_executor
from genprobe.cli.model_options import SEQUENCE, TEMPERATURE, ModelOptions, with_model_options
from genprobe.cli.paths import output_folder
from genprobe.cli.sweep import TASK_OPTION, THRESHOLD
from genprobe.options import convert, parse_pairs


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
def probe(
    model: ModelOptions,  # `with_model_options`: --model, --formats, --api, …
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ],
    task: str = typer.Option("", help="The task (default: the model's own; another is refused)."),
    task_option: list[str] = TASK_OPTION,
    families: str = typer.Option(
        None, help="Perturbation families, comma-separated [every one the task declares]."
    ),
    relations: str = typer.Option(
        None, help="Metamorphic relations, comma-separated [every one the task declares]."
    ),
    compositions: str = typer.Option(
        None,
        help="Compositions, comma-separated (SCAN: and, after; integration: sum_2, sum_3, "
        "sum_4): suites of composites of base inputs, and Fail@k on those whose every part a "
        "member solves [none].",
    ),
    derived: str = typer.Option(
        None,
        help="Derived suites, comma-separated (integration: robustness-validation, "
        "compositionality): built of the base inputs every member solves, once they are "
        "decoded, then decoded [none].",
    ),
    task_suites: bool = typer.Option(True, help="Also decode the task's own shifted suites."),
    splits: str = typer.Option(
        None,
        help="More of the task's splits to decode as suites, comma-separated (e.g. the "
        "integration task's operator-extrapolation).",
    ),
    inputs: list[Path] = typer.Option(
        [],
        "--input",
        help="A file of inputs to decode as a suite of its name: JSON lines "
        'with an "input" field, and for a task with many right outputs optionally a right '
        '"output" on every line, the reference of the search-vs-model split (repeatable).',
    ),
    base_split: str = typer.Option("", help="The inputs perturbed [the task's validation split]."),
    size: int = typer.Option(200, help="Inputs per suite."),
    draws: int = typer.Option(
        1,
        help="Perturbations of each base input per family, drawn one after another, the "
        "distinct ones kept: a family's suite holds up to size x draws inputs.",
    ),
    data_seed: int = typer.Option(0, help="Data seed of the base inputs and task suites."),
    seed: int = typer.Option(0, help="Seed of the perturbations' random draws (and samples')."),
    k: int = typer.Option(1, "--k", help="Candidates per input: 1 greedy, more by beam search."),
    temperature: float = TEMPERATURE,
    search_budget: int = typer.Option(
        None,
        help="A large search too (Welleck et al. 2022, section 6.1): a beam of this width, every "
        "distinct answer judged; the report says which failures at k it fixes.",
    ),
    search_temperatures: str = typer.Option(
        None,
        help="--search-budget: also the distinct outputs among as many samples at each of "
        "these temperatures, comma-separated (a sweep, a seq2seq integration model, hf: or "
        "openai: of a token task).",
    ),
    search_suites: str = typer.Option(
        None, help="--search-budget: the suites searched, comma-separated [every one]."
    ),
    workers: int = typer.Option(1, help="Processes decoding suites side by side."),
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
    threshold: float = THRESHOLD,
) -> None:
    """Perturb a task's inputs by its families and relations (and compositions), decode them
    with every member of the model, verify; writes RUN_DIR/report.html."""
    from genprobe.cli.console import console, status

    settings = model.settings()  # a mistyped or missing model is told before the studies load
    from genprobe.studies.probe.config import ProbeConfig
    from genprobe.studies.probe.run import run_probe
    from genprobe.studies.probe.study import PROBE

    config = ProbeConfig(
        model=settings, task=task,
        task_options=tuple(sorted(parse_pairs(task_option, "--task-option").items())),
        families=_names(families), relations=_names(relations),
        compositions=_names(compositions) or (), derived=_names(derived) or (),
        task_suites=task_suites,
        splits=_names(splits) or (), inputs=tuple(map(str, inputs)), base_split=base_split,
        size=size, draws=draws, data_seed=data_seed, seed=seed, k=k, temperature=temperature,
        search_budget=search_budget,
        search_temperatures=_numbers(search_temperatures, "--search-temperatures"),
        search_suites=_names(search_suites) or (), workers=workers,
    )  # fmt: skip
    executor = model_study_executor(backend, ray_address, None, settings.device)
    with executor or contextlib.nullcontext(), status("starting") as log:
        run = run_probe(config, out, executor=executor, log=log)
    PROBE.update_report(run, threshold=threshold)
    console.print(f"report: {run / 'report.html'}")


def _numbers(text: str | None, option: str) -> tuple[float, ...]:
    return tuple(convert(option, name, float) for name in _names(text) or ())


def _names(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(name.strip() for name in text.split(",") if name.strip())
