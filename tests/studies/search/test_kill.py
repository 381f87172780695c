"""`genprobe search` killed with SIGKILL mid-search: the same command replays the finished
generations from disk and ends with the archive of a search never killed."""

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from genprobe.models.architectures.mlp import MLPConfig
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.tasks.registry import load_task
from genprobe.training.trainer import TrainConfig

pytestmark = pytest.mark.slow
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONUNBUFFERED": "1"}


def _search(sweep, out) -> list[str]:
    return [
        "search", "--model", f"run:{sweep}", "--out", str(out), "--generations", "40",
        "--population", "30", "--base-size", "40", "--seed", "3",
    ]  # fmt: skip


def test_a_killed_search_resumes_to_the_archive_of_one_never_killed(tiny_sweep, cli, tmp_path):
    config = tiny_sweep(
        seeds=(1, 2),
        task=load_task("binary_operation", {"p": 23}),
        model=MLPConfig(hidden=32),
        train=TrainConfig(max_epochs=1, lr=0.01, optimizer="adamw", batch_size=16),
    )
    sweep = run_sweep(config, tmp_path / "sweep")
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    code, _, err = cli(*_search(sweep, whole))  # in this process: only the killed run needs one
    assert code == 0, err

    process = subprocess.Popen(
        [sys.executable, "-m", "genprobe", *_search(sweep, killed)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    under_way = killed / "shards" / "generation" / "00002.json"
    while process.poll() is None and not under_way.exists():
        time.sleep(0.02)
    assert process.poll() is None, "the search ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (killed / "shards" / "generation" / "00040.json").exists()

    code, out, err = cli(*_search(sweep, killed))
    assert code == 0, err
    assert "(done before)" in err + out
    pd.testing.assert_frame_equal(
        pd.read_parquet(killed / "archive.parquet"), pd.read_parquet(whole / "archive.parquet")
    )
    assert (killed / "report.html").exists()
