"""The command line a new user meets: help, --version, Ctrl-C, specs checked before anything is
written, user code in the current directory, what a different run differs in, startup imports."""

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import typer
from helpers import write_run_config

import genprobe
from genprobe.cli import app
from genprobe.errors import DifferentRunError
from genprobe.runs.provenance import config_hash
from genprobe.runs.rundir import open_run
from genprobe.studies import STUDIES

SRC = str(Path(genprobe.__file__).parents[1])
TINY_SWEEP = (
    "sweep", "--task", "reverse_string", "--seeds", "1", "--train-size", "20",
    "--validation-size", "10", "--suite-size", "10", "--max-epochs", "1", "--no-report",
)  # fmt: skip


@pytest.mark.parametrize("argv", [(), ("rewriting",), ("integration",), ("task",)])
def test_a_bare_group_prints_its_help_and_exits_0(cli, argv):
    code, out, err = cli(*argv)
    assert code == 0 and err == ""
    assert out.startswith(f"Usage: genprobe {' '.join(argv)}".rstrip() + " [OPTIONS] COMMAND")


@pytest.mark.parametrize("argv", [(), ("rewriting",), ("integration",), ("task",)])
def test_a_group_lists_each_command_with_its_whole_first_sentence(cli, monkeypatch, argv):
    monkeypatch.setenv("COLUMNS", "80")
    group = typer.main.get_command(app)
    for name in argv:
        group = group.commands[name]
    code, out, _ = cli(*argv, "--help")
    # without whitespace: the terminal wraps lines and may break a word at its hyphen
    listing = "".join(out.split("Commands:")[1].split())
    assert code == 0
    for name, command in group.commands.items():
        first = command.help.split(". ")[0].split(".\n")[0].rstrip(".")
        assert name + "".join(first.split()) in listing, name


def test_version(cli):
    assert cli("--version") == (0, f"genprobe {genprobe.__version__}\n", "")


def test_help_keeps_bracketed_text(cli):
    code, out, _ = cli("integration", "sagga", "--help")
    out = " ".join(out.split())  # as wrapped for the terminal
    assert code == 0
    assert "genprobe[ray]" in out
    assert "[default: start or join a Ray instance on this machine]" in out


