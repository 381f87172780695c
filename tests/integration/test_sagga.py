"""`genprobe integration sagga` end to end: SymPy as the model under test (where does a CAS
fail?), a tiny transformer trained here (and kill -9 then resume), every model kind, bad input."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

pytestmark = pytest.mark.slow

SMALL = ["--generation-size", "24", "--seed-size", "6", "--workers", "2"]


def py_answer(problem: str, k: int):
    """py: model: right on polynomials of degree < 2 written plainly, wrong elsewhere."""
    del k
    return {"1": ["x"], "x": ["x^2/2"]}.get(problem, ["x"])


def test_sympy_search_archives_cas_failures_and_reports_them(cli, tmp_path):
    run = tmp_path / "run"
    code, _, err = cli(
        "integration", "sagga", "--model", "sympy", "--out", str(run), "--basis", "x",
        "--preset", "uniform", "--generations", "2", "--model-deadline", "2", *SMALL,
    )  # fmt: skip
    assert code == 0, err
    state = json.loads((run / "search.json").read_text())
    assert state["stop"] == "generations" and state["generations"] == 2
    archive = [json.loads(line) for line in (run / "archive.jsonl").read_text().splitlines()]
    assert len({row["problem"] for row in archive}) == len(archive)  # novel by canonical form
    generations = pd.concat(
        pd.read_parquet(p) for p in sorted((run / "generations").glob("*.parquet"))
    )
    failed = generations[(generations["status"] == "failed") & (generations["fitness"] >= 0.01)]
    assert set(failed["problem"]) == {row["problem"] for row in archive}
    assert (generations.loc[generations["status"] != "failed", "fitness"] == 0).all()
    summary = json.loads((run / "summary.json").read_text())
    effort = summary["effort"]
    assert effort["attempts"] == sum(s["attempts"] for s in state["stats"])
    assert effort["mutants"] == len(generations)
    assert effort["queries"] + effort["cache_hits"] == effort["mutants"]
    deadlines = effort["deadlines"]
    assert deadlines["mutation"]["items"] == effort["attempts"]
    assert deadlines["verification"]["items"] == generations["outcome"].notna().sum()  # k = 1
    if not effort["deadline_warnings"]:
        assert "Warning:" not in (run / "report.html").read_text()
    assert summary["archive_size"] == len(archive)
    assert sum(c["size"] for c in summary["clusters"]) == len(archive)
    page = (run / "report.html").read_text()
    assert "Search effort" in page and "model queries" in page
    assert archive  # SymPy fails on c**(x**2) (no elementary antiderivative), for one
    assert "Failure clusters" in page
    assert set(summary["tags"]) <= {"exploit", "robustness", "unknown"}
    assert sum(summary["tags"].values()) == len(archive)
    assert "failures archived" in err


def _command(model, run, generations):
    return [
        sys.executable, "-m", "genprobe", "integration", "sagga", "--model", f"ckpt:{model}",
        "--out", str(run), "--basis", "polynomial_robustness", "--preset", "robustness",
        "--generations", str(generations), "--beam", "2", "--max-len", "24", *SMALL,
    ]  # fmt: skip


def _archive(run):
    return (run / "archive.jsonl").read_text()


def test_a_trained_model_search_resumes_after_kill_9_with_the_same_archive(tiny_model, tmp_path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(_command(tiny_model, whole, 3), env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    first = _archive(whole)
    assert first  # a model trained for a few steps fails plenty
    again = subprocess.run(_command(tiny_model, whole, 3), env=env, capture_output=True, text=True)
    assert again.returncode == 0 and _archive(whole) == first  # a finished run is replayed

    process = subprocess.Popen(_command(tiny_model, killed, 3), env=env)
    while process.poll() is None and not list((killed / "shards" / "generation").glob("*.json")):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    resumed = subprocess.run(
        _command(tiny_model, killed, 3), env=env, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    assert _archive(killed) == _archive(whole)
    stats = json.loads((killed / "search.json").read_text())["stats"]
    assert [s["generation"] for s in stats] == [1, 2, 3]


@pytest.mark.parametrize("kind", ["ckpt", "lc", "py", "openai"])
def test_every_model_kind_runs_a_search(cli, kind, checkpoint, lc_checkpoint, endpoint, tmp_path):
    specs = {
        "ckpt": f"ckpt:{checkpoint}",
        "lc": f"lc:{lc_checkpoint}",
        "py": "py:test_sagga:py_answer",
        "openai": f"openai:test@{endpoint().url}",
    }
    run = tmp_path / "run"
    code, _, err = cli(
        "integration", "sagga", "--model", specs[kind], "--out", str(run), "--basis", "polynomial",
        "--generations", "1", "--beam", "2", "--max-len", "12", "--cache-dir",
        str(tmp_path / "cache"), *SMALL,
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["generations"] == 1 and summary["effort"]["mutants"] > 0
    assert (run / "report.html").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--preset", "robust"], "did you mean robustness"),
        (["--basis", "polynomial_robust"], "did you mean polynomial_robustness"),
        (["--fitness", "target_length"], "--target-length"),
        (["--seed-selection", "kmean"], "did you mean kmeans"),
        (["--generation-size", "0"], "--generation-size"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, tmp_path, args, message):
    code, _, err = cli(
        "integration", "sagga", "--model", "sympy", "--out", str(tmp_path / "r"), *args
    )
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "r").exists()


def test_a_malformed_basis_file_names_its_line(cli, tmp_path):
    basis = tmp_path / "basis.txt"
    basis.write_text("2*x + 1\nx +* 2\n")
    code, _, err = cli(
        "integration", "sagga", "--model", "sympy", "--out", str(tmp_path / "r"),
        "--basis-file", str(basis),
    )  # fmt: skip
    assert code == 2 and f"{basis}:2" in err and err.count("\n") == 1, err


def test_a_run_directory_of_another_config_is_refused(cli, tmp_path):
    run = tmp_path / "r"
    base = ["integration", "sagga", "--model", "py:test_sagga:py_answer", "--out", str(run),
            "--basis", "x", "--generations", "1", *SMALL]  # fmt: skip
    assert cli(*base)[0] == 0
    before = (run / "archive.jsonl").read_text()
    code, _, err = cli(*base, "--tau", "0.5")
    assert code == 2 and "different run" in err
    assert (run / "archive.jsonl").read_text() == before
    (run / "report.html").unlink()
    code, _, err = cli("integration", "sagga-report", str(run), "--workers", "1")
    assert code == 0 and (run / "report.html").exists(), err
    code, _, err = cli("integration", "sagga-report", str(tmp_path / "nothing"))
    assert code == 2 and "not a run directory" in err
