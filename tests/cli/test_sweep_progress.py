"""What a sweep shows while it trains: each stacked model's latest validation accuracy and
loss beside its steps, so a loss plateau at 0 % accuracy is not a silent wait."""

import functools

import pytest

from genprobe.cli import console, sweep
from genprobe.cli.sweep import describe_evaluation
from genprobe.training.trainer import Evaluation


def test_a_stacked_models_validation_reads_as_ranges_over_its_members():
    three = Evaluation((1, 2, 3), (0.0, 0.125, 0.0), (1.2345, 1.5, 1.3))
    assert describe_evaluation(4, three) == (
        "validation after epoch 4: accuracy 0.0–12.5 %, loss 1.23–1.50"
    )
    same = Evaluation((1, 2), (0.0, 0.0), (21.0, 21.0))
    assert describe_evaluation(1, same) == "validation after epoch 1: accuracy 0.0 %, loss 21.0"
    alone = Evaluation((5,), (1.0,), None)
    assert describe_evaluation(2, alone) == "validation after epoch 2: accuracy 100.0 %"


@pytest.mark.slow
def test_the_sweeps_progress_shows_each_epochs_validation(cli, monkeypatch, tmp_path):
    # every update as a plain line (pytest's stderr is no terminal)
    monkeypatch.setattr(sweep, "progress_bar", functools.partial(console.progress_bar, every=0))
    code, _, err = cli(
        "sweep", "--task", "reverse_string", "--seeds", "2", "--train-size", "20",
        "--validation-size", "10", "--suite-size", "10", "--max-epochs", "2", "--patience", "5",
        "--no-report", "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == 0, err
    lines = [line.split("] ", 1)[1] for line in err.splitlines() if line.startswith("[0:")]
    assert lines[0] == "seeds 1-2: epoch 1, 2 of 2 training: 1 of 1"
    validated = [line for line in lines if "validation" in line]
    assert [line.split(": ")[1].split(" (")[0] for line in validated] == [
        "epoch 1, 2 of 2 training",
        "epoch 2, 2 of 2 training",  # the first step of epoch 2 shows epoch 1's validation
        "epoch 2, 0 of 2 training",
    ]
    assert "(validation after epoch 1: accuracy " in validated[1]
    assert "(validation after epoch 2: accuracy " in validated[2]
    assert all(" %, loss " in line for line in validated)
