"""The `genprobe` command line: one module per command group, wired together here."""

from __future__ import annotations

import sys

import typer

from genprobe.cli import (
    brittleness,
    integration,
    models,
    report,
    rewriting,
    sagga,
    suites,
    sweep,
    tasks,
)
from genprobe.errors import GenprobeError

app = typer.Typer(
    name="genprobe",
    help="Did a sequence model learn the rule, or only the training distribution?",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command(name="tasks")(tasks.tasks)
app.add_typer(tasks.app, name="task")
app.command(name="sweep")(sweep.sweep)
app.command(name="evaluate")(sweep.evaluate)
app.command(name="compare")(sweep.compare)
app.add_typer(rewriting.app, name="rewriting")
rewriting.app.command(name="evaluate")(sweep.evaluate)
rewriting.app.command(name="compare")(sweep.compare)
app.add_typer(integration.app, name="integration")
integration.app.command(name="suite")(suites.suite)
integration.app.command(name="evaluate")(brittleness.evaluate)
integration.app.command(name="brittleness")(brittleness.brittleness)
integration.app.command(name="sagga")(sagga.sagga)
integration.app.command(name="sagga-report")(sagga.sagga_report)
app.command(name="report")(report.report)
app.command(name="models")(models.models)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit code 2, never a traceback."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        app(args=_spread_values(argv), standalone_mode=False)
    except GenprobeError as error:
        _fail(str(error))
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except typer.Abort:
        _fail("aborted")
    except Exception as error:
        # click's usage errors (typer vendors click in recent releases, so match by shape)
        if hasattr(error, "format_message") and hasattr(error, "exit_code"):
            _fail(error.format_message())
        raise


# options that take several values after one flag: `--k 1 10 50`, `--suites a b`
MULTI_VALUE = ("--k", "--suites", "--task-option")


def _spread_values(argv: list[str]) -> list[str]:
    """`--k 1 10 50` as click reads repeated options: `--k 1 --k 10 --k 50`."""
    out: list[str] = []
    option = None
    for arg in argv:
        if arg.startswith("-"):
            option = arg if arg in MULTI_VALUE else None
        elif option is not None and out[-1] != option:
            out.append(option)
        out.append(arg)
    return out


def _fail(message: str) -> None:
    print(f"genprobe: error: {message}", file=sys.stderr)
    sys.exit(2)
