"""The sweep on the spine: chunks of seeds trained as separate stacked models, in worker
processes, give the members one stacked model gives and report their progress; the study's
report kind is registered."""

import json

import pytest
import torch

from genprobe.errors import RunDirError
from genprobe.models.architectures.recurrent import RecurrentConfig
from genprobe.runs.executor import LocalExecutor
from genprobe.runs.rundir import open_run
from genprobe.studies.seed_sensitivity import KIND, SweepConfig, load_members, run_sweep
from genprobe.studies.seed_sensitivity import run as run_module
from genprobe.studies.seed_sensitivity.study import SEED_SENSITIVITY
from genprobe.studies.seed_sensitivity.train import train_shards
from genprobe.studies.study import load_function


@pytest.fixture
def tiny(tiny_sweep):
    return lambda **kwargs: tiny_sweep(seeds=(3, 4, 5), **kwargs)


@pytest.mark.slow
def test_chunks_of_seeds_in_two_workers_train_the_members_of_one_stacked_model(tmp_path, tiny):
    whole = run_sweep(tiny(), tmp_path / "whole")
    progress = []
    chunked = run_sweep(
        tiny(seeds_per_shard=2),
        tmp_path / "chunked",
        executor=LocalExecutor(workers=2),
        on_progress=lambda shard, p: progress.append(
            (shard.key, p.epoch, p.step, p.steps, p.evaluation and p.evaluation.seeds)
        ),
    )
    # relayed from both worker processes: each shard's epoch end (200 examples = 4 steps),
    # then its validation
    assert sorted(progress, key=str) == [
        ("seeds=3-4", 1, 4, 4, (3, 4)),
        ("seeds=3-4", 1, 4, 4, None),
        ("seeds=5-5", 1, 4, 4, (5,)),
        ("seeds=5-5", 1, 4, 4, None),
    ]
    keys = sorted(p.stem for p in (chunked / "shards" / "train").iterdir())
    assert keys == ["seeds=3-4", "seeds=5-5"]
    for a, b in zip(
        load_members(whole).parameters(), load_members(chunked).parameters(), strict=True
    ):
        assert torch.equal(a, b)  # member k == seed k alone, bit for bit
    training = {
        seed: summary
        for path in (chunked / "training").iterdir()
        for seed, summary in json.loads(path.read_text()).items()
    }
    assert training == json.loads((whole / "training" / "seeds=3-5.json").read_text())


def test_seeds_per_shard_groups_seeds_in_order_and_is_checked(tiny):
    assert tiny(seeds_per_shard=2).seed_chunks() == [(3, 4), (5,)]
    assert tiny().seed_chunks() == [(3, 4, 5)]
    with pytest.raises(ValueError, match="seeds_per_shard"):
        tiny(seeds_per_shard=0)
    with pytest.raises(ValueError, match="seeds must be"):
        SweepConfig(seeds=(-1, 2))


@pytest.mark.slow
def test_a_run_grows_by_more_seeds_and_keeps_what_it_trained(tmp_path, tiny_sweep):
    # the default --seeds-per-shard (25): seeds 5-6 train as a stacked model of their own
    run = run_sweep(tiny_sweep(seeds=(3, 4)), tmp_path / "run")
    first = (run / "members" / "seed=3.pt").stat().st_mtime_ns
    log = []
    run_sweep(tiny_sweep(seeds=(3, 4, 5, 6)), run, log=log.append)
    assert log[0].startswith("training 2 seeds")  # seeds 3 and 4 are not trained again
    assert (run / "members" / "seed=3.pt").stat().st_mtime_ns == first
    keys = sorted(p.stem for p in (run / "shards" / "train").iterdir())
    assert keys == ["seeds=3-4", "seeds=5-6"]
    stored = json.loads((run / "config.json").read_text())
    assert stored["config"]["seeds"] == [3, 4, 5, 6] and len(stored["extended_from"]) == 1
    with pytest.raises(RunDirError, match="holds a different run"):
        run_sweep(tiny_sweep(seeds=(3, 4, 5, 6, 7), seeds_per_shard=3), run)
    alone = run_sweep(tiny_sweep(seeds=(3, 4, 5, 6)), tmp_path / "alone")
    assert (
        json.loads((run / "metrics.json").read_text())["seeds"]
        == json.loads((alone / "metrics.json").read_text())["seeds"]
    )


def test_only_more_seeds_appended_extend_a_config(tiny_sweep):
    earlier = tiny_sweep(seeds=(3, 4))
    assert tiny_sweep(seeds=(3, 4, 5)).extends(earlier)
    assert tiny_sweep(seeds=(3, 4, 5, 6), seeds_per_shard=2).extends(
        tiny_sweep(seeds=(3, 4), seeds_per_shard=2)
    )
    assert not tiny_sweep(seeds=(3, 4, 5), seeds_per_shard=3).extends(earlier)
    assert not tiny_sweep(seeds=(4, 3, 5)).extends(earlier)
    assert not tiny_sweep(seeds=(3,)).extends(earlier)
    assert not tiny_sweep(seeds=(3, 4)).extends(earlier)
    assert not tiny_sweep(seeds=(3, 4, 5), model=RecurrentConfig(dropout=0.2)).extends(earlier)


def test_stacked_models_are_kept_whole_only_where_the_old_seeds_fill_them(tiny_sweep):
    assert tiny_sweep(seeds=(3, 4, 5), seeds_per_shard=2).keeps_stacks(
        tiny_sweep(seeds=(3, 4), seeds_per_shard=2)
    )
    assert not tiny_sweep(seeds=(3, 4, 5)).keeps_stacks(tiny_sweep(seeds=(3, 4)))


def test_a_run_whose_members_differ_from_their_seeds_alone_says_why_it_cannot_grow(
    tmp_path, tiny_sweep, monkeypatch
):
    differs = {"members_equal_alone": False, "largest_difference": 3e-7, "stacking": "loop"}
    monkeypatch.setattr(run_module, "members_alone", lambda config, device: differs)
    run = open_run(tmp_path / "run", KIND, tiny_sweep(seeds=(3, 4)))
    with pytest.raises(RunDirError) as refused:
        run_sweep(tiny_sweep(seeds=(3, 4, 5)), run)
    assert str(refused.value) == (
        f"{run} cannot grow from 2 to 3 seeds: the new seeds would join the stacked model of "
        "seeds 3-4 (--seeds-per-shard 25), and a member of this model differs from its seed "
        "trained alone (by up to 3e-07), so the grown run would not be the one this command "
        "makes anew: choose another --out"
    )
    # where the old seeds fill their stacked models, the new seeds train in one of their own
    earlier = tiny_sweep(seeds=(3, 4), seeds_per_shard=2)
    grown = tiny_sweep(seeds=(3, 4, 5), seeds_per_shard=2)
    assert run_module._grows(grown, earlier, lambda: differs, tmp_path)


def test_the_seeds_left_to_train_form_stacked_models_of_their_own(tiny_sweep):
    config = tiny_sweep(seeds=(3, 4, 5, 6, 7), seeds_per_shard=2)
    assert [s.key for s in train_shards(config)] == ["seeds=3-4", "seeds=5-6", "seeds=7-7"]
    assert [s.key for s in train_shards(config, {3, 4, 6})] == ["seeds=5-7"]


def test_the_sweep_kind_has_a_report_function():
    assert callable(load_function(SEED_SENSITIVITY.report)) and KIND in SEED_SENSITIVITY.kinds
