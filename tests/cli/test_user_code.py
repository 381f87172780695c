"""A researcher's own module (`py:module:name`) through the command line: one that fails as it
is imported is one line naming it, what it raised and where, exit 2, with nothing written; a run
made beside its module is reported from any other directory."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import genprobe

SRC = str(Path(genprobe.__file__).parents[1])  # this genprobe, not one installed elsewhere
EXAMPLES = Path(__file__).parents[2] / "examples"
TINY = ("--seeds", "1", "--train-size", "20", "--validation-size", "10", "--suite-size", "10",
        "--max-epochs", "1", "--no-report")  # fmt: skip

FAILING = {
    "raises": (
        'raise RuntimeError("no GPU here")\n',
        "RuntimeError: no GPU here (failing_here.py, line 1)",
    ),
    "exits": ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
    "does not parse": ("def build(:\n", "SyntaxError: invalid syntax (failing_here.py, line 1)"),
    "imports what is not there": ("import no_such_package_xyz\n", "cannot import 'failing_here'"),
}
COMMANDS = {
    "task generate": ["task", "generate", "py:failing_here:Task", "--split", "train", "--out",
                      "out"],
    "task check": ["task", "check", "py:failing_here:Task", "--input", "x.jsonl"],
    "sweep --task": ["sweep", "--task", "py:failing_here:Task", *TINY, "--out", "out"],
    "sweep --arch": ["sweep", "--task", "reverse_string", "--arch", "py:failing_here:build",
                     *TINY, "--out", "out"],
    "integration predict --model": ["integration", "predict", "--model", "py:failing_here:answer",
                                    "--problems", "x.txt", "--out", "out"],
    "integration brittleness --model": ["integration", "brittleness", "--model",
                                        "py:failing_here:answer", "--suites", "robustness-simple",
                                        "--out", "out"],
}  # fmt: skip


@pytest.mark.parametrize("failure", list(FAILING))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_module_that_fails_on_import_is_one_line_naming_it(
    cli, tmp_path, monkeypatch, command, failure
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", list(sys.path))
    source, error = FAILING[failure]
    (tmp_path / "failing_here.py").write_text(source)
    (tmp_path / "x.txt").write_text("x\n")
    (tmp_path / "x.jsonl").write_text('{"input": "a", "output": "a"}\n')
    before = sorted(tmp_path.iterdir())
    try:
        code, _, err = cli(*COMMANDS[command])
    finally:
        sys.modules.pop("failing_here", None)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "py:failing_here:" in err and error in err
    assert sorted(p for p in tmp_path.iterdir() if p.name != "__pycache__") == before


@pytest.mark.slow
def test_a_run_of_a_users_task_is_reported_from_another_directory(cli, tmp_path, monkeypatch):
    made_in = tmp_path / "project"
    made_in.mkdir()
    (made_in / "copy_task_here.py").write_text((EXAMPLES / "copy_task.py").read_text())
    monkeypatch.chdir(made_in)
    monkeypatch.setattr("sys.path", list(sys.path))
    run = made_in / "run"
    code, _, err = cli("sweep", "--task", "py:copy_task_here:Copy", *TINY, "--out", str(run))
    assert code == 0, err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    report = [sys.executable, "-m", "genprobe", "report", str(run)]
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(report, cwd=elsewhere, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "py:copy_task_here:Copy" in (run / "report.md").read_text()
