"""The seed study on any task: config identity across versions, and whole runs through the CLI
on SCAN, a Chomsky-hierarchy task and a user's own `py:` task."""

import json
import shlex
from pathlib import Path

import pandas as pd
import pytest

from genprobe.runs.provenance import config_hash
from genprobe.runs.rundir import open_run
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.study import KIND, LEGACY_KIND
from genprobe.tasks import load_task
from genprobe.training.trainer import TrainConfig

EXAMPLES = Path(__file__).parents[3] / "examples"

# config.json of a run made before tasks were plug-ins (genprobe at ec3e571), and its hash
BEFORE_TASKS = {
    "attention": "bilinear",
    "attention_layer": True,
    "cell": "lstm",
    "data_seed": 0,
    "dropout": 0.1,
    "emb": 32,
    "eval_batch_size": 500,
    "grammar": {
        "authors_b_quirk": False,
        "identity_weight": 0.15,
        "letters": "ABC",
        "n_symbols": 40,
        "n_variants": 2,
    },
    "hidden": 32,
    "init_range": 0.1,
    "input_feeding": False,
    "seeds": [1, 2],
    "seeds_per_shard": 2,
    "suite_size": 12,
    "train": {
        "batch_size": 64,
        "loss_normalization": "sequences",
        "lr": 0.125,
        "max_epochs": 1,
        "max_grad_norm": 5.0,
        "min_delta": 0.0,
        "patience": 2,
    },
    "train_size": 200,
    "validation_size": 20,
}
TINY = ["--seeds", "2", "--seeds-per-shard", "2", "--max-epochs", "2", "--validation-size", "30"]


def test_a_rewriting_run_made_before_tasks_were_plugins_keeps_its_hash_and_resumes(tmp_path):
    config = SweepConfig.from_identity(BEFORE_TASKS)
    assert config == SweepConfig(
        seeds=(1, 2),
        train_size=200,
        validation_size=20,
        suite_size=12,
        seeds_per_shard=2,
        train=TrainConfig(max_epochs=1),
    )
    assert config_hash(BEFORE_TASKS) == "066da20e15503b0a"
    stored = {"kind": LEGACY_KIND, "hash": "066da20e15503b0a", "config": BEFORE_TASKS}
    (tmp_path / "config.json").write_text(json.dumps(stored))
    assert open_run(tmp_path, KIND, config, older_kinds=(LEGACY_KIND,)) == tmp_path
    assert json.loads((tmp_path / "config.json").read_text()) == stored  # kept as it was


def test_settings_added_later_enter_the_identity_only_when_set():
    config = SweepConfig.from_identity(BEFORE_TASKS)
    assert "optimizer" not in config.identity()["train"]
    adam = SweepConfig(seeds=(1,), train=TrainConfig(optimizer="adam", lr=0.001))
    assert adam.identity()["train"]["optimizer"] == "adam"
    scan = SweepConfig(seeds=(1,), task=load_task("scan", {"split": "length"}))
    assert scan.identity()["task"] == {"name": "scan", "options": {"split": "length"}}
    assert SweepConfig.from_identity(scan.identity()) == scan


@pytest.mark.slow
def test_a_scan_sweep_validates_on_training_examples_and_tests_the_split(cli, tmp_path):
    run = tmp_path / "scan"
    args = ["sweep", "--task", "scan", "--task-option", "split=length", *TINY]
    code, _, _ = cli(*args, "--train-size", "300", "--suite-size", "40", "--out", str(run))
    assert code == 0
    roles = json.loads((run / "data" / "roles.json").read_text())
    assert roles["validation"]["split"] == roles["train"]["split"] == "length_train"
    assert roles["train"]["lengths"][1] <= 22 and roles["length_test"]["lengths"][0] >= 24
    predictions = pd.read_parquet(run / "predictions" / "length_test.parquet")
    assert len(predictions) == 2 * 40 and predictions["length"].between(24, 48).all()
    report = (run / "report.md").read_text()
    assert "Beside the paper (Lake & Baroni 2018)" in report and "13.80" in report
    assert "Differs from Lake & Baroni 2018 in: --layers 1 (paper: 2)" in report


@pytest.mark.slow
def test_a_chomsky_sweep_reports_per_length_and_compares_runs(cli, tmp_path):
    common = ["--task", "reverse_string", "--task-option", "test_lengths=41,45", *TINY]
    common += ["--train-size", "200", "--suite-size", "30", "--hidden", "16"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert cli("sweep", *common, "--out", str(one), "--json")[0] == 0
    code, _, _ = cli("sweep", *common, "--layers", "2", "--optimizer", "adam", "--out", str(two))
    assert code == 0
    config = json.loads((two / "config.json").read_text())
    assert config["kind"] == KIND and config["config"]["model"]["options"]["layers"] == 2
    assert config["config"]["task"] == {
        "name": "reverse_string",
        "options": {"test_lengths": "41,45"},
    }
    stats = json.loads((two / "stats.json").read_text())
    assert set(stats["per_length"]) >= {"41", "45"} and stats["generalize"]["length_41"]["n"] == 2
    assert (two / "figures" / "per_length.png").stat().st_size > 0
    assert "| ≥ 90 % |" in (two / "report.md").read_text()
    assert cli("report", str(two), "--threshold", "0.5")[0] == 0
    assert "| ≥ 50 % |" in (two / "report.md").read_text()

    extra = tmp_path / "extra.jsonl"
    extra.write_text('{"input": "0 1 1"}\n{"input": "1 0 0 0 1"}\n')
    code, _, _ = cli("evaluate", str(two), "--input", str(extra), "--name", "mine", "--json")
    assert code == 0 and len(pd.read_parquet(two / "predictions" / "mine.parquet")) == 4

    cmp = tmp_path / "cmp"
    assert cli("compare", str(one), str(two), "--out", str(cmp))[0] == 0
    result = json.loads((cmp / "compare.json").read_text())
    improvement = result["differences"][0]["improvement"]
    assert 0 <= improvement["probability"] <= 1
    assert "P(improvement)" in (cmp / "report.md").read_text()
    code, _, err = cli("report", str(two), "--threshold", "2")
    assert code == 2 and "threshold must be in [0, 1]" in err


def documented_command(text: str) -> list[str]:
    """The `genprobe ...` command of a docstring, its continuation lines joined."""
    joined = text.replace("\\\n", " ")
    line = next(line for line in joined.splitlines() if line.strip().startswith("genprobe "))
    return shlex.split(line)[1:]


@pytest.mark.slow
def test_the_users_task_example_learns_with_its_documented_command(cli, tmp_path, monkeypatch):
    example = (EXAMPLES / "copy_task.py").read_text()
    args = documented_command(example)
    tasks_page = " ".join((EXAMPLES.parent / "docs" / "tasks.md").read_text().split())
    assert " ".join(["genprobe", *args]) in tasks_page.replace(" \\", "")
    monkeypatch.chdir(EXAMPLES)
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    run = tmp_path / "copy"
    code, _, _ = cli(*args[: args.index("--out")], "--out", str(run))
    assert code == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["suites"] == ["longer"] and set(metrics["seeds"]) == {"1", "2", "3", "4"}
    assert all(seed["training"]["best_accuracy"] >= 0.99 for seed in metrics["seeds"].values())
    assert (run / "report.html").exists()


def test_a_task_that_cannot_fill_a_suite_fails_before_anything_is_written(cli, tmp_path):
    run = tmp_path / "run"
    code, _, err = cli("rewriting", "sweep", "--symbols", "12", "--out", str(run))
    assert code == 2 and "n_symbols must be >= 15 for the long suite" in err
    assert not run.exists()
