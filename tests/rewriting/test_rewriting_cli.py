"""End-to-end: the `genprobe rewriting` and `genprobe report` commands on tiny sweeps."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import torch

from genprobe.cli import main

TINY = [
    "--seeds",
    "2",
    "--train-size",
    "400",
    "--validation-size",
    "40",
    "--suite-size",
    "30",
    "--max-epochs",
    "2",
]


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exit_info.value.code, out.out, out.err


def test_sweep_writes_a_complete_run_and_resumes_without_redoing_work(tmp_path, capsys):
    run = tmp_path / "run"
    code, out, _ = run_cli(["rewriting", "sweep", *TINY, "--out", str(run), "--json"], capsys)
    assert code == 0
    summary = json.loads(out)["summary"]
    assert set(summary) == {"standard", "repeat", "short", "long"}

    config = json.loads((run / "config.json").read_text())
    assert config["config"]["seeds"] == [1, 2] and len(config["hash"]) == 16
    assert config["provenance"]["versions"]["torch"] == torch.__version__
    member = torch.load(run / "members" / "seed=2.pt", weights_only=True)
    assert member["seed"] == 2 and member["state"]["gen_w"].shape == (32, 243)
    predictions = pd.read_parquet(run / "predictions" / "long.parquet")
    assert list(predictions.columns) == ["seed", "suite", "index", "input", "output", "valid"]
    assert (
        len(predictions) == 2 * 30
        and predictions["input"].str.split().str.len().between(11, 15).all()
    )
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics["seeds"]) == {"1", "2"}
    acc = metrics["seeds"]["1"]["accuracy"]["long"]
    assert acc == predictions[predictions.seed == 1]["valid"].mean()
    for name in (
        "report.md",
        "report.html",
        "stats.json",
        "figures/suites.png",
        "figures/scatter_repeat_long.png",
    ):
        assert (run / name).stat().st_size > 0
    html = (run / "report.html").read_text()
    assert "data:image/png;base64," in html and "<table>" in html
    assert not (run / "training" / "state.pt").exists()

    stamps = {p: p.stat().st_mtime_ns for p in (run / "members").iterdir()}
    code, _, _ = run_cli(["rewriting", "sweep", *TINY, "--out", str(run), "--json"], capsys)
    assert code == 0
    assert stamps == {p: p.stat().st_mtime_ns for p in (run / "members").iterdir()}

    code, _, err = run_cli(["rewriting", "sweep", *TINY, "--lr", "0.5", "--out", str(run)], capsys)
    assert code == 2 and "different run" in err and len(err.strip().splitlines()) == 1

    src = tmp_path / "ext.src"
    src.write_text("A B C\nOS\n")
    code, _, _ = run_cli(
        ["rewriting", "evaluate", str(run), "--src", str(src), "--name", "mine"], capsys
    )
    assert code == 0
    assert len(pd.read_parquet(run / "predictions" / "mine.parquet")) == 4
    assert "mine" in json.loads((run / "metrics.json").read_text())["suites"]
    (run / "report.md").unlink()
    code, _, _ = run_cli(["report", str(run)], capsys)
    assert code == 0 and "| mine |" in (run / "report.md").read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--train-size", "-5"], "train_size must be an integer >= 1"),
        (["--device", "tpu"], "device must be"),
        (["--letters", "AAB"], "letters must be"),
        (["--loss-normalization", "mean"], "Invalid value"),
    ],
)
def test_bad_sweep_arguments_exit_2_and_write_nothing(tmp_path, capsys, args, message):
    code, _, err = run_cli(["rewriting", "sweep", *args, "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_generate_then_check(tmp_path, capsys):
    prefix = tmp_path / "long"
    code, _, _ = run_cli(
        ["rewriting", "generate", "--suite", "long", "--n", "40", "--out", str(prefix)], capsys
    )
    assert code == 0
    code, out, _ = run_cli(
        ["rewriting", "check", "--src", f"{prefix}.src", "--tgt", f"{prefix}.tgt", "--json"], capsys
    )
    assert json.loads(out) == {"n": 40, "valid": 40, "invalid": 0, "accuracy": 1.0}

    lines = (tmp_path / "long.tgt").read_text().splitlines()
    lines[0] = "junk " + lines[0]
    lines[1] = ""
    (tmp_path / "bad.tgt").write_text("\n".join(lines) + "\n")
    code, out, _ = run_cli(
        [
            "rewriting",
            "check",
            "--src",
            f"{prefix}.src",
            "--tgt",
            str(tmp_path / "bad.tgt"),
            "--json",
        ],
        capsys,
    )
    assert json.loads(out)["invalid"] == 2

    code, _, _ = run_cli(
        [
            "rewriting",
            "generate",
            "--suite",
            "repeat",
            "--n",
            "5",
            "--format",
            "tsv",
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    code, out, _ = run_cli(
        ["rewriting", "check", "--src", str(tmp_path / "r.tsv"), "--json"], capsys
    )
    assert json.loads(out)["valid"] == 5

    (tmp_path / "short.tgt").write_text("A1_1\n")
    code, _, err = run_cli(
        ["rewriting", "check", "--src", f"{prefix}.src", "--tgt", str(tmp_path / "short.tgt")],
        capsys,
    )
    assert code == 2 and "short.tgt" in err and "40" in err


def test_kill_9_during_training_then_the_same_command_finishes_with_the_same_numbers(tmp_path):
    args = [
        "rewriting",
        "sweep",
        "--seeds",
        "2",
        "--train-size",
        "3000",
        "--validation-size",
        "40",
        "--suite-size",
        "30",
        "--max-epochs",
        "3",
        "--json",
    ]
    command = [sys.executable, "-m", "genprobe", *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}

    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [*command, "--out", str(killed)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while (
        not (killed / "training" / "state.pt").exists()
        and proc.poll() is None
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (killed / "metrics.json").exists()

    resumed = subprocess.run(
        [*command, "--out", str(killed)], env=env, capture_output=True, text=True, check=True
    )
    whole = subprocess.run(
        [*command, "--out", str(tmp_path / "whole")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(resumed.stdout)["summary"] == json.loads(whole.stdout)["summary"]
    for name in ("standard", "long"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(killed / "predictions" / f"{name}.parquet"),
            pd.read_parquet(tmp_path / "whole" / "predictions" / f"{name}.parquet"),
        )
