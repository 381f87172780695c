"""`genprobe rewriting …`: the symbol-rewriting task and the seed-sensitivity study."""

from __future__ import annotations

import json
import os
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from genprobe.cli.backend import BACKEND, RAY_ADDRESS, Backend, make_executor
from genprobe.cli.console import console, progress_bar
from genprobe.errors import GenprobeError

app = typer.Typer(
    help="Symbol rewriting (Weber et al. 2018): data, validity checks, seed sweeps.",
    no_args_is_help=True,
)


class SuiteName(str, Enum):
    train = "train"
    validation = "validation"
    standard = "standard"
    repeat = "repeat"
    short = "short"
    long = "long"
    uncharacteristic = "uncharacteristic"


class FileFormat(str, Enum):
    srctgt = "srctgt"
    tsv = "tsv"


class LossNormalization(str, Enum):
    sequences = "sequences"
    tokens = "tokens"


class Cell(str, Enum):
    lstm = "lstm"
    gru = "gru"


class Attention(str, Enum):
    bilinear = "bilinear"
    dot = "dot"
    mlp = "mlp"
    none = "none"


def _grammar(
    symbols: int, letters: str, variants: int, identity_weight: float | None, b_quirk: bool
):
    from genprobe.tasks.rewriting.grammar import Grammar

    return Grammar(symbols, letters, variants, identity_weight, b_quirk)


SYMBOLS = typer.Option(40, "--symbols", help="Number of input symbols.")
LETTERS = typer.Option(
    "ABC", "--letters", help="Output letters per input symbol (group size = count)."
)
VARIANTS = typer.Option(2, "--variants", help="Variants per output letter.")
IDENTITY = typer.Option(
    0.15,
    "--identity-weight",
    help="Probability of the in-order permutation; the rest share 1 - it.",
)
DEVICE = typer.Option(
    "cpu",
    help="cpu, cuda or cuda:N: where this command trains or decodes; not part of the run's "
    "config, so a run trained on a GPU can be evaluated or resumed on a CPU.",
)
B_QUIRK = typer.Option(
    False,
    "--authors-b-quirk/--no-authors-b-quirk",
    help="Reproduce the authors' `B -> C1 B1 A1` rule.",
)


@app.command(
    epilog="Example: genprobe rewriting generate --suite long --n 2000 --seed 0 --out data/long"
)
def generate(
    suite: SuiteName = typer.Option(..., help="Which split or test suite."),
    n: int = typer.Option(None, "--n", help="Number of examples (default: the suite's size)."),
    seed: int = typer.Option(0, help="Data seed; each suite draws from it and its own name."),
    file_format: FileFormat = typer.Option(FileFormat.srctgt, "--format", help="srctgt or tsv."),
    out: Path = typer.Option(..., help="Output prefix: PREFIX.src + PREFIX.tgt, or PREFIX.tsv."),
    symbols: int = SYMBOLS,
    letters: str = LETTERS,
    variants: int = VARIANTS,
    identity_weight: float = IDENTITY,
    authors_b_quirk: bool = B_QUIRK,
) -> None:
    """Generate a split in the authors' file formats."""
    from genprobe.tasks.rewriting.formats import write_srctgt, write_tsv
    from genprobe.tasks.rewriting.suites import SUITES
    from genprobe.tasks.rewriting.suites import generate as generate_suite

    grammar = _grammar(symbols, letters, variants, identity_weight, authors_b_quirk)
    examples = generate_suite(
        suite.value, SUITES[suite.value].size if n is None else n, seed, grammar
    )
    if file_format is FileFormat.tsv:
        paths = [write_tsv(f"{out}.tsv", grammar, examples)]
    else:
        paths = write_srctgt(out, grammar, examples)
    console.print(f"wrote {len(examples):,} {suite.value} examples to {', '.join(map(str, paths))}")


