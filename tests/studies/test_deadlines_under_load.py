"""Deadlines are budgets of CPU time: a brittleness evaluation and a SAGGA search give the same
results on a quiet machine and on one kept busy by processes that spin, more of them than the
machine has cores. Each run has items that hit their budget (runaway integrals), and items that
only take a while, which a wall-clock deadline would drop under load."""

import json
import os
import subprocess
import sys
from contextlib import contextmanager

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import examples, model_settings, rerecord

from genprobe.studies.search.sagga.config import SaggaConfig
from genprobe.studies.search.sagga.results import read_archive
from genprobe.studies.search.sagga.run import run_sagga

pytestmark = pytest.mark.slow

# sympy#19651: `integrate` runs away on it (heurisch tries over a thousand coefficients)
RUNAWAY = "(sin(x)^2 + 2*cos(x))*sqrt(3*sin(x)^2 + 1)"
PROBLEMS = ["x^2", "x*exp(x)", RUNAWAY, "x*cos(x)", "1/(x^2 + 1)", "x*log(x)"]


@contextmanager
def cpu_load():
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(2 * (os.cpu_count() or 1))
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_a_brittleness_evaluation_is_the_same_under_load(cli, tmp_path):
    problems = tmp_path / "problems.txt"
    problems.write_text("\n".join(PROBLEMS) + "\n")

    def run(name):
        out = tmp_path / name
        code, _, err = cli(
            "integration", "evaluate", "--model", "sympy", "--model-deadline", "0.5",
            "--data", str(problems), "--k", "1", "--out", str(out), "--workers", "2",
        )  # fmt: skip
        assert code == 0, err
        return out

    quiet = run("quiet")
    with cpu_load():
        loaded = run("loaded")
    frame = examples(quiet)
    assert frame["candidates"].map(len).tolist().count(0) == 1  # the runaway integral, dropped
    pd.testing.assert_frame_equal(examples(loaded), frame)
    summary = json.loads((quiet / "summary.json").read_text())
    assert summary["fail"] == json.loads((loaded / "summary.json").read_text())["fail"]
    assert summary["deadlines"]["items"] == len(PROBLEMS) - 1
    # the runaway integral ran out of the model's own deadline, quiet or loaded
    model_deadlines = {"items": len(PROBLEMS), "over_budget": 1, "hung": 0}
    assert summary["model_deadlines"] == model_deadlines
    assert json.loads((loaded / "summary.json").read_text())["model_deadlines"] == model_deadlines


def py_answer(problem: str, k: int):
    """py: model: right on `1` and `x`, wrong elsewhere."""
    del k
    return {"1": ["x"], "x": ["x^2/2"]}.get(problem, ["x"])


def _effort(run):
    """Each generation's record, seconds aside."""
    stats = json.loads((run / "search.json").read_text())["stats"]
    return [{key: value for key, value in s.items() if "seconds" not in key} for s in stats]


def test_a_sagga_search_archives_the_same_failures_under_load(tmp_path):
    config = SaggaConfig(
        model=model_settings("py:test_deadlines_under_load:py_answer"), basis="x",
        preset="uniform", generation_size=24, seed_size=6, generations=2, workers=2,
        tag_limit=0, nearby_attempts=0,
    )  # fmt: skip
    # the search alone: its analysis (tags, nearby successes) is no part of what is compared
    quiet = run_sagga(config, tmp_path / "quiet")
    with cpu_load():
        loaded = run_sagga(config, tmp_path / "loaded")
    archive = read_archive(quiet)
    assert len(archive)
    pd.testing.assert_frame_equal(read_archive(loaded), archive)
    for generation in ("00001", "00002"):
        path = f"generations/{generation}.parquet"
        pd.testing.assert_frame_equal(pd.read_parquet(loaded / path), pd.read_parquet(quiet / path))
    effort = _effort(quiet)
    assert _effort(loaded) == effort
    for record in effort:
        assert record["deadlines"]["mutation"]["items"] == record["simplified"]


def test_the_brittleness_report_warns_when_many_verdicts_hit_a_deadline(cli, tmp_path):
    problems = tmp_path / "problems.txt"
    problems.write_text("x^2\ncos(x)\n")
    run = tmp_path / "run"

    def evaluate():
        code, _, err = cli(
            "integration", "evaluate", "--model", "py:test_deadlines_under_load:py_answer",
            "--data", str(problems), "--k", "1", "--out", str(run), "--workers", "1",
        )  # fmt: skip
        assert code == 0, err
        return err

    assert "warning" not in evaluate()
    assert "Warning:" not in (run / "report.html").read_text()
    # as if the first problem's verdict had run out of its CPU budget
    path = run / "results" / "base" / "00000.parquet"
    table = pq.read_table(path)
    outcomes = table["outcome"].to_pylist()
    outcomes[0] = "timeout"
    column = table.schema.get_field_index("outcome")
    pq.write_table(table.set_column(column, "outcome", pa.array(outcomes)), path)
    rerecord(run, path)
    err = evaluate()  # the finished run is replayed from its files, and reported again
    summary = json.loads((run / "summary.json").read_text())
    assert summary["deadlines"] == {"items": 2, "over_budget": 1, "hung": 0}
    [warning] = summary["deadline_warnings"]
    assert warning.startswith("1 of 2 candidates verified (50.0%) hit a deadline")
    assert f"Warning: {warning}" in (run / "report.md").read_text()
    assert "warning: 1 of 2 candidates verified" in " ".join(err.split())
