"""The `genprobe` command line: one module per command group, wired together here."""

from __future__ import annotations

import sys

import typer

from genprobe.cli import integration, models, report, rewriting, suites
from genprobe.errors import GenprobeError

app = typer.Typer(
    name="genprobe",
    help="Did a sequence model learn the rule, or only the training distribution?",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(rewriting.app, name="rewriting")
app.add_typer(integration.app, name="integration")
integration.app.command(name="suite")(suites.suite)
app.command(name="report")(report.report)
app.command(name="models")(models.models)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit code 2, never a traceback."""
    try:
        app(args=argv, standalone_mode=False)
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


def _fail(message: str) -> None:
    print(f"genprobe: error: {message}", file=sys.stderr)
    sys.exit(2)
