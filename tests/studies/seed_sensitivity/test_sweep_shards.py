"""The sweep on the spine: chunks of seeds trained as separate stacked models, in worker
processes, give the members one stacked model gives and report their progress; the study's
report kind is registered."""

import json

import pytest
import torch

from genprobe.errors import RunDirError
from genprobe.models.architectures.recurrent import RecurrentConfig
from genprobe.runs.executor import LocalExecutor
from genprobe.studies.seed_sensitivity import KIND, SweepConfig, load_members, run_sweep
from genprobe.studies.seed_sensitivity.study import SEED_SENSITIVITY
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
        on_progress=lambda shard, p: progress.append((shard.key, p.epoch, p.step, p.steps)),
    )
    # relayed from both worker processes: each shard's epoch end (200 examples = 4 steps)
    assert sorted(progress) == [("seeds=3-4", 1, 4, 4), ("seeds=5-5", 1, 4, 4)]
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
    run = run_sweep(tiny_sweep(seeds=(3, 4), seeds_per_shard=2), tmp_path / "run")
    first = (run / "members" / "seed=3.pt").stat().st_mtime_ns
    log = []
    run_sweep(tiny_sweep(seeds=(3, 4, 5), seeds_per_shard=2), run, log=log.append)
    assert log[0].startswith("training 1 seeds")  # seeds 3 and 4 are not trained again
    assert (run / "members" / "seed=3.pt").stat().st_mtime_ns == first
    stored = json.loads((run / "config.json").read_text())
    assert stored["config"]["seeds"] == [3, 4, 5] and len(stored["extended_from"]) == 1
    with pytest.raises(RunDirError, match="holds a different run"):
        run_sweep(tiny_sweep(seeds=(3, 4, 5, 6), seeds_per_shard=3), run)
    alone = run_sweep(tiny_sweep(seeds=(3, 4, 5)), tmp_path / "alone")
    assert (
        json.loads((run / "metrics.json").read_text())["seeds"]
        == json.loads((alone / "metrics.json").read_text())["seeds"]
    )


def test_only_more_seeds_in_whole_stacked_models_extend_a_config(tiny_sweep):
    earlier = tiny_sweep(seeds=(3, 4), seeds_per_shard=2)
    assert tiny_sweep(seeds=(3, 4, 5, 6), seeds_per_shard=2).extends(earlier)
    assert not tiny_sweep(seeds=(3, 4, 5), seeds_per_shard=3).extends(earlier)  # chunk 3-4 redone
    assert not tiny_sweep(seeds=(4, 3, 5), seeds_per_shard=2).extends(earlier)
    assert not tiny_sweep(
        seeds=(3, 4, 5), seeds_per_shard=2, model=RecurrentConfig(dropout=0.2)
    ).extends(earlier)


def test_the_sweep_kind_has_a_report_function():
    assert callable(load_function(SEED_SENSITIVITY.report)) and KIND in SEED_SENSITIVITY.kinds
