"""`genprobe integration …`: the symbolic-integration task (issue 3).

Examples:
    genprobe integration tokens --json
    genprobe integration generate --method bwd --n 1000 --out data/prim_bwd --test-fraction 0.01
    genprobe integration mix --part data/bwd --part data/fwd --out data/mix --test-fraction 0.01
    genprobe integration verify --input answers.jsonl --policy generous --json
    genprobe integration predict --model lc:fwd_bwd_ibp.pth --problems probs.txt --beam 10 \
        --k 10 --out preds.jsonl
    genprobe integration score --model ckpt:runs/bwd --input pairs.jsonl --json
    genprobe integration evaluate --model sympy --data prim_bwd.test --k 1 10 50
    genprobe integration train --data data/prim_bwd.train --out runs/bwd
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from genprobe.cli.backend import BACKEND, RAY_ADDRESS, Backend, make_executor
from genprobe.cli.config_options import FROM_CONFIG, with_config_options
from genprobe.cli.group import command_group
from genprobe.cli.model_options import (
    INTEGRATION,
    SCORING,
    ModelOptions,
    with_model_options,
)
from genprobe.cli.paths import output_file, output_folder
from genprobe.errors import ConfigError
from genprobe.studies.integration_train.config import IntegrationTrainConfig
from genprobe.tasks.integration.generation_config import (
    DatasetFiles,
    GenerationConfig,
    GeneratorConfig,
    TreeSettings,
)
from genprobe.tasks.integration.verifier_config import VerifierConfig

app = command_group("Symbolic integration: generate data, verify candidates, run and train models.")


@app.command()
def tokens(as_json: bool = typer.Option(False, "--json", help="A JSON list in id order.")) -> None:
    """Print the 91-token vocabulary (Lample & Charton's ids)."""
    from genprobe.tasks.integration.vocab import VOCAB

    if as_json:
        print(json.dumps(list(VOCAB)))
        return
    for index, token in enumerate(VOCAB):
        print(f"{index}\t{token}")


def _parse_operators(text: str) -> dict[str, float]:
    weights = {}
    for item in text.split(","):
        name, colon, weight = item.strip().partition(":")
        try:
            weights[name] = float(weight) if colon else 1.0
        except ValueError:
            raise ConfigError("--operators", "'name:weight,…'", text) from None
    return weights


@app.command()
@with_config_options(TreeSettings, "tree")
@with_config_options(GeneratorConfig, "generator", dict)
@with_config_options(GenerationConfig, "run", dict)
@with_config_options(DatasetFiles, "files")
def generate(
    out: Annotated[
        Path,
        typer.Option(
            "--out", help="Output file (text: also OUT.train/valid/test).", callback=output_file
        ),
    ],
    generator: dict[str, Any] = FROM_CONFIG,  # --method, --max-ops, --engine, …
    tree: TreeSettings = FROM_CONFIG,  # --x-probability, --max-int, --negative-ints
    operators: str = typer.Option(None, help="Operator weights 'add:10,mul:10,sin:4,…' [L&C's]."),
    run: dict[str, Any] = FROM_CONFIG,  # --n, --seed, --deadline, …
    files: DatasetFiles = FROM_CONFIG,  # --format, --valid-fraction, --test-fraction
    workers: int = typer.Option(1, help="Worker processes."),
    start_method: str = typer.Option(None, help="IBP: fork, spawn or forkserver."),
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
) -> None:
    """Generate (integrand, primitive) pairs as Lample & Charton's FWD, BWD or IBP.

    FWD and BWD run in OUT.run (resumed if it exists: rerun the command after an interruption)
    on --workers processes or a Ray cluster; IBP runs in this command's --workers processes."""
    from dataclasses import replace

    import sympy

    from genprobe.cli.console import console, progress_bar
    from genprobe.runs.atomic import write_json
    from genprobe.tasks.integration.datasets import write_dataset
    from genprobe.tasks.integration.generation import generate as run_generation
    from genprobe.tasks.integration.generation_run import generate_run

    if operators:
        tree = replace(tree, operators=_parse_operators(operators))
    config = GeneratorConfig(tree=tree, **generator).validated()
    settings = GenerationConfig(config, **run)
    method, n = config.method, settings.n
    if method != "ibp":
        settings = settings.validated()
        executor = make_executor(backend, ray_address, local_workers=workers)
    elif backend is not Backend.local:
        raise ConfigError("--backend", "local for ibp (its rounds depend on each other)", "ray")
    with progress_bar() as progress:
        task = progress.add_task(f"{method} pairs", total=n)

        def on_progress(attempts: int, accepted: int, counters: Any) -> None:
            rate = attempts / (progress.tasks[0].elapsed or 1e-9)
            top = ", ".join(f"{k} {v}" for k, v in counters.most_common(4) if k != "ok")
            described = f"{method} pairs, {rate:.1f} attempts/s" + (f" ({top})" if top else "")
            progress.update(task, completed=accepted, description=described)

        if method == "ibp":
            report = run_generation(
                config, n, seed=settings.seed, workers=workers, deadline=settings.deadline,
                start_method=start_method, max_attempts=settings.max_attempts,
                on_progress=on_progress,
            )  # fmt: skip
        else:
            with executor:
                report = generate_run(
                    settings, out.with_name(out.name + ".run"), executor, workers, on_progress
                )
        progress.update(task, completed=len(report.rows))
    paths = write_dataset(report.rows, out, files.format, files.valid_fraction, files.test_fraction)
    meta = {
        "method": method, "n_requested": n, "n_written": len(report.rows), "seed": settings.seed,
        "attempts": report.attempts, "counters": dict(report.counters),
        "config": _as_dict(config), "sympy_version": sympy.__version__,
        "files": [str(p) for p in paths],
    }  # fmt: skip
    write_json(out.with_name(out.name + ".meta.json"), meta)
    _print_counters(console, report.counters, report.attempts)
    console.print(f"wrote {len(report.rows)} pairs to {', '.join(str(p) for p in paths)}")


@app.command()
@with_config_options(DatasetFiles, "files")
def mix(
    parts: Annotated[
        list[Path],
        typer.Option("--part", help="A dataset: a file, or NAME with NAME.train/valid/test."),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", help="Output file (text: also OUT.train/…).", callback=output_file),
    ],
    files: DatasetFiles = FROM_CONFIG,  # --format, --valid-fraction, --test-fraction
) -> None:
    """Pool generated datasets (every split of each) into one, split again by input, with
    OUT.meta.json naming the parts."""
    from genprobe.cli.console import console
    from genprobe.tasks.integration.mixing import mix_datasets

    meta = mix_datasets(parts, out, files.format, files.valid_fraction, files.test_fraction)
    for part in meta["parts"]:
        console.print(f"{part['data']}: {part['rows']} rows")
    console.print(f"wrote {meta['n_written']} pairs to {', '.join(meta['files'])}")


def _as_dict(config: Any) -> dict:
    from dataclasses import asdict

    return asdict(config)


def _print_counters(console: Any, counters: Any, attempts: int) -> None:
    from rich.table import Table

    table = Table(title=f"{attempts} attempts")
    table.add_column("outcome")
    table.add_column("count", justify="right")
    table.add_column("share", justify="right")
    for name, count in counters.most_common():
        table.add_row(name, str(count), f"{count / max(attempts, 1):.1%}")
    console.print(table)


def _verification_pairs(path: Path) -> list[tuple[Any, Any]]:
    """(problem, candidate) per line. Problems are parsed here so that errors name the line;
    a problem outside the task stays as given and is judged `unsupported`, and candidates are
    left to the verifier, which judges those it cannot read `unparseable`."""
    from genprobe.errors import DataFormatError, ParseError, UnsupportedExpressionError
    from genprobe.studies.integration_models import read_pair_records
    from genprobe.tasks.integration.reading import read_expression

    pairs = []
    for number, problem, candidate in read_pair_records(path):
        try:
            problem = read_expression(problem)
        except UnsupportedExpressionError:
            pass
        except ParseError as error:
            raise DataFormatError(path, number, f"field 'problem': {error}") from None
        pairs.append((problem, candidate))
    return pairs


@app.command()
@with_config_options(VerifierConfig, "config", lambda **given: VerifierConfig(**given).validated())
def verify(
    ctx: typer.Context,
    input_path: Annotated[
        Path, typer.Option("--input", help="JSONL: {problem, candidate} per line.")
    ],
    as_json: bool = typer.Option(False, "--json", help="One JSON verdict per input line."),
    config: VerifierConfig = FROM_CONFIG,  # --deadline, --policy, --symbolic, --workers, …
    confirm: bool = typer.Option(
        False, help="Require a SymPy proof for 'correct' (as --symbolic confirm does)."
    ),
) -> None:
    """Verify candidate antiderivatives.

    `problem` is the integrand f, as prefix tokens (a list, or a string of tokens, with or
    without the model-input head `sub Y'`) or infix text; `candidate` is a proposed F, in
    the same forms. A candidate is correct if F' = f (F + constant is fine).
    """
    from dataclasses import replace

    from rich.console import Console
    from rich.table import Table

    from genprobe.cli.console import progress_bar
    from genprobe.tasks.integration.verifier import Verifier
    from genprobe.tasks.verdict import Outcome

    if confirm:
        if ctx.get_parameter_source("symbolic").name != "DEFAULT" and config.symbolic != "confirm":
            raise ConfigError("--confirm", "left out with --symbolic fallback", "--confirm")
        config = replace(config, symbolic="confirm")
    pairs = _verification_pairs(input_path)
    with Verifier(config) as verifier, progress_bar(quiet=as_json) as progress:
        task = progress.add_task("verifying", total=len(pairs))
        verdicts = verifier.verify_many(pairs, lambda *_: progress.update(task, advance=1))
    if as_json:
        for verdict in verdicts:
            sys.stdout.write(json.dumps(verdict.to_dict()) + "\n")
        return
    table = Table(title=f"{len(verdicts)} candidates, policy {config.policy.value}")
    for column in ("outcome", "count", "share", "median s"):
        table.add_column(column, justify="left" if column == "outcome" else "right")
    for outcome in Outcome:
        chosen = sorted(v.seconds for v in verdicts if v.outcome is outcome)
        if chosen:
            share = len(chosen) / len(verdicts)
            table.add_row(
                outcome.value, str(len(chosen)), f"{share:.1%}", f"{chosen[len(chosen) // 2]:.4f}"
            )
    passed = sum(v.passed for v in verdicts)
    table.caption = f"passed: {passed}/{len(verdicts)}"
    Console().print(table)


@app.command()
@with_model_options(INTEGRATION)
def predict(
    model: ModelOptions,
    problems_path: Annotated[Path, typer.Option("--problems", help="Problems file (see docs).")],
    out: Annotated[
        Path,
        typer.Option("--out", help="JSONL: ranked candidates per problem.", callback=output_file),
    ],
    k: int = typer.Option(10, "--k", help="Candidates per problem."),
) -> None:
    """Ranked candidate antiderivatives, with scores, for every problem of a file."""
    from genprobe.cli.console import console
    from genprobe.runs.atomic import write_text
    from genprobe.studies.integration_models import prediction_records, read_problem_file

    problems, skipped = read_problem_file(problems_path)
    loaded = model.load(min_beam=k)
    try:
        found = loaded.candidates([p.expr for p in problems], k)
    finally:
        loaded.close()
    records = prediction_records(problems, found)
    write_text(out, "".join(json.dumps(record) + "\n" for record in records))
    console.print(
        f"wrote candidates for {len(records)} problems to {out}"
        + (f" ({len(skipped)} outside the task skipped)" if skipped else "")
    )


@app.command()
@with_model_options(SCORING)
def score(
    model: ModelOptions,  # `with_model_options`: --model, --batch-size, --device
    input_path: Annotated[
        Path, typer.Option("--input", help="JSONL: {problem, candidate} per line.")
    ],
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line."),
) -> None:
    """Total log-probability the model gives each candidate, teacher-forced."""
    from genprobe.studies.integration_models import read_candidate_pairs
    from genprobe.tasks.integration.printing import infix_text

    pairs = read_candidate_pairs(input_path)
    loaded = model.load()
    try:
        logprobs = loaded.score(pairs)
    finally:
        loaded.close()
    for (problem, candidate), logprob in zip(pairs, logprobs, strict=True):
        if as_json:
            record = {"problem": infix_text(problem), "candidate": infix_text(candidate)}
            print(json.dumps({**record, "logprob": logprob}))
        else:
            print(f"{logprob:.6f}\t{infix_text(problem)}\t{infix_text(candidate)}")


@with_config_options(IntegrationTrainConfig, "given", dict, given_only=True)
def train(
    data: Annotated[Path, typer.Option("--data", help="Pairs: L&C text, or JSONL/Parquet.")],
    out: Annotated[
        Path,
        typer.Option("--out", help="Run directory (resumed if it exists).", callback=output_folder),
    ],
    preset: str = typer.Option(
        None,
        help="A measured recipe's settings (docs/models.md): cpu or gpu; options given "
        "beside it win.",
    ),
    given: dict[str, Any] = FROM_CONFIG,  # --size, --epochs, --lr, …
    max_minutes: float = typer.Option(
        None, help="Stop after this long (validate, save; rerun to go on)."
    ),
) -> None:
    """Train the integration transformer, with validation Fail@1 (greedy, verified) every
    epoch. Validation comes from DATA's validation split (NAME.valid beside a NAME.train, else
    held out of DATA); writes OUT/report.html."""
    from genprobe.cli.console import console, progress_bar
    from genprobe.studies.integration_train.run import run_training
    from genprobe.studies.integration_train.study import INTEGRATION_TRAIN

    config = IntegrationTrainConfig.from_preset(preset, str(data), **given)
    with progress_bar() as progress:
        task = progress.add_task("training", total=None)

        def on_step(done: int, total: int, loss: float) -> None:
            progress.update(task, completed=done, total=total, description=f"loss {loss:.3f}")

        def on_epoch(metrics: dict) -> None:
            part = f" ({metrics['partial']:.0%} of it)" if "partial" in metrics else ""
            console.print(
                f"epoch {metrics['epoch']}{part}: loss {metrics['train_loss']:.4f}, "
                f"valid Fail@1 {metrics['valid_fail@1']:.1%} ({metrics['train_seconds']:.0f} s)"
            )

        budget = None if max_minutes is None else 60 * max_minutes
        run = run_training(config, out, on_step, on_epoch, budget)
    INTEGRATION_TRAIN.update_report(run)
    console.print(f"model in {out / 'model.pt'} (use --model ckpt:{out})")
    console.print(f"report: {out / 'report.html'}")
