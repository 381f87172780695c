"""Sizes a sweep cannot hold are refused in one line before anything is built: a billion seeds
or a trillion training examples would fill the machine's memory (and ignore Ctrl-C while they
do), and a training size beyond a finite split would be recorded as examples never trained
on."""

from dataclasses import replace

import pytest

from genprobe.errors import ConfigError, ResourceError
from genprobe.studies.seed_sensitivity import memory, run_sweep
from genprobe.tasks.registry import load_task


def refused(cli, out, *argv):
    code, _, err = cli("sweep", *argv, "--out", str(out))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert not out.exists()
    return err


def test_a_billion_seeds_are_refused_before_they_are_listed(cli, tmp_path):
    err = refused(cli, tmp_path / "r", "--task", "scan", "--seeds", "1000000000")
    assert "1,000,000,000 members' predictions" in err and "fewer seeds" in err
    grid = ("--init-seeds", "40000", "--order-seeds", "40000")
    err = refused(cli, tmp_path / "r", "--task", "scan", *grid)
    assert "1,600,000,000 members' predictions" in err


def test_a_trillion_training_examples_are_refused(cli, tmp_path):
    trillion = ("--train-size", "1000000000000")
    err = refused(cli, tmp_path / "r", "--task", "reverse_string", *trillion)
    assert "--train-size 1,000,000,000,000" in err and "a smaller --train-size" in err


def test_a_training_size_beyond_a_finite_split_is_refused(cli, tmp_path, tiny_sweep):
    err = refused(
        cli, tmp_path / "r", "--task", "scan", "--task-option", "split=length",
        "--train-size", "20000",
    )  # fmt: skip
    assert "--train-size must be at most 16,990, all of scan's training split" in err
    length = load_task("scan", {"split": "length"})
    config = replace(tiny_sweep((0,), task=length), train_size=20_000)
    with pytest.raises(ConfigError, match="train_size must be at most"):
        run_sweep(config, tmp_path / "api")
    assert not (tmp_path / "api").exists()


def test_the_memory_check_compares_the_estimate_with_what_is_free(tiny_sweep, monkeypatch):
    config = tiny_sweep((0, 1))
    peak = memory.peak_memory(config, 2)
    assert 0 < peak.total < 2**30
    assert memory.peak_memory(config, 200).prediction == pytest.approx(100 * peak.prediction, 0.01)
    monkeypatch.setattr(memory, "available_memory", lambda: peak.total - 1)
    with pytest.raises(ResourceError, match="is free here"):
        memory.check_memory(config, 2)
    monkeypatch.setattr(memory, "available_memory", lambda: peak.total)
    memory.check_memory(config, 2)
