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
from typing import Annotated

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


@with_model_options(INTEGRATION)
def sagga(
    model: ModelOptions,
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ],
    mutation_params: str = typer.Option(
        "uniform",
        help="Mutation parameters (the original's): uniform, robustness or distance.",
    ),
    # --mutation-params' name before --preset came to mean a study's sizes only; still read
    old_preset: str = typer.Option(None, "--preset", hidden=True),
    mutant_form: str = typer.Option(
        "simplified",
        help="simplified (SymPy simplify, as the original) or automatic (SymPy's automatic "
        "evaluation only: several times cheaper, a deviation).",
    ),
    basis: str = typer.Option(
        "polynomial",
        help="Seeds: polynomial, x, polynomial_robustness, trig_robustness, trig or target.",
    ),
    basis_file: Path = typer.Option(None, help="Seeds from a file, one problem per line."),
    fitness: str = typer.Option(
        "length_penalty",
        help="length_penalty, trig_length_penalty, target_length, target_problems or any_failure.",
    ),
    target_length: int = typer.Option(None, help="L of target_length."),
    targets: Path = typer.Option(None, help="target_problems: problems of this file [the ten]."),
    tau: float = typer.Option(0.01, help="Fitness a failure needs to be archived."),
    seed_selection: str = typer.Option("kmeans", help="kmeans or fitness."),
    embedding: str = typer.Option("char", help="char (no download) or st:MODEL."),
    generation_size: int = typer.Option(1000, help="Mutants per generation."),
    seed_size: int = typer.Option(100, help="Seeds selected per generation."),
    archive_size: int = typer.Option(1000, help="Stop at this many archived failures."),
    generations: int = typer.Option(100, help="Stop after this many generations."),
    minutes: float = typer.Option(
        None,
        help="Stop the search after this many minutes of its CPU time in this process (with "
        "a backstop of ten times as many of wall clock, one at least), over every run of it in "
        "--out (checked between its shards; rerun with more to go on: the same command only "
        "reads a finished search). --generations and --archive-size are the stops that do not "
        "depend on the machine. The analysis after the search is not counted: --tag-limit and "
        "--nearby-attempts bound it.",
    ),
    k: int = typer.Option(1, "--k", help="Candidates checked per problem."),
    policy: str = typer.Option("generous", help="generous (a timeout passes) or strict."),
    deadline: float = typer.Option(2.0, help="Verifier seconds per candidate."),
    workers: int = typer.Option(
        None, help="Mutation and verifier processes [one per CPU; per Ray worker: 1]."
    ),
    verify_chunk: int = typer.Option(
        100, help="Problems per verification shard (what a cluster spreads over workers)."
    ),
    tag_limit: int = typer.Option(
        200,
        help="Analysis: tag at most this many failures exploit or robustness, the clusters' "
        "central members first (SymPy gets 3 s of CPU time for each).",
    ),
    nearby_attempts: int = typer.Option(
        20,
        help="Analysis: mutants of each of a cluster's 3 central members that the model "
        "answers in the search for a nearby success (0: none).",
    ),
    seed: int = typer.Option(43, help="Seed of mutations and selection."),
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
) -> None:
    """Mutate equation trees, archive the problems the model fails, cluster and tag them;
    writes RUN_DIR/report.html."""
    from genprobe.cli.console import status
    from genprobe.studies.sagga.config import SaggaConfig
    from genprobe.studies.sagga.search import run_sagga
    from genprobe.studies.sagga.study import SAGGA

    config = SaggaConfig(
        model=model.settings(), preset=old_preset or mutation_params, mutant_form=mutant_form,
        basis="file" if basis_file else basis,
        basis_file=None if basis_file is None else str(basis_file), fitness=fitness,
        target_length=target_length, targets_file=None if targets is None else str(targets),
        tau=tau, selection=seed_selection, embedding=embedding,
        generation_size=generation_size, seed_size=seed_size, archive_size=archive_size,
        generations=generations, seed=seed, k=k, policy=policy, deadline=deadline,
        minutes=minutes, workers=verifier_workers(workers, backend), verify_chunk=verify_chunk,
        tag_limit=tag_limit, nearby_attempts=nearby_attempts,
    )  # fmt: skip
    executor = model_study_executor(backend, ray_address, workers, model.device)
    with executor or contextlib.nullcontext(), status("starting") as log:
        run = run_sagga(config, out, log=log, executor=executor)
    SAGGA.update_report(run)
    _print(run)


def sagga_report(run: Annotated[Path, typer.Argument(help="A SAGGA run directory.")]) -> None:
    """(Re)write a SAGGA run's cluster report from its files (no model, no SymPy)."""
    from genprobe.studies.sagga.study import SAGGA

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
