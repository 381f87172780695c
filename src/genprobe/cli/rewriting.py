"""`genprobe rewriting …`: the symbol-rewriting task and the seed-sensitivity study."""

from __future__ import annotations

import inspect
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from genprobe.cli.config_options import CONTEXT
from genprobe.cli.console import console
from genprobe.cli.group import command_group
from genprobe.cli.paths import output_file
from genprobe.cli.sweep import merged, print_judged
from genprobe.cli.sweep import sweep as sweep_command
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
    out: Path = typer.Option(
        ...,
        help="Output prefix: PREFIX.src + PREFIX.tgt, or PREFIX.tsv.",
        callback=output_file,
    ),
    symbols: int = SYMBOLS,
    letters: str = LETTERS,
    variants: int = VARIANTS,
    identity_weight: float = IDENTITY,
    authors_b_quirk: bool = B_QUIRK,
) -> None:
    """Generate a split in the authors' file formats."""
    from genprobe.tasks.rewriting.formats import write_srctgt, write_tsv
    from genprobe.tasks.rewriting.suites import SPLITS
    from genprobe.tasks.rewriting.suites import generate as generate_suite

    grammar = _grammar(symbols, letters, variants, identity_weight, authors_b_quirk)
    examples = generate_suite(
        suite.value, SPLITS[suite.value].size if n is None else n, seed, grammar
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
    as_json: bool = typer.Option(
        False, "--json", help="Print {n, valid, invalid, accuracy, invalid_lines}."
    ),
    symbols: int = SYMBOLS,
    letters: str = LETTERS,
    variants: int = VARIANTS,
) -> None:
    """Count how many given outputs satisfy the validity rule."""
    import numpy as np

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
    valid = valid_outputs(grammar, inputs, out, length)
    lines = np.arange(1, len(outputs) + 1)  # every line of the file(s) holds an example
    print_judged(valid, lines, as_json, ("valid", "invalid"))


# `rewriting sweep`'s grammar options, as the rewriting task's options
GRAMMAR = {
    "symbols": ("n_symbols", SYMBOLS),
    "letters": ("letters", LETTERS),
    "variants": ("n_variants", VARIANTS),
    "identity_weight": ("identity_weight", IDENTITY),
    "authors_b_quirk": ("authors_b_quirk", B_QUIRK),
}
SUITE_SIZE = typer.Option(2_000, help="Examples per test suite (the paper's 2,000).")


def rewriting_sweep(**options: Any) -> None:
    """Train N seeds on the rewriting task: `genprobe sweep --task rewriting --suite-size 2000`
    (every option of `genprobe sweep --help`) with the grammar's --symbols, --letters,
    --variants, --identity-weight and --authors-b-quirk."""
    from genprobe.studies.seed_sensitivity.grid import parse_settings

    # only the grammar flags given: the others are the task's own defaults (the paper's), so
    # that `--set task.n_symbols=30` is --symbols 30
    given = options[CONTEXT].get_parameter_source
    grammar = {
        name: (flag, value)
        for flag, (name, _) in GRAMMAR.items()
        if (value := options.pop(flag)) is not None and given(flag).name != "DEFAULT"
    }
    # one given both ways is refused here, named as typed (`genprobe sweep` would name it as
    # the --task-option it is passed as)
    merged(
        "task option",
        "task",
        {name: value for name, (_, value) in grammar.items()},
        lambda name, value: _typed(grammar[name][0], value),
        parse_settings(options["settings"] or []),
    )
    task_option = [f"{name}={value}" for name, (_, value) in grammar.items()]
    sweep_command(task="rewriting", task_option=task_option, **options)


def _typed(flag: str, value: Any) -> str:
    """A grammar flag as typed: `--symbols 30`, `--no-authors-b-quirk`."""
    on, _, off = GRAMMAR[flag][1].param_decls[0].partition("/")
    if isinstance(value, bool):
        return on if value else off
    return f"{on} {value}"


def _rewriting_sweep_signature() -> inspect.Signature:
    """`genprobe sweep`'s options less --task and --task-option, the suites at the paper's size,
    and the grammar's options."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    own = [
        p.replace(kind=keyword, default=SUITE_SIZE if p.name == "suite_size" else p.default)
        for p in inspect.signature(sweep_command, eval_str=True).parameters.values()
        if p.name not in ("task", "task_option")
    ]
    grammar = [
        inspect.Parameter(flag, keyword, default=option, annotation=type(option.default))
        for flag, (_, option) in GRAMMAR.items()
    ]
    return inspect.Signature([*own, *grammar])


rewriting_sweep.__signature__ = _rewriting_sweep_signature()  # type: ignore[attr-defined]
rewriting_sweep.__annotations__ = {
    p.name: p.annotation for p in rewriting_sweep.__signature__.parameters.values()
}
# `genprobe rewriting sweep` (registered from its study's declaration) ends its help with it
rewriting_sweep.epilog = (  # type: ignore[attr-defined]
    "Examples:\n\n  genprobe rewriting sweep --seeds 50 --out runs/weber\n\n"
    "  genprobe rewriting sweep --seeds 8 --train-size 20000 --symbols 30 --out runs/small"
)
