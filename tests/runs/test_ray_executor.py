"""The Ray executor on a real two-node cluster keeps each task's workers between stages (a
search alternates a model's stage with verification), gives way when a task finds no room,
and lets a running shard take the CPUs of kept workers when the cluster loses a node."""

import json
from pathlib import Path

import pytest
import shard_tasks
from shard_tasks import RefusedSetup, WhoRuns

from genprobe.errors import ConfigError
from genprobe.runs import ray_executor
from genprobe.runs.ray_executor import RayExecutor
from genprobe.runs.shards import Shard

pytestmark = pytest.mark.slow


@pytest.fixture
def executor(ray_cluster):
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(shard_tasks)  # Ray's workers cannot import tests/
    with RayExecutor(ray_cluster.address) as executor:
        yield executor


def _who(executor, task):
    """(pid of the worker that ran a shard of `task`, shards its setup has served)."""
    [(_, files, _)] = executor.map(task, [Shard("who", "one")], lambda s: Path("scratch"))
    who = json.loads(files["who/one.json"])
    return who["pid"], who["served"]


def test_each_task_keeps_its_worker_until_another_task_needs_the_room(executor):
    model, verify, other = WhoRuns(), WhoRuns(), WhoRuns()
    model_pid, _ = _who(executor, model)
    verify_pid, _ = _who(executor, verify)  # beside the kept model worker
    assert verify_pid != model_pid
    assert _who(executor, model) == (model_pid, 2)  # the same worker, set up once
    assert _who(executor, verify) == (verify_pid, 2)
    _who(executor, other)  # no CPU is free: the least recently used task (model) gives way
    assert _who(executor, verify) == (verify_pid, 3)
    pid, served = _who(executor, model)
    assert pid != model_pid and served == 1


def test_a_shard_takes_the_cpus_of_kept_workers_when_the_cluster_shrinks(executor, monkeypatch):
    kept, running = WhoRuns(), WhoRuns(seconds=3)
    kept_pid, _ = _who(executor, kept)
    ray = ray_executor.import_ray()
    whole = ray.cluster_resources()
    # The cluster reports one CPU fewer while the shard runs, as after a lost node: the kept
    # worker must give its CPU back, since a restarting worker could be waiting for it.
    monkeypatch.setattr(ray_executor, "WAIT_SECONDS", 0.5)
    calls = []

    def shrinking():  # after the running task's worker is made
        calls.append(1)
        return whole if len(calls) == 1 else {**whole, "CPU": whole["CPU"] - 1}

    monkeypatch.setattr(ray, "cluster_resources", shrinking)
    assert _who(executor, running)[1] == 1
    monkeypatch.undo()
    pid, served = _who(executor, kept)
    assert pid != kept_pid and served == 1


def test_a_user_error_on_a_worker_reaches_the_driver_as_itself(executor):
    """So the command says it in one line (exit code 2), not as Ray's failure to unpickle."""
    with pytest.raises(ConfigError) as raised:
        list(executor.map(RefusedSetup(), [Shard("square", "00", {"n": 2})], lambda s: Path("x")))
    said = "--model must be a checkpoint file that exists. Got 'ckpt:gone.pt' instead."
    assert str(raised.value) == said
    assert raised.value.name == "--model"