@app.command(
    epilog="Example: genprobe rewriting check --src data/long.src --tgt predictions.tgt --json"
)
def check(
    src: Path = typer.Option(..., help="Inputs, one per line (.src or a TSV)."),
    tgt: Path = typer.Option(None, help="Outputs to judge, one per line (omit for a TSV)."),
    as_json: bool = typer.Option(False, "--json", help="Print {n, valid, invalid, accuracy}."),
    symbols: int = SYMBOLS,
    letters: str = LETTERS,
    variants: int = VARIANTS,
) -> None:
    """Count how many given outputs satisfy the validity rule."""
    from genprobe.tasks.rewriting.formats import read_pairs, read_tsv
    from genprobe.tasks.rewriting.validity import encode_outputs, valid_outputs

    grammar = _grammar(symbols, letters, variants, None, False)
    if tgt is None:
        if src.suffix != ".tsv":
            raise GenprobeError("--tgt is required unless --src is a .tsv file")
        inputs, outputs = read_tsv(src, grammar)
    else:
        inputs, outputs = read_pairs(src, tgt, grammar)
    out, length = encode_outputs(grammar, outputs)
    valid = int(valid_outputs(grammar, inputs, out, length).sum())
    result = {
        "n": len(outputs),
        "valid": valid,
        "invalid": len(outputs) - valid,
        "accuracy": valid / len(outputs),
    }
    if as_json:
        print(json.dumps(result))
    else:
        accuracy = 100 * result["accuracy"]
        console.print(f"{valid:,} of {len(outputs):,} outputs valid, accuracy {accuracy:.2f} %")


