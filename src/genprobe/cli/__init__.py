"""The `genprobe` command line: one module per command group, wired together here; what Ctrl-C
in a study's command says a rerun keeps is read from the study's declaration (`STUDIES`)."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import typer

from genprobe import __version__
from genprobe.cli import (
    architectures,
    brittleness,
    export,
    integration,
    models,
    probe,
    report,
    rewriting,
    sagga,
    search,
    suites,
    sweep,
    tasks,
)
from genprobe.cli.group import command_group, help_when_bare
from genprobe.cli.spelling import option_spelling
from genprobe.errors import (
    ConfigError,
    DifferentRunError,
    GenprobeError,
    GenprobeWarning,
    show_warning,
)
from genprobe.studies import STUDIES


def _print_version(wanted: bool) -> None:
    if wanted:
        print(f"genprobe {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="Print the version."
    ),
) -> None:
    help_when_bare(ctx)


app = command_group(
    "Did a sequence model learn the rule, or only the training distribution?", _root
)
app.command(name="tasks")(tasks.tasks)
app.add_typer(tasks.app, name="task")
app.command(name="architectures")(architectures.architectures)
app.command(name="sweep")(sweep.sweep)
app.command(name="evaluate")(sweep.evaluate)
app.command(name="compare")(sweep.compare)
app.command(name="probe")(probe.probe)
app.add_typer(
    rewriting.app,
    name="rewriting",
    short_help="Symbol rewriting (Weber et al. 2018): data, validity checks, seed sweeps.",
)
rewriting.app.command(name="evaluate")(sweep.evaluate)
rewriting.app.command(name="compare")(sweep.compare)
app.add_typer(integration.app, name="integration")
integration.app.command(name="suite")(suites.suite)
integration.app.command(name="evaluate")(brittleness.evaluate)
integration.app.command(name="brittleness")(brittleness.brittleness)
integration.app.command(name="sagga")(sagga.sagga)
integration.app.command(name="sagga-report")(sagga.sagga_report)
app.command(name="search")(search.search)
app.command(name="report")(report.report)
app.command(name="export")(export.export)
app.command(name="models")(models.models)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit code 2, never a traceback;
    Ctrl-C exits 130 with a line on how to resume."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning  # genprobe's warnings as one line each
            # each once, however often met: "once" goes by the message, "default" by the message
            # and the line it is attributed to, and a rerun can meet the same damaged file in
            # two checks (the train stage: its intact members, then its pending shards)
            warnings.simplefilter("once", GenprobeWarning)
            # not standalone: usage errors come here as exceptions, exit codes (0 for --help,
            # 130 for Ctrl-C) as the return value
            code = app(args=_spread_values(argv), prog_name="genprobe", standalone_mode=False)
    except (ConfigError, DifferentRunError) as error:
        _fail(error.describe(option_spelling(_command(argv))))
    except GenprobeError as error:
        _fail(str(error))
    except typer.Abort:
        _fail("aborted")
    except Exception as error:
        # click's usage errors (typer vendors click in recent releases, so match by shape)
        if hasattr(error, "format_message") and hasattr(error, "exit_code"):
            _fail(error.format_message())
        raise
    if code == INTERRUPTED:
        print(f"genprobe: interrupted; {_how_to_resume(argv)}", file=sys.stderr)
    if code:
        sys.exit(code)


INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def _how_to_resume(argv: list[str]) -> str:
    """What a rerun of the interrupted command keeps, as the study it runs declares it."""
    kept = {command: said for study in STUDIES for command, said in study.resumed.items()}
    words = _command_words(argv)
    for length in (2, 1):
        if said := kept.get(" ".join(words[:length])):
            return f"run the same command again (same --out) to resume: {said}."
    return "this command does not resume; run it again to start over."


def _command_words(argv: list[str]) -> list[str]:
    """`rewriting sweep` of `rewriting sweep --seeds 8 …`."""
    words = []
    for word in argv:
        if word.startswith("-"):
            break
        words.append(word)
    return words


def _command(argv: list[str]) -> Any:
    """The click command that `argv` invokes."""
    command = typer.main.get_command(app)
    for word in _command_words(argv):
        command = getattr(command, "commands", {}).get(word, command)
    return command


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
