"""Everything that runs on a real Ray cluster, on one cluster started for this module (Ray's
processes then stop, so the rest of the suite does not share the cores with them):

- the executor keeps each task's workers between stages (a search alternates a model's stage
  with verification), gives way when a task finds no room, and lets a running shard take the
  CPUs of kept workers when the cluster loses a node;
- a seed sweep gives the local backend's numbers with a worker killed and a node lost in the
  middle of its shards, and a killed driver resumes from the shards it wrote;
- the brittleness study, a SAGGA search, data generation, a probe and a failure search give
  what the local backend gives: every candidate and verdict, the same archive, the same pairs.
  Deadlines are budgets of CPU time, so Ray's workers (at nice 15, on a loaded machine) time
  out on what the local run times out on;
- without Ray, or without a cluster where one is named, `--backend ray` is one line."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import shard_stages
from helpers import examples
from shard_stages import RefusedSetup, WhoRuns

from genprobe.errors import ConfigError
from genprobe.runs import ray_executor
from genprobe.runs.ray_executor import RayExecutor
from genprobe.runs.shards import Shard
from genprobe.studies.search.sagga.results import read_archive
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.training.trainer import TrainConfig

pytestmark = pytest.mark.slow

SHARD_TITLE = b"ray::Worker.run"  # Ray's process title while an actor runs a shard


@pytest.fixture(scope="module")
def ray_cluster():
    """A real Ray cluster on this machine: a head and a worker node of one CPU each, no
    dashboard; this process its driver."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local test cluster
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture
def executor(ray_cluster):
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(shard_stages)  # Ray's workers cannot import tests/
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


@pytest.mark.skipif(sys.platform != "linux", reason="finds the workers through /proc")
def test_a_sweep_survives_a_lost_node_and_a_killed_worker_with_the_local_numbers(
    ray_cluster, tiny_sweep, tmp_path
):
    """Three nodes of one CPU, a shard of one seed on each (3 epochs of 32 steps, so shards
    are still running when the first epoch's end reaches the driver): once a shard ends an
    epoch before its last, the node running a shard is removed (that shard waits for a CPU
    another worker gives back and reruns), and then the worker of another running shard is
    killed (Ray restarts it and retries the shard). The members are the local run's."""
    config = replace(
        tiny_sweep(seeds=(1, 2, 3), seeds_per_shard=1), train_size=2000,
        train=TrainConfig(max_epochs=3),
    )  # fmt: skip
    local = run_sweep(config, tmp_path / "local")
    ray_cluster.add_node(num_cpus=1)
    ray_cluster.wait_for_nodes()
    lost = set()  # the worker processes of the removed node

    def remove_a_node_running_a_shard() -> bool:
        raylets = {_raylet_pid(node): node for node in ray_cluster.worker_nodes}
        for pid in _shard_workers():
            if (parent := _parent(pid)) in raylets:
                lost.add(pid)
                ray_cluster.remove_node(raylets[parent])
                return True
        return False

    def kill_a_worker_running_another_shard() -> bool:
        for pid in _shard_workers():
            if pid not in lost:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    return True
        return False

    faults = [remove_a_node_running_a_shard, kill_a_worker_running_another_shard]

    def on_progress(shard, progress):
        mid_run = progress.epoch < config.train.max_epochs and progress.step == progress.steps
        if faults and mid_run and faults[0]():
            faults.pop(0)

    with RayExecutor(ray_cluster.address, workers=3) as executor:
        on_ray = run_sweep(config, tmp_path / "ray", executor=executor, on_progress=on_progress)
    assert not faults, "a fault did not happen"
    assert (on_ray / "metrics.json").read_text() == (local / "metrics.json").read_text()
    for seed in config.seeds:
        member = f"members/seed={seed}.pt"
        assert (on_ray / member).read_bytes() == (local / member).read_bytes()
    manifests = sorted((on_ray / "shards" / "train").glob("*.json"))
    assert [m.stem for m in manifests] == ["seeds=1-1", "seeds=2-2", "seeds=3-3"]
    assert all('"backend": "ray"' in m.read_text() for m in manifests)


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