def test_help_names_every_option_in_full_at_80_columns(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    for argv, command in [
        (("sweep",), typer.main.get_command(app).commands["sweep"]),
        (("integration", "brittleness"), typer.main.get_command(app).commands["integration"]),
    ]:
        if len(argv) == 2:
            command = command.commands[argv[1]]
        code, out, _ = cli(*argv, "--help")
        assert code == 0
        assert max(len(line) for line in out.splitlines()) <= 80
        words = out.split()
        for parameter in command.params:
            for name in parameter.opts:
                assert name in words or any(w.startswith(name + "/") for w in words), name


def test_list_options_show_a_plain_metavar(cli):
    out = cli("integration", "brittleness", "--help")[1] + cli("sweep", "--help")[1]
    assert "--k <int>…" in out and "--suites <str>…" in out and "--task-option NAME=VALUE" in out
    assert "list[" not in out


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_ctrl_c_in_a_sweep_exits_130_saying_how_to_resume(cli, monkeypatch, tmp_path):
    monkeypatch.setattr("genprobe.studies.seed_sensitivity.run.train_shards", _interrupt)
    code, _, err = cli(*TINY_SWEEP, "--out", str(tmp_path / "run"))
    assert code == 130
    assert err.splitlines() == [
        "genprobe: interrupted; run the same command again (same --out) to resume: the "
        "finished shards are kept and a seed chunk in training goes on from its last save, "
        "at most a minute back."
    ]


SHARDS_KEPT = "the finished shards are kept"
GENERATIONS_REPLAYED = "the finished generations are replayed from disk"
SWEEP_KEPT = (
    "the finished shards are kept and a seed chunk in training goes on from its last save, at "
    "most a minute back"
)
GENERATION_KEPT = (
    "the finished shards of attempts in OUT.run are kept (FWD and BWD; IBP starts over)"
)
ANSWERS_KEPT = "the suites answered are kept, and an endpoint's answers come from its answer cache"
LANGUAGE_MODEL = ("--model", "openai:m@http://127.0.0.1:9/v1", "--task", "reverse_string")
OUT = ("--out", "{run}")
# Every command that runs a study (or writes a report that runs shards), as far as it calls the
# study's driver (or report function): (the command, what Ctrl-C there says a rerun keeps).
STUDY_COMMANDS = {
    "sweep": ((*TINY_SWEEP, *OUT), SWEEP_KEPT),
    "rewriting sweep": (("rewriting", *TINY_SWEEP[:1], *TINY_SWEEP[3:], *OUT), SWEEP_KEPT),
    "evaluate": (("evaluate", *LANGUAGE_MODEL, *OUT), ANSWERS_KEPT),
    "rewriting evaluate": (("rewriting", "evaluate", *LANGUAGE_MODEL, *OUT), ANSWERS_KEPT),
    "integration brittleness": (
        ("integration", "brittleness", "--model", "sympy", "--suites", "robustness-simple", *OUT),
        SHARDS_KEPT,
    ),
    "integration evaluate": (
        ("integration", "evaluate", "--model", "sympy", "--data", "{data}", *OUT), SHARDS_KEPT
    ),
    "integration sagga": (("integration", "sagga", "--model", "sympy", *OUT), GENERATIONS_REPLAYED),
    "integration sagga-report": (
        ("integration", "sagga-report", "{run}"), "the finished tagging shards are kept"
    ),
    "integration train": (
        ("integration", "train", "--data", "{data}", *OUT),
        "training goes on from the last save, made after every epoch and every ten minutes",
    ),
    "probe": (("probe", "--model", "sympy", "--task", "integration", *OUT), SHARDS_KEPT),
    "search": (("search", "--model", "sympy", "--task", "integration", *OUT), GENERATIONS_REPLAYED),
}  # fmt: skip


def test_every_command_of_a_study_is_interrupted_below():
    assert sorted(STUDY_COMMANDS) == sorted(c for study in STUDIES for c in study.resumed)


@pytest.mark.parametrize("command", STUDY_COMMANDS)
def test_ctrl_c_in_a_study_says_what_a_rerun_keeps(cli, monkeypatch, tmp_path, command):
    study = next(study for study in STUDIES if command in study.resumed)
    # its driver, or for a command that writes its report alone, its report function
    called = study.run if command in study.commands else study.report
    monkeypatch.setattr(called.replace(":", "."), _interrupt)
    (data := tmp_path / "data.txt").write_text("x^2\n")
    argv, kept = STUDY_COMMANDS[command]
    if "{run}" in argv:  # a report of a run there is
        (tmp_path / "run").mkdir()
        stored = {"kind": study.kind, "hash": config_hash({}), "config": {}}
        (tmp_path / "run" / "config.json").write_text(json.dumps(stored))
    code, _, err = cli(*(word.format(data=data, run=tmp_path / "run") for word in argv))
    same = " (same --out)" if "--out" in argv else ""  # sagga-report: its run as an argument
    assert (code, err.splitlines()) == (130, [
        f"genprobe: interrupted; run the same command again{same} to resume: {kept}."
    ])  # fmt: skip


def test_ctrl_c_in_a_generation_says_its_run_keeps_the_finished_shards(cli, monkeypatch, tmp_path):
    """`integration generate` is no study, but FWD and BWD resume in OUT.run."""
    monkeypatch.setattr("genprobe.tasks.integration.generation_run.generate_run", _interrupt)
    code, _, err = cli("integration", "generate", "--method", "fwd", "--n", "2",
                       "--out", str(tmp_path / "pairs.txt"))  # fmt: skip
    assert (code, err.splitlines()) == (130, [
        "genprobe: interrupted; run the same command again (same --out) to resume: "
        f"{GENERATION_KEPT}."
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("integration-sagga", "run the same command again to resume: the finished tagging "
         "shards are kept."),
        ("probe", "this command does not resume; run it again to start over."),
    ],
)  # fmt: skip
def test_ctrl_c_in_a_report_says_what_its_studys_report_keeps(
    cli, monkeypatch, tmp_path, kind, said
):
    """A SAGGA search's report runs tagging shards; a probe's reads its files alone."""
    study = next(study for study in STUDIES if study.kind == kind)
    monkeypatch.setattr(study.report.replace(":", "."), _interrupt)
    write_run_config(run := tmp_path / "run", kind)
    code, _, err = cli("report", str(run))
    assert (code, err.splitlines()) == (130, [f"genprobe: interrupted; {said}"])


def test_ctrl_c_in_a_command_that_does_not_resume(cli, monkeypatch, tmp_path):
    monkeypatch.setattr("genprobe.tasks.files.write_examples", _interrupt)
    code, _, err = cli("task", "generate", "scan", "--split", "all", "--n", "3",
                       "--out", str(tmp_path / "x.jsonl"))  # fmt: skip
    assert code == 130
    assert err == (
        "genprobe: interrupted; this command does not resume; run it again to start over.\n"
    )


def test_a_different_run_names_the_options_that_differ(cli, monkeypatch, tmp_path):
    monkeypatch.setattr("genprobe.studies.seed_sensitivity.run.train_shards", _interrupt)
    run = tmp_path / "run"
    assert cli(*TINY_SWEEP, "--seeds-per-shard", "25", "--out", str(run))[0] == 130
    code, _, err = cli(*TINY_SWEEP, "--seeds-per-shard", "10", "--lr", "0.5", "--out", str(run))
    assert code == 2
    assert err == (
        f"genprobe: error: {run} holds a different run (--seeds-per-shard: run has 25, command "
        "has 10; --lr: run has 0.125, command has 0.5): choose another --out\n"
    )


@pytest.mark.parametrize(
    "setting, message",
    [
        ("--lr=inf", "--lr must be a finite number > 0 (in float32: at most 3.4e+38). Got inf"),
        ("--lr=-inf", "--lr must be a finite number > 0 (in float32: at most 3.4e+38). Got -inf"),
        ("--lr=nan", "--lr must be a finite number > 0 (in float32: at most 3.4e+38). Got nan"),
        ("--lr=1e39", "--lr must be a finite number > 0 (in float32: at most 3.4e+38). Got 1e+39"),
        ("--max-grad-norm=inf", "--max-grad-norm must be a finite number >= 0"),
        ("--weight-decay=nan", "--weight-decay must be a finite number >= 0"),
        ("--model-option=init_range=inf", "--init-range must be a finite number > 0"),
    ],
)
def test_a_sweep_refuses_a_setting_that_is_not_finite_before_writing(
    cli, tmp_path, setting, message
):
    out = tmp_path / "run"
    code, _, err = cli(*TINY_SWEEP, setting, "--out", str(out))
    assert code == 2 and err.startswith(f"genprobe: error: {message}"), err
    assert len(err.splitlines()) == 1 and not out.exists()


@dataclass(frozen=True)
class Settings:
    """A run config as `runs.config.RunConfig` has it, its identity given."""

    RUNTIME: ClassVar[tuple[str, ...]] = ()
    fields: dict

    def identity(self) -> dict:
        return self.fields

    @classmethod
    def from_identity(cls, identity: dict) -> "Settings":
        return cls(identity)


def test_open_run_names_each_differing_key_with_both_values(tmp_path):
    config = Settings({"seeds": [1, 2], "train": {"lr": 0.1, "batch_size": 64}, "note": None})
    open_run(tmp_path / "run", "sweep", config)
    changed = Settings({"seeds": (1, 2, 3), "train": {"lr": 0.1, "batch_size": 32}, "extra": True})
    with pytest.raises(DifferentRunError) as raised:
        open_run(tmp_path / "run", "sweep", changed)
    assert raised.value.differences == [
        ("extra", None, True), ("seeds", [1, 2], (1, 2, 3)), ("train.batch_size", 64, 32),
    ]  # fmt: skip
    assert "train.batch_size: run has 64, command has 32" in str(raised.value)
    assert "seeds: run has 1 2, command has 1 2 3" in str(raised.value)
    with pytest.raises(DifferentRunError, match="kind: run has 'sweep', command has 'brittleness'"):
        open_run(tmp_path / "run", "brittleness", config)


@pytest.mark.parametrize("command", ["brittleness", "evaluate", "sagga"])
@pytest.mark.parametrize(
    "spec, message",
    [
        ("ckpt:no/such/model.pt", "no/such/model.pt"),
        ("py:no_such_module_xyz:f", "cannot import 'no_such_module_xyz'"),
        ("simpy", "unknown model 'simpy'"),
        ("lc:", "--model must be lc:PATH"),
    ],
)
def test_a_bad_model_spec_fails_before_anything_is_written(cli, tmp_path, command, spec, message):
    data = tmp_path / "problems.txt"
    data.write_text("x^2\n")
    out = tmp_path / "run"
    extra = ("--data", str(data)) if command == "evaluate" else ()
    code, _, err = cli("integration", command, "--model", spec, *extra, "--out", str(out))
    assert code == 2 and message in err and len(err.splitlines()) == 1
    assert not out.exists()


USER_MODEL = """
def answer(problem, k):
    return "x^3/3"
"""
USER_TASK = (Path(__file__).parents[2] / "examples" / "copy_task.py").read_text()


def test_py_specs_find_modules_in_the_current_directory(cli, monkeypatch, tmp_path):
    # as the `genprobe` script runs: neither '' nor the current directory on the path
    here = tmp_path / "work"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setattr("sys.path", [p for p in sys.path if p not in ("", str(here))])
    (here / "my_model_here.py").write_text(textwrap.dedent(USER_MODEL))
    (here / "my_task_here.py").write_text(USER_TASK)
    (here / "problems.txt").write_text("x^2\n")
    code, _, err = cli("integration", "predict", "--model", "py:my_model_here:answer",
                       "--problems", "problems.txt", "--out", "preds.jsonl")  # fmt: skip
    assert code == 0, err
    record = json.loads((here / "preds.jsonl").read_text())
    assert record["candidates"][0]["infix"] == "x**3/3"
    code, _, err = cli("task", "generate", "py:my_task_here:Copy", "--split", "train",
                       "--n", "3", "--out", "copy.jsonl")  # fmt: skip
    assert code == 0, err
    assert len((here / "copy.jsonl").read_text().splitlines()) == 3


HEAVY = ("sympy", "torch", "pandas", "matplotlib", "scipy", "sklearn", "pyarrow")


@pytest.mark.parametrize(
    "code",
    [
        "import genprobe.cli",
        "from genprobe.cli import main\ntry:\n    main(['models'])\nexcept SystemExit:\n    pass",
    ],
)
def test_the_command_line_imports_no_heavy_module_up_front(code):
    check = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "argv, message",
    [
        (("sweep", "--task", "scan", "--train-size", "0"),
         "--train-size must be an integer >= 1. Got 0 instead."),
        (("integration", "brittleness", "--model", "sympy", "--k", "0"),
         "--k must be one or more positive integers. Got 0 instead."),
        (("integration", "generate", "--method", "fdw"),
         "--method must be one of fwd, bwd, ibp (did you mean fwd?). Got 'fdw' instead."),
    ],
)  # fmt: skip
def test_setting_errors_speak_in_options_and_typed_values(cli, tmp_path, argv, message):
    out = tmp_path / "out"
    code, _, err = cli(*argv, "--out", str(out))
    assert (code, err) == (2, f"genprobe: error: {message}\n")
    assert not out.exists()