@app.command(
    epilog="Examples:\n\n  genprobe rewriting sweep --seeds 50 --out runs/weber\n\n"
    "  genprobe rewriting sweep --seeds 8 --train-size 20000 --out runs/small"
)
def sweep(
    seeds: int = typer.Option(
        50, help="Number of seeds (models); seeds are first-seed .. first-seed+N-1."
    ),
    out: Path = typer.Option(
        ..., help="Run directory (created, or resumed if it holds this config)."
    ),
    first_seed: int = typer.Option(1, help="The first seed."),
    data_seed: int = typer.Option(0, help="Seed of the data (all splits)."),
    train_size: int = typer.Option(100_000, help="Training examples."),
    validation_size: int = typer.Option(2_000, help="Validation examples (early stopping)."),
    suite_size: int = typer.Option(2_000, help="Examples per test suite."),
    max_epochs: int = typer.Option(
        20, help="Upper bound on epochs; early stopping usually ends sooner."
    ),
    batch_size: int = typer.Option(64, help="Examples per member and step."),
    lr: float = typer.Option(0.125, help="SGD learning rate."),
    max_grad_norm: float = typer.Option(5.0, help="Gradient norm clip, per member."),
    patience: int = typer.Option(
        2,
        help="Stop a seed after this many epochs without a validation improvement "
        "(1: the paper's rule taken literally).",
    ),
    min_delta: float = typer.Option(
        0.0, help="Validation accuracy (0-1) an epoch must gain to count as an improvement."
    ),
    loss_normalization: LossNormalization = typer.Option(
        LossNormalization.sequences, help="Divide summed token losses by sequences or by tokens."
    ),
    emb: int = typer.Option(32, help="Embedding size."),
    hidden: int = typer.Option(32, help="LSTM hidden size."),
    dropout: float = typer.Option(0.1, help="Dropout on the input and output layers."),
    init_range: float = typer.Option(0.1, help="Uniform init range."),
    cell: Cell = typer.Option(Cell.lstm, help="Recurrent cell of encoder and decoder."),
    attention: Attention = typer.Option(
        Attention.bilinear, help="Attention score: bilinear (Luong general), dot, mlp, none."
    ),
    input_feeding: bool = typer.Option(
        False, "--input-feeding/--no-input-feeding", help="Luong input feeding in the decoder."
    ),
    attention_layer: bool = typer.Option(
        True,
        "--attention-layer/--no-attention-layer",
        help="tanh(W_c [ctx; h]) before the output layer (off: the output layer reads [ctx; h]).",
    ),
    seeds_per_shard: int = typer.Option(
        25,
        help="Seeds trained as one stacked model, one process each (50 seeds: two, one per "
        "core of a laptop); the numbers do not depend on it.",
    ),
    device: str = DEVICE,
    workers: int = typer.Option(
        None,
        help="Processes running shards at once (chunks of seeds, then suites); "
        "default: one per CPU core (with --backend ray: as many as the cluster holds).",
    ),
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
    symbols: int = SYMBOLS,
    letters: str = LETTERS,
    variants: int = VARIANTS,
    identity_weight: float = IDENTITY,
    authors_b_quirk: bool = B_QUIRK,
    report: bool = typer.Option(
        True, "--report/--no-report", help="Write report.md and report.html."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the per-suite summary as JSON."),
) -> None:
    """Train N seeds at once, evaluate every suite, write results and the report. Resumable."""
    from genprobe.studies.seed_sensitivity import SweepConfig, run_sweep
    from genprobe.training.trainer import TrainConfig

    if seeds < 1:
        raise GenprobeError(f"--seeds must be >= 1. Got {seeds} instead.")
    config = SweepConfig(
        seeds=tuple(range(first_seed, first_seed + seeds)),
        grammar=_grammar(symbols, letters, variants, identity_weight, authors_b_quirk),
        data_seed=data_seed,
        train_size=train_size,
        validation_size=validation_size,
        suite_size=suite_size,
        emb=emb,
        hidden=hidden,
        dropout=dropout,
        init_range=init_range,
        cell=cell.value,
        attention=attention.value,
        input_feeding=input_feeding,
        attention_layer=attention_layer,
        train=TrainConfig(
            batch_size=batch_size,
            lr=lr,
            max_grad_norm=max_grad_norm,
            max_epochs=max_epochs,
            patience=patience,
            min_delta=min_delta,
            loss_normalization=loss_normalization.value,
        ),
        seeds_per_shard=seeds_per_shard,
    )
    executor = make_executor(
        backend,
        ray_address,
        local_workers=workers or os.cpu_count() or 1,
        ray_workers=workers,
        gpus=1 if device.startswith("cuda") else 0,
    )
    with executor, progress_bar(quiet=as_json) as bar:
        tasks: dict[str, Any] = {}  # one bar per stacked model (shard)

        def on_progress(shard, p) -> None:
            chunk = shard.spec["seeds"]
            if shard.key not in tasks:
                tasks[shard.key] = bar.add_task(shard.key, total=p.steps)
            bar.update(
                tasks[shard.key],
                completed=p.step,
                total=p.steps,
                description=f"seeds {chunk[0]}-{chunk[-1]}: epoch {p.epoch}, "
                f"{p.active} of {len(chunk)} training",
            )

        log = bar.console.log if not as_json else lambda m: None
        run = run_sweep(config, out, device, executor, on_progress, log)
    _finish(run, report, as_json)


@app.command(
    epilog="Example: genprobe rewriting evaluate runs/weber --src long.tst.src --name long-orig"
)
def evaluate(
    run_dir: Path = typer.Argument(..., help="A finished sweep's run directory."),
    src: Path = typer.Option(..., help="Inputs to evaluate (.src, or a TSV's first column)."),
    name: str = typer.Option(None, help="Suite name in the results (default: the file name)."),
    device: str = DEVICE,
    report: bool = typer.Option(True, "--report/--no-report", help="Rewrite the report."),
    as_json: bool = typer.Option(False, "--json", help="Print the per-suite summary as JSON."),
) -> None:
    """Evaluate every member of a run on external inputs and add them to its results.

    Evaluating other inputs under a name already used replaces that suite's predictions.
    """
    from genprobe.studies.seed_sensitivity import evaluate_external

    evaluate_external(run_dir, src, name, device)
    _finish(run_dir, report, as_json)


@app.command(
    epilog="Example: genprobe rewriting compare runs/paper runs/feeding runs/gru --out runs/compare"
)
def compare(
    runs: list[Path] = typer.Argument(..., help="Two or more sweep run directories."),
    out: Path = typer.Option(..., help="Directory for report.md, report.html, compare.json."),
    names: str = typer.Option(
        None, help="Comma-separated run names (default: the directory names)."
    ),
) -> None:
    """Seed distributions of several sweeps side by side; the first run is the reference."""
    from genprobe.studies.seed_sensitivity.compare import load_runs, write_comparison

    loaded = load_runs(runs, names.split(",") if names else None)
    _, html = write_comparison(loaded, out)
    console.print(f"compared {len(loaded)} runs: {html}")


def _finish(run: Path, report: bool, as_json: bool) -> None:
    from genprobe.studies.seed_sensitivity.report import suite_summaries, write_report
    from genprobe.studies.seed_sensitivity.results import accuracy_table, read_predictions

    if report:
        write_report(run)  # also writes the summaries to stats.json
        stored = json.loads((run / "stats.json").read_text())["summary"]  # keys sorted
        order = json.loads((run / "metrics.json").read_text())["suites"]
        summary = {suite: stored[suite] for suite in order}
    else:
        accuracy = accuracy_table(read_predictions(run))
        summary = {s: v.to_dict() for s, v in suite_summaries(accuracy).items()}
    if as_json:
        print(json.dumps({"run": str(run), "summary": summary}))
        return
    from rich.table import Table

    seeds = next(iter(summary.values()))["n"]
    table = Table(title=f"accuracy % across {seeds} seeds")
    for column in ("suite", "mean", "std", "min", "median", "max"):
        table.add_column(column, justify="right")
    for suite, s in summary.items():
        table.add_row(
            suite, *(f"{100 * s[k]:.2f}" for k in ("mean", "std", "min", "median", "max"))
        )
    console.print(table)
    if report:
        console.print(f"report: {run / 'report.html'}")
