"""The `genprobe` command line: one module per command group, wired together here. A study's
commands are registered from its declaration (`STUDIES`: the words typed after `genprobe` and
the function that runs them), in the order of `STUDIES`, as is what Ctrl-C in one says a rerun
keeps."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import typer

from genprobe import __version__
from genprobe.cli import (
    architectures,
    export,
    integration,
    models,
    report,
    rewriting,
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
from genprobe.runs.rundir import writing
from genprobe.studies import STUDIES, study_of
from genprobe.studies.study import load_function


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
# the groups a study's command can be in, by the words before its name ("" for genprobe's own)
GROUPS = {"": app, "rewriting": rewriting.app, "integration": integration.app}


def _register_studies() -> None:
    """Register every command a study declares, as the function it names (with the examples
    after its options, its `epilog`, where it has one)."""
    for study in STUDIES:
        for words, spec in {**study.commands, **study.report_commands}.items():
            group, _, name = words.rpartition(" ")
            function = load_function(spec)
            GROUPS[group].command(name=name, epilog=getattr(function, "epilog", None))(function)


app.command(name="tasks")(tasks.tasks)
app.command(name="architectures")(architectures.architectures)
integration.app.command(name="suite")(suites.suite)
_register_studies()
app.command(name="compare")(sweep.compare)
rewriting.app.command(name="compare")(sweep.compare)
app.command(name="report")(report.report)
app.command(name="export")(export.export)
app.command(name="models")(models.models)
app.add_typer(tasks.app, name="task")
app.add_typer(
    rewriting.app,
    name="rewriting",
    short_help="Symbol rewriting (Weber et al. 2018): data, validity checks, seed sweeps.",
)
app.add_typer(integration.app, name="integration")


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit code 2, never a traceback;
    Ctrl-C exits 130 with a line on how to resume."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        with warnings.catch_warnings(), writing():  # its runs locked until it ends
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


# What a rerun of each interrupted command that resumes keeps, as Ctrl-C in it says: every
# study's commands (from its declaration), and `integration generate`, no study (its run writes
# no report) but FWD and BWD generation are shards of a run in OUT.run. `genprobe report` keeps
# what its run's study declares its report keeps (`_report_keeps`).
RESUMED = {
    **{command: kept for study in STUDIES for command, kept in study.resumed.items()},
    "integration generate": "the finished shards of attempts in OUT.run are kept (FWD and "
    "BWD; IBP starts over)",
}


def _how_to_resume(argv: list[str]) -> str:
    """What a rerun of the interrupted command keeps (`RESUMED`)."""
    words = _command_words(argv)
    command = _command(argv)
    said = next((k for n in (2, 1) if (k := RESUMED.get(" ".join(words[:n])))), None)
    if said is None and words[:1] == ["report"]:
        said = _report_keeps(command, argv[1:])
    if not said:
        return "this command does not resume; run it again to start over."
    same = " (same --out)" if any("--out" in p.opts for p in command.params) else ""
    return f"run the same command again{same} to resume: {said}."


def _report_keeps(command: Any, args: list[str]) -> str:
    """What a rerun of `genprobe report RUN_DIR` keeps: what the report of the run's study
    keeps where it runs shards of its own (a SAGGA search's tagging), else nothing."""
    run = command.make_context("report", list(args), resilient_parsing=True).params["run_dir"]
    try:
        return "" if run is None else study_of(run).report_resumes
    except GenprobeError:  # no run directory of a study
        return ""


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