MISSING_RUN = "must be a run directory that exists. Got 'no/such/run' instead."
AGAINST = ("search", "--model", "bundled:integration-cpu", "--task", "integration")


@pytest.mark.parametrize(
    "argv, message",
    [
        (("probe", "--model", "run:no/such/run"), f"--model {MISSING_RUN}"),
        (("search", "--model", "run:no/such/run"), f"--model {MISSING_RUN}"),
        (("search", "--model", "run:no/such/run@1-3"), f"--model {MISSING_RUN}"),
        ((*AGAINST, "--against", "run:no/such/run"), f"--against {MISSING_RUN}"),
        (("probe", "--model", "ckpt:no/such.pt"), "--model must be a checkpoint file that exists"),
        (("probe", "--model", "rnu:runs/x"), "unknown model 'rnu:runs/x'. Did you mean: run?"),
    ],
)
def test_probe_and_search_tell_a_bad_model_or_against_before_the_study_loads(
    argv, message, tmp_path
):
    out = tmp_path / "run"
    code = (
        "from genprobe.cli import main\n"
        f"try:\n    main({[*argv, '--out', str(out)]!r})\n"
        "except SystemExit as exit_:\n    print(exit_.code)\n"
        f"import sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.stdout.splitlines() == ["2", "[]"]  # exit 2, and no torch, pandas, ... loaded
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr
    assert not out.exists()
