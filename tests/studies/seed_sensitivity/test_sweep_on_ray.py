"""A seed sweep on a real two-node Ray cluster: the local backend's numbers, with a worker
killed in the middle of a shard; without Ray, `--backend ray` is one line."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from genprobe.runs.ray_executor import RayExecutor
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.training.trainer import TrainConfig

SHARD_TITLE = b"ray::Worker.run"  # Ray's process title while an actor runs a shard


def _kill_a_worker_running_a_shard() -> bool:
    for pid in _shard_workers():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            return True
    return False


def _long_enough(config):
    """Shards that are still running when the first epoch's end has been relayed to the driver
    (3 epochs of 32 steps), so the fault lands in the middle of one."""
    return replace(config, train_size=2000, train=TrainConfig(max_epochs=3))


def _local_and_ray(config, root, executor, fault):
    """Run `config` locally and on Ray, calling `fault()` during the Ray run when a shard ends
    an epoch before its last, until it returns True (the shards on other nodes may still be
    starting when the first one ends its first epoch); check that both wrote the same metrics.
    Returns (local run, Ray run, [True] if the fault happened, else [])."""
    local = run_sweep(config, root / "local")
    happened = []

    def on_progress(shard, progress):
        mid_run = progress.epoch < config.train.max_epochs and progress.step == progress.steps
        if not happened and mid_run and fault():
            happened.append(True)

    with executor:
        on_ray = run_sweep(config, root / "ray", executor=executor, on_progress=on_progress)
    assert (on_ray / "metrics.json").read_text() == (local / "metrics.json").read_text()
    return local, on_ray, happened


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="finds the worker through /proc")
def test_a_sweep_on_two_nodes_survives_a_killed_worker_with_the_local_numbers(
    ray_cluster, tiny_sweep, tmp_path
):
    config = _long_enough(tiny_sweep(seeds=(1, 2, 3), seeds_per_shard=2))
    local, on_ray, killed = _local_and_ray(
        config, tmp_path, RayExecutor(ray_cluster.address), _kill_a_worker_running_a_shard
    )
    assert killed == [True]
    for seed in config.seeds:
        member = f"members/seed={seed}.pt"
        assert (on_ray / member).read_bytes() == (local / member).read_bytes()
    manifests = sorted((on_ray / "shards" / "train").glob("*.json"))
    assert [m.stem for m in manifests] == ["seeds=1-2", "seeds=3-3"]
    assert '"backend": "ray"' in manifests[0].read_text()


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="finds the worker through /proc")
def test_the_shard_of_a_lost_node_reruns_on_another_with_the_local_numbers(
    ray_cluster, tiny_sweep, tmp_path
):
    config = _long_enough(tiny_sweep(seeds=(1, 2, 3), seeds_per_shard=1))
    ray_cluster.add_node(num_cpus=1)  # three nodes of one CPU, a shard on each
    ray_cluster.wait_for_nodes()

    def remove_a_node_running_a_shard():
        raylets = {_raylet_pid(node): node for node in ray_cluster.worker_nodes}
        for pid in _shard_workers():
            if (parent := _parent(pid)) in raylets:
                ray_cluster.remove_node(raylets[parent])
                return True
        return False

    executor = RayExecutor(ray_cluster.address, workers=3)
    _, _, lost = _local_and_ray(config, tmp_path, executor, remove_a_node_running_a_shard)
    assert lost == [True]  # its shard waited for a CPU another worker gave back


@pytest.mark.slow
def test_a_killed_driver_resumes_from_the_shards_it_wrote_with_the_local_numbers(
    ray_cluster, cli, tmp_path
):
    args = [
        "rewriting", "sweep", "--seeds", "3", "--seeds-per-shard", "1", "--train-size", "1000",
        "--validation-size", "20", "--suite-size", "12", "--max-epochs", "2",
    ]  # fmt: skip
    on_ray = [*args, "--backend", "ray", "--ray-address", ray_cluster.address]
    killed = tmp_path / "killed"
    driver = subprocess.Popen(
        [sys.executable, "-m", "genprobe", *on_ray, "--out", str(killed)],
        stderr=subprocess.DEVNULL,
    )
    # no deadline: the first chunk's manifest appears, or the sweep ends, however slow the machine
    while not any((killed / "shards" / "train").glob("*.json")) and driver.poll() is None:
        time.sleep(0.05)
    assert driver.poll() is None, "the sweep ended before its driver could be killed"
    driver.kill()
    driver.wait()
    written = {p.name: p.read_bytes() for p in (killed / "shards" / "train").glob("*.json")}

    # the driver that resumes, and the local run, are this process
    for argv in ([*on_ray, "--out", str(killed)], [*args, "--out", str(tmp_path / "local")]):
        code, _, err = cli(*argv)
        assert code == 0, err
    assert (killed / "metrics.json").read_text() == (
        tmp_path / "local" / "metrics.json"
    ).read_text()
    for name, manifest in written.items():  # not trained again
        assert (killed / "shards" / "train" / name).read_bytes() == manifest


def _shard_workers() -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if proc.name.isdigit() and (proc / "cmdline").read_bytes().startswith(SHARD_TITLE):
                pids.append(int(proc.name))
    return pids


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _raylet_pid(node) -> int:
    return node.all_processes["raylet"][0].process.pid


def test_the_ray_backend_without_ray_is_one_line(cli, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    code, _, err = cli("rewriting", "sweep", "--seeds", "1", "--backend", "ray",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 2
    assert err.strip().splitlines() == [
        "genprobe: error: --backend ray needs Ray: pip install 'genprobe[ray]'"
    ]
    assert not (tmp_path / "run").exists()


def test_a_ray_address_without_the_ray_backend_is_one_line(cli, tmp_path):
    code, _, err = cli("rewriting", "sweep", "--seeds", "1", "--ray-address", "auto",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 2
    assert err.strip().splitlines() == ["genprobe: error: --ray-address needs --backend ray"]
    assert not (tmp_path / "run").exists()


def test_a_ray_address_where_nothing_listens_is_one_line(cli, tmp_path):
    pytest.importorskip("ray")
    code, _, err = cli("rewriting", "sweep", "--seeds", "1", "--backend", "ray",
                       "--ray-address", "127.0.0.1:1", "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 2
    [line] = err.strip().splitlines()
    assert line.startswith("genprobe: error: --ray-address 127.0.0.1:1: no Ray cluster answers")
    assert not (tmp_path / "run").exists()
