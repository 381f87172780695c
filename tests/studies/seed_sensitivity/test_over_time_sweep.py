"""A sweep trained over time through the command line: curves, the grokking report, export,
compare, and a grid of runs over training fraction × weight decay with its phase diagram."""

import json

import pandas as pd
import pytest
from helpers import damage

from genprobe.errors import DamagedFileError
from genprobe.studies.seed_sensitivity.curves import read_curves
from genprobe.training.over_time import evaluation_steps

TINY = [
    "sweep", "--task", "binary_operation", "--task-option", "p=11", "--arch", "mlp",
    "--model-option", "hidden=16", "--model-option", "emb=8", "--steps", "60", "--full-batch",
    "--optimizer", "adamw", "--lr", "0.02", "--weight-decay", "1", "--seeds", "3",
]  # fmt: skip


def test_a_sweep_over_time_records_every_member_at_every_evaluation_and_reports_grokking(
    cli, tmp_path
):
    out = tmp_path / "run"
    code, _, err = cli(*TINY, "--eval-every", "20", "--out", str(out))
    assert code == 0, err
    curves = read_curves(out)
    assert sorted(curves["step"].unique()) == evaluation_steps(60, 20) == [0, 20, 40, 60]
    assert set(curves["role"]) == {"train", "held_out"}  # validation is the held-out split
    assert len(curves) == 3 * 4 * 2  # seeds x evaluations x roles
    final = curves[(curves.step == 60) & (curves.role == "held_out")].set_index("seed")
    decoded = json.loads((out / "stats.json").read_text())["summary"]["held_out"]
    assert decoded["mean"] == pytest.approx(final["accuracy"].mean())  # greedy = teacher-forced
    report = (out / "report.md").read_text()
    assert "## Grokking over training time" in report
    assert "for exactly 60 steps each (no early stopping" in report
    for figure in ("over_time", "grokking_steps", "grokking_delay", "weight_norm"):
        assert (out / "figures" / f"{figure}.png").stat().st_size > 0
    code, _, err = cli("report", str(out), "--grokking-threshold", "0.001")
    assert code == 0, err  # at 0.1 %, one right training equation is "memorized"
    assert "\n| 3 | 3 | " in (out / "report.md").read_text()
    code, _, err = cli("export", str(out))
    assert code == 0, err
    members = pd.read_csv(out / "tables" / "members.csv")
    assert list(members["seed"]) == [1, 2, 3]
    assert {"memorized_step", "grokked_step", "delay", "outcome"} <= set(members.columns)


def test_compare_of_two_runs_over_time_gives_the_difference_of_median_grokking_steps(cli, tmp_path):
    for name, decay in (("a", "1"), ("b", "0.1")):
        argv = [*TINY]
        argv[argv.index("--weight-decay") + 1] = decay
        code, _, err = cli(*argv, "--no-report", "--out", str(tmp_path / name))
        assert code == 0, err
    code, _, err = cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out",
                       str(tmp_path / "cmp"))  # fmt: skip
    assert code == 0, err
    report = (tmp_path / "cmp" / "report.md").read_text()
    assert "## Grokking steps side by side" in report
    assert (tmp_path / "cmp" / "figures" / "grokking_steps.png").exists()


