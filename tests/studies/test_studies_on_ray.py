"""The brittleness study, a SAGGA search, data generation, a probe and a failure search on a real
two-node Ray cluster give what the local backend gives: every candidate and verdict, the same
archive, the same pairs.
Deadlines are budgets of CPU time, so Ray's workers (at nice 15, on a loaded machine) time out on
what the local run times out on."""

import pandas as pd
import pytest
from helpers import examples

pytestmark = pytest.mark.slow


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
            "--beam", "2", "--max-len", "24", "--generation-size", "24", "--seed-size", "6",
            "--verify-chunk", "5", *backend,
        )  # fmt: skip
        assert code == 0, err
        return tmp_path / name

    local = run("local", "--workers", "1")
    on_ray = run("ray", "--backend", "ray", "--ray-address", ray_cluster.address)
    verify_shards = list((on_ray / "shards" / "verify").glob("00001-*.json"))
    assert len(verify_shards) > 1  # a generation is verified in shards, the unit Ray spreads
    archive = (local / "archive.jsonl").read_text()
    assert archive  # a random network fails plenty
    assert (on_ray / "archive.jsonl").read_text() == archive
    for generation in ("00001", "00002"):
        path = f"generations/{generation}.parquet"
        frame = pd.read_parquet(on_ray / path)
        pd.testing.assert_frame_equal(frame, pd.read_parquet(local / path))


def test_generation_on_two_nodes_makes_the_local_pairs(ray_cluster, cli, tmp_path):
    def run(name, *backend):
        out = tmp_path / name
        code, _, err = cli(
            "integration", "generate", "--method", "bwd", "--n", "40", "--max-ops", "6",
            "--shard-size", "16", "--seed", "3", "--out", str(out), *backend,
        )  # fmt: skip
        assert code == 0, err
        return out

    local = run("local", "--workers", "1")
    on_ray = run("ray", "--backend", "ray", "--ray-address", ray_cluster.address)
    assert len(list((tmp_path / "ray.run" / "attempts").glob("*.jsonl"))) > 1  # shards spread
    assert on_ray.read_text() == local.read_text()
    assert len(local.read_text().splitlines()) == 40


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
