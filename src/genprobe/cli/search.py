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
    genprobe report runs/scan-search
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from genprobe.cli.backend import BACKEND, RAY_ADDRESS, Backend, model_study_executor
from genprobe.cli.model_options import SEQUENCE, TEMPERATURE, ModelOptions, with_model_options
from genprobe.cli.paths import output_folder
from genprobe.cli.sweep import DEVICE, TASK_OPTION


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
def search(
    model: ModelOptions,  # `with_model_options`: --model, --formats, --api, …
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ] = ...,  # type: ignore[assignment]
    task: str = typer.Option(
        "", help="The task: a run's own (the default) or refused; a language model's (needed)."
    ),
    task_option: list[str] = TASK_OPTION,
    target: str = typer.Option(
        "most",
        help="Fitness of an input: most (share of seeds failing it), any (1 if a seed fails "
        "it) or disagree:A,B (1 if seed A is right and seed B is not; of a language model, "
        "A and B are member positions 0, 1, ...). With --against: "
        "disagree (share of the run's seeds right less share of --against's, 0 if negative) "
        "or disagree:A,B (seed A of the run, seed B of --against's).",
    ),
    against: str = typer.Option(
        None,
        help="run:RUN_DIR[@SEEDS], a second finished sweep of the same task and options: "
        "search where the two disagree (--target disagree); with a run: --model only.",
    ),
    generations: int = typer.Option(20, help="Stop after this many generations after the base."),
    population: int = typer.Option(50, help="Parents selected per generation."),
    selection: str = typer.Option(
        "tournament",
        help="Parents: tournament (tournaments of two among every input evaluated), or SAGGA's "
        "kmeans or fitness (--population of the inputs the last generation archived: the "
        "fittest of 10 k-means clusters of their text, or the fittest; then every base input "
        "again).",
    ),
    mutants: int = typer.Option(4, help="Mutants made of each parent."),
    k: int = typer.Option(
        1,
        help="A member fails an input when none of its top k candidates (beam search of "
        "width k; 1: greedy) is right.",
    ),
    temperature: float = TEMPERATURE,
    archive_size: int = typer.Option(1000, help="Stop at this many archived inputs."),
    tau: float = typer.Option(
        None,
        help="Fitness an input needs to be archived (0-1] [0.5; with a --fitness that weighs the "
        "text: SAGGA's 0.01].",
    ),
    fitness: str = typer.Option(
        "any_failure",
        help="The target's score times a weight of the input's text, as SAGGA's: any_failure "
        "(1), length_penalty (1/length: short failures first), trig_length_penalty, "
        "target_length (1/(|length - L| + 1)) or target_problems (similarity to --targets).",
    ),
    target_length: int = typer.Option(None, help="L of target_length."),
    targets: Path = typer.Option(
        None, help="target_problems: a file of inputs, one per line as the report prints them."
    ),
    base_split: str = typer.Option(None, help="Generation 0's split [the task's validation]."),
    base_size: int = typer.Option(200, help="Inputs of generation 0."),
    seed: int = typer.Option(0, help="Seed of parent selection and mutation."),
    data_seed: int = typer.Option(
        0, help="hf:, openai: data seed of the base inputs (a run's: its sweep's own)."
    ),
    minutes: float = typer.Option(
        None,
        help="Stop after this many minutes of the search's CPU time in this process (with a "
        "backstop of ten times as many of wall clock, one at least), over every run of it in "
        "--out (checked between generations; rerun with more to go on: the same command only "
        "reads a finished search). --generations and --archive-size are the stops that do not "
        "depend on the machine.",
    ),
    workers: int = typer.Option(
        None, help="Threads of the decoding [torch's default]; per Ray worker: its CPUs."
    ),
    tag_limit: int = typer.Option(
        None,
        help="Archived inputs the analysis tags as robustness, exploit or unknown, nearest the "
        "clusters' centres first, where the task can tell (integration: SymPy's integrate, "
        "3 s each) [every example the report shows].",
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
    from genprobe.studies.search.config import SearchConfig
    from genprobe.studies.search.search import run_search
    from genprobe.studies.search.study import SEARCH

    config = SearchConfig(
        model=settings, target=target, generations=generations, population=population,
        selection=selection, mutants=mutants, k=k, temperature=temperature,
        archive_size=archive_size, tau=tau,
        fitness=fitness, target_length=target_length,
        targets_file=None if targets is None else str(targets),
        base_split=base_split, base_size=base_size, seed=seed, against=against_spec, task=task,
        task_options=tuple(sorted(parse_pairs(task_option, "--task-option").items())),
        data_seed=data_seed, minutes=minutes, workers=workers, tag_limit=tag_limit,
    )  # fmt: skip
    if backend is not Backend.local:  # bad input: one line, before Ray starts
        config.checked()
    executor = model_study_executor(backend, ray_address, workers, settings.device)
    with executor or contextlib.nullcontext(), status("starting") as log:
        run = run_search(config, out, log=log, executor=executor)
    SEARCH.update_report(run)
    console.print(f"report: {run / 'report.html'}")
