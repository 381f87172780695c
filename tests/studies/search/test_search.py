"""The failure search (`genprobe search`) on a real sweep: three MLP seeds of modular addition,
trained for one epoch, so that they fail most inputs and disagree on some. What it archives is
checked against the model's own answers and the task's verifier, decoded afresh."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from genprobe.analysis.tables import read_tables
from genprobe.models.architectures.mlp import MLPConfig
from genprobe.models.registry import load_model
from genprobe.studies import report_run
from genprobe.studies.search.analysis import features
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.evolve import from_keys
from genprobe.studies.search.search import run_search
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.tasks.registry import load_task
from genprobe.training.trainer import TrainConfig
from genprobe.verification.verdict import Outcome

SMALL = {"generations": 3, "population": 20, "mutants": 3, "base_size": 40}


@pytest.fixture(scope="module")
def sweep(tiny_sweep, tmp_path_factory):
    config = tiny_sweep(
        seeds=(1, 2, 3),
        task=load_task("binary_operation", {"p": 23}),
        model=MLPConfig(hidden=32),
        train=TrainConfig(max_epochs=1, lr=0.01, optimizer="adamw", batch_size=16),
    )
    return run_sweep(config, tmp_path_factory.mktemp("sweep") / "run")


@pytest.fixture(scope="module")
def model(sweep):
    return load_model(f"run:{sweep}")


@pytest.fixture(scope="module")
def most(sweep, tmp_path_factory):
    """A search for inputs most seeds fail."""
    return run_search(SearchConfig(f"run:{sweep}", **SMALL), tmp_path_factory.mktemp("most") / "s")


def _failed(model, inputs: list[str]) -> np.ndarray:
    """(S, N) whether each seed fails each input, decoded and judged afresh."""
    src = from_keys(inputs)
    ranked = model.candidates(src, 1)
    members, n = ranked.out.shape[:2]
    outcomes = model.task.outcomes(
        np.tile(src, (members, 1)),
        ranked.out[:, :, 0].reshape(members * n, -1),
        ranked.length[:, :, 0].reshape(-1),
        ranked.finished[:, :, 0].reshape(-1),
    )
    return outcomes.reshape(members, n) != Outcome.CORRECT.value


def _evaluated(run) -> pd.DataFrame:
    return pd.concat(pd.read_parquet(p) for p in sorted((run / "generations").glob("*.parquet")))


def test_archived_inputs_fail_for_the_share_of_seeds_the_archive_states(most, model):
    archive = pd.read_parquet(most / "archive.parquet")
    assert len(archive) > 0
    failed = _failed(model, list(archive["input"]))
    np.testing.assert_array_equal(failed.sum(axis=0), archive["failed"])
    np.testing.assert_allclose(failed.mean(axis=0), archive["fitness"])
    assert (archive["fitness"] >= 0.5).all()
    # every input that reached the tau is archived, once
    evaluated = _evaluated(most)
    assert archive["input"].is_unique and evaluated["input"].is_unique
    assert set(archive["input"]) == set(evaluated.loc[evaluated["fitness"] >= 0.5, "input"])


def test_invalid_mutants_are_counted_per_operator_and_never_scored(most, model):
    evaluated = _evaluated(most)
    assert model.task.valid_inputs(from_keys(list(evaluated["input"]))).all()
    stats = json.loads((most / "search.json").read_text())["stats"]
    invalid = 0
    for generation in stats[1:]:
        made = evaluated[evaluated["generation"] == generation["generation"]]
        for name, counts in generation["operators"].items():
            kept = counts["asked"] - counts["not applicable"] - counts["invalid"]
            assert kept - counts["duplicate"] == (made["operator"] == name).sum(), name
            invalid += counts["invalid"]
    # an inserted or deleted token never leaves "a b =" a valid input of the task
    assert invalid > 0
    assert not evaluated["operator"].isin(["insert", "delete"]).any()


def test_the_same_seed_gives_the_same_archive(sweep, most, tmp_path):
    again = run_search(SearchConfig(f"run:{sweep}", **SMALL), tmp_path / "again")
    pd.testing.assert_frame_equal(
        pd.read_parquet(again / "archive.parquet"), pd.read_parquet(most / "archive.parquet")
    )
    other = run_search(SearchConfig(f"run:{sweep}", **{**SMALL, "seed": 1}), tmp_path / "other")
    assert set(_evaluated(other)["input"]) != set(_evaluated(most)["input"])


def test_a_search_stopped_by_its_budget_resumes_to_the_uninterrupted_archive(sweep, most, tmp_path):
    config = SearchConfig(f"run:{sweep}", **SMALL, minutes=1.0)
    ticks = iter(range(0, 10_000, 50))  # 50 s of "CPU time" per reading: two generations
    stopped = run_search(config, tmp_path / "run", clock=lambda: next(ticks))
    state = json.loads((stopped / "search.json").read_text())
    assert state["stop"] == "time budget" and state["generations"] < SMALL["generations"]
    resumed = run_search(config, tmp_path / "run")
    assert json.loads((resumed / "search.json").read_text())["stop"] == "generations"
    pd.testing.assert_frame_equal(
        pd.read_parquet(resumed / "archive.parquet"), pd.read_parquet(most / "archive.parquet")
    )


def test_disagree_finds_inputs_seed_a_gets_right_and_seed_b_wrong(sweep, model, tmp_path):
    config = SearchConfig(f"run:{sweep}", target="disagree:1,2", tau=1.0, **SMALL)
    archive = pd.read_parquet(run_search(config, tmp_path / "run") / "archive.parquet")
    assert len(archive) > 0
    failed = _failed(model, list(archive["input"]))
    assert not failed[0].any() and failed[1].all()  # members in seed order: 1, 2, 3


def test_clusters_and_slices_describe_what_was_found(most, model):
    archive = pd.read_parquet(most / "archive.parquet")
    found = json.loads((most / "clusters.json").read_text())["clusters"]
    assert sorted(r for c in found for r in c["rows"]) == list(range(len(archive)))
    table = features(model.task, list(archive["input"]))
    for cluster in found:
        rows = archive.iloc[cluster["rows"]]
        assert cluster["seeds_failing"] == pytest.approx((rows["failed"] / 3).mean())
        assert cluster["all_seeds_fail"] == (rows["failed"] == 3).sum()
        for apart in cluster["apart"]:
            values = table[apart["feature"]].iloc[cluster["rows"]]
            assert (values.min(), values.max()) == (apart["low"], apart["high"])
        assert {e["text"] for e in cluster["examples"]} <= set(rows["text"])
    evaluated = _evaluated(most)
    every = features(model.task, list(evaluated["input"]))
    slices = pd.read_parquet(most / "slices.parquet")
    assert len(slices) > 0
    for s in slices.itertuples():
        inside = (every[s.feature] >= s.low) & (every[s.feature] <= s.high)
        assert inside.sum() == s.inputs
        assert (evaluated["failed"].to_numpy()[inside] / 3).mean() == pytest.approx(s.failure)


def test_the_report_and_tables_read_the_result_files(most):
    md, page = report_run(most)
    text = md.read_text()
    found = json.loads((most / "clusters.json").read_text())["clusters"]
    assert "## Clusters of the archive" in text and page.exists()
    assert text.count("### Cluster ") == len(found)
    assert "invalid (never scored)" in text
    tables = read_tables(most)
    assert len(tables["examples"]) == len(_evaluated(most))
    assert len(tables["clusters"]) == len(found)


def test_bad_input_is_one_line_exit_2_and_nothing_written(sweep, tmp_path, capsys):
    from genprobe.cli import main

    unfinished = tmp_path / "unfinished"
    shutil.copytree(sweep, unfinished)
    next((unfinished / "shards" / "train").glob("*.json")).unlink()
    cases = {
        ("--target", "best"): "--target",
        ("--target", "disagree:1,9"): "seeds (1, 2, 3)",
        ("--task", "scan"): "the run's own task",
        ("--tau", "0"): "--tau",
    }
    runs = {
        f"run:{unfinished}": "have not finished training",
        f"run:{tmp_path}": "not a run directory",
        f"ckpt:{sweep}": "run:RUN_DIR",
    }
    argv = [(f"run:{sweep}", option, value, said) for (option, value), said in cases.items()]
    argv += [(spec, "--seed", "0", said) for spec, said in runs.items()]
    for spec, option, value, said in argv:
        out = tmp_path / "out"
        with pytest.raises(SystemExit) as exit:
            main(["search", "--model", spec, "--out", str(out), option, value])
        error = capsys.readouterr().err
        assert exit.value.code == 2 and error.count("\n") == 1 and said in error, error
        assert not out.exists(), (spec, option, value)