@pytest.mark.slow
def test_a_grid_runs_one_sweep_per_cell_resumes_and_draws_the_phase_diagram(cli, tmp_path):
    grid = tmp_path / "grid"
    argv = [*TINY, "--seeds", "2", "--vary", "task.train_fraction=0.5,0.7", "--vary",
            "train.weight_decay=0.1,1", "--out", str(grid)]  # fmt: skip
    code, _, err = cli(*argv)
    assert code == 0, err
    described = json.loads((grid / "grid.json").read_text())
    assert described["axes"] == {
        "task.train_fraction": [0.5, 0.7],
        "train.weight_decay": [0.1, 1.0],
    }
    cells = [cell["run"] for cell in described["cells"]]
    assert cells == [
        "train_fraction=0.5,weight_decay=0.1", "train_fraction=0.5,weight_decay=1.0",
        "train_fraction=0.7,weight_decay=0.1", "train_fraction=0.7,weight_decay=1.0",
    ]  # fmt: skip
    for cell in cells:  # each cell trains on its own training split, whole, in one batch
        config = json.loads((grid / cell / "config.json").read_text())["config"]
        equations = round(float(cell.split(",")[0].split("=")[1]) * 121)
        assert config["train"]["steps"] == 60
        assert config["train_size"] == config["train"]["batch_size"] == equations
    assert "Phase diagram" in (grid / "report.md").read_text()
    members = sorted((grid / cells[0] / "members").glob("*.pt"))
    stamps = [p.stat().st_mtime_ns for p in members]
    code, _, err = cli(*argv)  # the same grid again: every cell is done, nothing retrained
    assert code == 0, err
    assert [p.stat().st_mtime_ns for p in members] == stamps
    other = [*argv[:-1], str(grid)]
    other[other.index("train.weight_decay=0.1,1")] = "train.weight_decay=0.3,1"
    code, _, err = cli(*other)
    assert code == 2 and "holds another grid" in err


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--steps", "50", "--eval-every", "51"], "--eval-every"),
        (["--eval-every", "5"], "--eval-every"),
        (["--steps", "50", "--task-option", "train_fraction=1"], "train_fraction"),
        (["--steps", "50", "--task-option", "operation=x/y", "--task-option", "p=12"], "prime"),
        (["--steps", "50", "--vary", "train_fraction=0.3,0.5"], "--vary"),
        (["--steps", "50", "--vary", "task.train_fraction=0.5,1.5"], "train_fraction"),
        (["--steps", "50", "--vary", "train.weight_decays=0.1"], "weight_decays"),
    ],
)
def test_bad_settings_are_one_line_exit_2_and_write_nothing(cli, tmp_path, args, named):
    out = tmp_path / "run"
    code, _, err = cli("sweep", "--task", "binary_operation", "--arch", "mlp", *args,
                       "--out", str(out))  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and named in err, err
    assert not out.exists()


def test_over_time_watches_training_every_suite_and_a_validation_split_of_its_own(tiny_sweep):
    from genprobe.tasks.registry import load_task

    rewriting = tiny_sweep((1,))  # the rewriting task: validation is a split of its own
    assert rewriting.watched_roles() == ("train", "validation", *rewriting.task.suites())
    assert rewriting.validation_role() == "validation"
    tables = tiny_sweep((1,), task=load_task("binary_operation", {"p": 5}))
    assert tables.watched_roles() == ("train", "held_out")  # validation is the held-out split
    assert tables.validation_role() == "held_out"


def test_a_config_trained_over_time_keeps_the_hash_of_runs_made_before_it(tiny_sweep):
    from dataclasses import replace

    from genprobe.training.trainer import TrainConfig

    plain = tiny_sweep((1,)).identity()["train"]
    assert {"steps", "eval_every", "beta2"}.isdisjoint(plain)  # at their defaults: left out
    over_time = tiny_sweep((1,), train=replace(TrainConfig(), steps=10)).identity()["train"]
    assert over_time["steps"] == 10


def test_with_subsets_each_member_is_scored_on_its_own_subset_and_each_example_has_a_history(
    cli, tmp_path
):
    from genprobe.studies.seed_sensitivity.curves import read_history
    from genprobe.studies.seed_sensitivity.results import read_subsets
    from genprobe.studies.tables import read_tables

    out = tmp_path / "run"
    code, _, err = cli(*TINY, "--subsets", "--eval-every", "20", "--out", str(out))
    assert code == 0, err
    curves = read_curves(out)
    assert set(curves["role"]) == {"train", "train_unseen", "held_out"}
    seeds, trained = read_subsets(out)
    history = read_history(out)
    assert len(history) == trained.size and list(seeds) == [1, 2, 3]
    learned = history["learned"].to_numpy().reshape(trained.shape)
    final = curves[curves.step == 60].set_index(["seed", "role"])["accuracy"]
    for k, seed in enumerate(seeds):  # the curve's last point is the history's last evaluation
        assert final[(seed, "train")] == pytest.approx(learned[k, trained[k]].mean())
        assert final[(seed, "train_unseen")] == pytest.approx(learned[k, ~trained[k]].mean())
    assert history["first_right"].isin([-1, 0, 20, 40, 60]).all()
    tables = read_tables(out)
    mapped = tables["data_map"]
    assert len(mapped) == trained.shape[1]
    assert (mapped["members"] == trained.sum(axis=0)).all()  # over the members trained on it
    assert {"memorization", "consistency", "history"} <= set(tables)
    report = (out / "report.md").read_text()
    assert "## Each training example over training time" in report
    assert "## What each member memorized, per example" in report
    assert "`train` is each seed's own subset of the training split" in report
    assert (out / "figures" / "data_map.png").stat().st_size > 1000
    damage(out / "history" / "seeds=1-3.parquet", "truncated")
    with pytest.raises(DamagedFileError, match=r"history/seeds=1-3\.parquet"):
        read_tables(out)
