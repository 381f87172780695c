"""`genprobe tasks` and `genprobe task generate | check`: any registered task's data and rule.

Examples:
    genprobe tasks
    genprobe task generate scan --split length_test --out data/length_test.jsonl
    genprobe task generate reverse_string --split length_100 --n 500 --seed 1 --out r100.jsonl
    genprobe task check scan --input predictions.jsonl --json
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from genprobe.cli.console import console
from genprobe.cli.group import command_group
from genprobe.cli.paths import output_file
from genprobe.cli.sweep import TASK_OPTION, print_judged

app = command_group("Any task's examples and exact rule (`genprobe tasks` lists the tasks).")


def tasks(as_json: bool = typer.Option(False, "--json", help="One JSON object per task.")) -> None:
    """List the tasks with their options and splits."""
    from genprobe.tasks.registry import TASKS, load_task

    for name in TASKS:
        task = load_task(name)
        about = " ".join((type(task).__doc__ or "").split()).partition(". ")[0].rstrip(".")
        splits = {
            split: {"description": s.description, "lengths": list(s.lengths), "size": s.size,
                    "finite": s.finite}
            for split, s in task.splits().items()
        }  # fmt: skip
        if as_json:
            print(json.dumps({"task": name, "about": about, "options": task.settings(),
                              "suites": list(task.suites()), "splits": splits}))  # fmt: skip
            continue
        options = ", ".join(f"{k}={v}" for k, v in task.settings().items()) or "none"
        print(f"{name}: {about}.\n  options: {options}\n  suites: {', '.join(task.suites())}")
        for split, s in task.splits().items():
            size = f"{s.size:,}" + (" (all)" if s.finite else "")
            lengths = f"{s.lengths[0]}-{s.lengths[1]}"
            print(f"  {split:<22} {size:>14}  lengths {lengths:<8} {s.description}")


@app.command(
    epilog="Example: genprobe task generate scan --split length_test --out length_test.jsonl"
)
def generate(
    name: str = typer.Argument(..., help="The task."),
    split: str = typer.Option(..., help="Which split (`genprobe tasks` lists them)."),
    out: Path = typer.Option(
        ..., help="Output file: one JSON object per line.", callback=output_file
    ),
    n: int = typer.Option(
        None, "--n", help="Number of examples (default: the split's size; a finite one whole)."
    ),
    seed: int = typer.Option(0, help="Data seed; each split draws from it and its own name."),
    task_option: list[str] = TASK_OPTION,
) -> None:
    """Write a split's examples as JSON lines: {"input": "…", "output": "…"}."""
    from genprobe.options import parse_pairs
    from genprobe.tasks.files import write_examples
    from genprobe.tasks.registry import load_task

    task = load_task(name, parse_pairs(task_option, "--task-option"))
    examples = task.generate(split, task.split_spec(split).size if n is None else n, seed)
    write_examples(out, task, examples)
    console.print(f"wrote {len(examples):,} {split} examples to {out}")


@app.command(epilog="Example: genprobe task check scan --input predictions.jsonl --json")
def check(
    name: str = typer.Argument(..., help="The task."),
    input: Path = typer.Option(
        ..., "--input", help='JSON lines with "input" and "output" fields, tokens by spaces.'
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print {n, right, wrong, accuracy, wrong_lines}."
    ),
    task_option: list[str] = TASK_OPTION,
) -> None:
    """Judge each line's output against its input with the task's exact rule."""
    from genprobe.options import parse_pairs
    from genprobe.tasks.files import read_examples
    from genprobe.tasks.registry import load_task

    task = load_task(name, parse_pairs(task_option, "--task-option"))
    read = read_examples(input, task)
    print_judged(task.verify(read.src, read.out, read.length), read.lines, as_json)
