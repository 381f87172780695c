"""Every study's declaration (`genprobe.studies.STUDIES`): the modules it names by string are
there and of the right kind, reading it imports none of them, and the commands it names are the
command line's, every command that says it resumes among them."""

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

import genprobe
from genprobe.cli import RESUMED, app
from genprobe.studies import STUDIES
from genprobe.studies.study import load_function

SRC = str(Path(genprobe.__file__).parents[1])
NAMES = [study.kind for study in STUDIES]


@pytest.mark.parametrize("study", STUDIES, ids=NAMES)
def test_a_study_names_the_config_its_runs_record(study):
    config = load_function(study.config)
    assert inspect.isclass(config)
    for member in ("RUNTIME", "identity", "from_identity"):  # what config.json records of it
        assert hasattr(config, member), member


@pytest.mark.parametrize("study", STUDIES, ids=NAMES)
def test_a_study_names_its_driver_of_its_config_and_a_run_directory(study):
    run = load_function(study.run)
    assert inspect.isfunction(run)
    config, out = list(inspect.signature(run).parameters.values())[:2]
    assert config.annotation in (load_function(study.config).__name__, load_function(study.config))
    assert out.name == "out"


def test_reading_the_declarations_imports_none_of_the_modules_they_name():
    named = sorted(
        {
            spec.partition(":")[0]
            for study in STUDIES
            for spec in (
                study.config,
                study.run,
                study.report,
                study.tables,
                *study.commands.values(),
                *study.report_commands.values(),
            )
        }
    )
    check = (
        "import sys\nimport genprobe.studies\n"
        f"print(sorted(m for m in {named!r} if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.splitlines()[-1] == "[]"


def _commands(group=None, words=()):
    """(words, click command) of every command of the command line, however deep."""
    group = group or typer.main.get_command(app)
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*words, name))
        else:
            yield " ".join((*words, name)), command


@pytest.mark.parametrize("study", STUDIES, ids=NAMES)
def test_a_study_names_the_function_of_each_of_its_commands(study):
    for words, spec in {**study.commands, **study.report_commands}.items():
        assert inspect.isfunction(load_function(spec)), words
        assert spec.startswith("genprobe.cli."), words


def test_every_command_a_study_names_is_one_of_the_command_line():
    named = [command for study in STUDIES for command in study.resumed]
    assert len(named) == len(set(named))  # no command runs two studies
    assert sorted(set(named) - {words for words, _ in _commands()}) == []


def test_every_command_whose_out_says_it_resumes_says_what_a_rerun_keeps():
    """So Ctrl-C in it says what a rerun keeps, not that it does not resume: a study's command,
    or one of the few others that resume (`RESUMED`)."""
    resumed = set(RESUMED)
    says = {
        words
        for words, command in _commands()
        for parameter in command.params
        if "--out" in parameter.opts and "resumed" in (getattr(parameter, "help", "") or "")
    }
    assert "sweep" in says and sorted(says - resumed) == []


@pytest.mark.parametrize("study", STUDIES, ids=NAMES)
def test_what_a_rerun_keeps_reads_as_the_end_of_a_sentence(study):
    """Ctrl-C says "… to resume: {what it keeps}."."""
    for command, kept in study.resumed.items():
        assert kept and kept[0].islower() and not kept.endswith("."), command
    assert bool(study.report_commands) == bool(study.report_resumes)
