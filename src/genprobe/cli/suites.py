"""`genprobe integration suite NAME --out FILE`: build one test suite of the brittleness study.

Examples:
    genprobe integration suite robustness-simple --out suites/robustness.parquet
    genprobe integration suite validation-primitives --validation prim_fwd.valid --out v.jsonl
    genprobe integration suite compositionality --solved results.jsonl --out comp.jsonl
    genprobe integration suite operator-extrapolation --method bwd --workers 8 --n 100 \
        --out ops.parquet
    genprobe integration suite operator-extrapolation --train-max-ops 8 --out ops8.parquet
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from genprobe.cli.config_options import field_comments
from genprobe.cli.paths import output_file
from genprobe.studies.brittleness.config import BrittlenessConfig


def suite(
    name: Annotated[
        str,
        typer.Argument(
            help="robustness-simple, integer-extrapolation, validation-primitives, "
            "robustness-validation, compositionality, operator-extrapolation, in-distribution."
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Output file: .jsonl or .parquet.", callback=output_file)
    ],
    n: int = typer.Option(
        None, "--n", help="Size per set or cell (see docs); default: the suite's."
    ),
    seed: int = typer.Option(43, help="The rows depend only on the seed, --n and the inputs."),
    validation: Path = typer.Option(
        None, help="Dataset (L&C text, or JSONL/Parquet with input/output) to draw from."
    ),
    solved: Path = typer.Option(
        None,
        help="Results file (problem, set, reference, and first_correct_rank or "
        "first_generous_rank) of earlier runs.",
    ),
    solved_by: str = typer.Option(
        "paper", "--solved-by", help=field_comments(BrittlenessConfig)["solved_by"]
    ),
    method: str = typer.Option("bwd", help="operator-extrapolation: fwd, bwd or ibp."),
    workers: int = typer.Option(1, help="operator-extrapolation: generator processes."),
    train_max_ops: int = typer.Option(
        15, help="operator-extrapolation: the model's training max_ops M (sets 1-M, M+5 … M+20)."
    ),
    split: str = typer.Option(None, help="Only rows of this split (JSONL/Parquet datasets)."),
) -> None:
    """Build a test suite: one row per problem, with its known antiderivative and metadata."""
    from rich.table import Table

    from genprobe.cli.console import console
    from genprobe.errors import check_choice
    from genprobe.tasks.integration.suites import (
        SOLVED,
        SuiteRequest,
        build_suite,
        get_suite,
        suite_path,
        write_suite,
    )

    about = get_suite(name).about  # an unknown name or a bad file name fails before any work
    suite_path(out)
    check_choice("--solved-by", solved_by, tuple(SOLVED))
    request = SuiteRequest(
        n=n, seed=seed, validation=validation, solved=solved, solved_by=solved_by,
        method=method, workers=workers, train_max_ops=train_max_ops, split=split,
    )  # fmt: skip
    with console.status(f"building {name}"):
        built = build_suite(name, request)
    write_suite(built.frame, out)
    table = Table(title=f"{name}: {len(built.frame)} problems")
    table.add_column("set")
    table.add_column("problems", justify="right")
    for set_name, count in built.frame.groupby("set", sort=False).size().items():
        table.add_row(str(set_name), str(count))
    console.print(table)
    console.print(f"[dim]{about}[/dim]", highlight=False)
    for note in built.notes:
        console.print(note)
    console.print(f"wrote {out}")
