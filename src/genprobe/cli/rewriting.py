"""`genprobe rewriting …`: the symbol-rewriting task and the seed-sensitivity study."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from genprobe.cli.console import console
from genprobe.cli.group import command_group
from genprobe.cli.sweep import print_judged
from genprobe.errors import GenprobeError

app = command_group("Symbol rewriting (Weber et al. 2018): data, validity checks, seed sweeps.")


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
    from genprobe.tasks.rewriting.validity import valid_outputs
    from genprobe.tasks.tokens import encode_outputs

    grammar = _grammar(symbols, letters, variants, None, False)
    if tgt is None:
        if src.suffix != ".tsv":
            raise GenprobeError("--tgt is required unless --src is a .tsv file")
        inputs, outputs = read_tsv(src, grammar)
    else:
        inputs, outputs = read_pairs(src, tgt, grammar)
    out, length = encode_outputs(grammar.output_tokens, outputs)
    valid = int(valid_outputs(grammar, inputs, out, length).sum())
    print_judged(len(outputs), valid, as_json, ("valid", "invalid"))


# The grammar's flags of `rewriting sweep`, as the rewriting task's options.
GRAMMAR_FLAGS = {
    "--symbols": "n_symbols",
    "--letters": "letters",
    "--variants": "n_variants",
    "--identity-weight": "identity_weight",
}
SWITCHES = {"--authors-b-quirk": "authors_b_quirk=true", "--no-authors-b-quirk": None}


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    epilog="Examples:\n\n  genprobe rewriting sweep --seeds 50 --out runs/weber\n\n"
    "  genprobe rewriting sweep --seeds 8 --train-size 20000 --symbols 30 --out runs/small",
)
def sweep(ctx: typer.Context) -> None:
    """Train N seeds on the rewriting task: `genprobe sweep --task rewriting --suite-size 2000`
    (every option of `genprobe sweep --help`), plus the grammar's --symbols, --letters,
    --variants, --identity-weight and --authors-b-quirk."""
    from genprobe.cli import main

    args, options = [], []
    words = iter(ctx.args)
    for word in words:
        flag, equals, value = word.partition("=")
        if flag in GRAMMAR_FLAGS:
            options += [
                "--task-option",
                f"{GRAMMAR_FLAGS[flag]}={value if equals else next(words, '')}",
            ]
        elif word in SWITCHES:
            options += ["--task-option", SWITCHES[word]] if SWITCHES[word] else []
        elif word == "--task" or word.startswith("--task="):
            raise GenprobeError(
                "rewriting sweep runs the rewriting task: use genprobe sweep --task"
            )
        else:
            args.append(word)
    main(["sweep", "--task", "rewriting", "--suite-size", "2000", *options, *args])