def test_a_brittleness_run_on_two_nodes_is_the_local_run(
    ray_cluster, cli, checkpoint, validation, tmp_path, monkeypatch
):
    # the checkpoint named relative to this directory, which Ray's workers do not run in
    monkeypatch.chdir(checkpoint.parent)

    def run(name, *backend):
        code, _, err = cli(
            "integration", "brittleness", "--model", f"ckpt:{checkpoint.name}", "--out",
            str(tmp_path / name), "--validation", str(validation), "--suites", "in-distribution",
            "robustness-simple", "--n", "3", "--beam", "3", "--k", "1", "3", "--max-len", "24",
            *backend,
        )  # fmt: skip
        assert code == 0, err
        return tmp_path / name

    local = run("local", "--workers", "1")
    on_ray = run("ray", "--backend", "ray", "--ray-address", ray_cluster.address)
    pd.testing.assert_frame_equal(examples(on_ray), examples(local))
    assert (on_ray / "summary.json").read_text() == (local / "summary.json").read_text()


def test_a_sagga_search_on_two_nodes_archives_what_the_local_one_does(
    ray_cluster, cli, checkpoint, tmp_path, monkeypatch
):
    monkeypatch.chdir(checkpoint.parent)  # a relative path, as above

    def run(name, *backend):
        code, _, err = cli(
            "integration", "sagga", "--model", f"ckpt:{checkpoint.name}", "--out",
            str(tmp_path / name),
            "--basis", "polynomial_robustness", "--preset", "robustness", "--generations", "2",
            "--beam", "2", "--max-len", "24", "--generation-size", "12", "--seed-size", "4",
            "--verify-chunk", "4", *backend,
        )  # fmt: skip
        assert code == 0, err
        return tmp_path / name

    local = run("local", "--workers", "1")
    on_ray = run("ray", "--backend", "ray", "--ray-address", ray_cluster.address)
    verify_shards = list((on_ray / "shards" / "verify").glob("00001-*.json"))
    assert len(verify_shards) > 1  # a generation is verified in shards, the unit Ray spreads
    archive = read_archive(local)
    assert len(archive)  # a random network fails plenty
    pd.testing.assert_frame_equal(read_archive(on_ray), archive)
    for generation in ("00001", "00002"):
        path = f"generations/{generation}.parquet"
        frame = pd.read_parquet(on_ray / path)
        pd.testing.assert_frame_equal(frame, pd.read_parquet(local / path))


def test_generation_on_two_nodes_makes_the_local_pairs(ray_cluster, cli, tmp_path):
    def run(name, *backend):
        out = tmp_path / name
        code, _, err = cli(
            "integration", "generate", "--method", "bwd", "--n", "12", "--max-ops", "4",
            "--shard-size", "4", "--seed", "3", "--engine", "fast", "--out", str(out), *backend,
        )  # fmt: skip
        assert code == 0, err
        return out

    local = run("local", "--workers", "1")
    on_ray = run("ray", "--backend", "ray", "--ray-address", ray_cluster.address)
    assert len(list((tmp_path / "ray.run" / "attempts").glob("*.jsonl"))) > 1  # shards spread
    assert on_ray.read_text() == local.read_text()
    assert len(local.read_text().splitlines()) == 12


@pytest.fixture(scope="module")
def sweep(tiny_sweep, tmp_path_factory):
    from genprobe.studies.seed_sensitivity import run_sweep
    from genprobe.tasks import load_task

    task = load_task("addition", {"format": "reversed", "train_digits": 2})
    return run_sweep(tiny_sweep(seeds=(1, 2), task=task), tmp_path_factory.mktemp("run") / "sweep")


def test_a_probe_and_a_failure_search_on_two_nodes_are_the_local_ones(
    ray_cluster, cli, sweep, tmp_path
):
    def run(command, name, *args):
        out = tmp_path / f"{command}-{name}"
        code, _, err = cli(command, "--model", f"run:{sweep}", "--out", str(out), *args)
        assert code == 0, err
        return out

    ray = ("--backend", "ray", "--ray-address", ray_cluster.address)
    probe = ("--size", "20", "--k", "2")
    local, on_ray = run("probe", "local", *probe), run("probe", "ray", *probe, *ray)
    for path in sorted((local / "results").glob("*.parquet")):
        pd.testing.assert_frame_equal(
            pd.read_parquet(on_ray / "results" / path.name), pd.read_parquet(path)
        )
    search = ("--generations", "3", "--population", "8", "--base-size", "20")
    local, on_ray = run("search", "local", *search), run("search", "ray", *search, *ray)
    pd.testing.assert_frame_equal(
        pd.read_parquet(on_ray / "archive.parquet"), pd.read_parquet(local / "archive.parquet")
    )
