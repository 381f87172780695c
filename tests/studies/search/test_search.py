"""The failure search (`genprobe search`) on a real sweep: three MLP seeds of modular addition,
trained for one epoch, so that they fail most inputs and disagree on some. What it archives is
checked against the model's own answers and the task's verifier, decoded afresh."""

import dataclasses
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from helpers import damage, model_settings, rerecord, unfinish

from genprobe import read_tables
from genprobe.errors import ConfigError, RunDirError
from genprobe.models.architectures.mlp import MLPConfig
from genprobe.runs.provenance import config_hash
from genprobe.studies import report_run
from genprobe.studies.search import analysis as search_analysis
from genprobe.studies.search import loop as search_loop
from genprobe.studies.search import report as search_report
from genprobe.studies.search import tags as search_tags
from genprobe.studies.search.analysis import features
from genprobe.studies.search.clusters import MAX_CONTRAST
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.embedding import make_embedder
from genprobe.studies.search.search import run_search
from genprobe.studies.search.slices import Literal, Slice
from genprobe.studies.seed_sensitivity import results as sweep_results
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.studies.seed_sensitivity.members import load_members, unfinished_seeds
from genprobe.tasks.binary_operation_probes import BinaryOperationProbes
from genprobe.tasks.probing import FAILURE_KINDS, Tag, from_input_keys, input_keys
from genprobe.tasks.registry import load_task, task_probes
from genprobe.tasks.tokens import input_lines
from genprobe.tasks.verdict import Outcome
from genprobe.training.trainer import TrainConfig
from genprobe.under_test.registry import ModelSpec, load_model

SMALL = {"generations": 3, "population": 20, "mutants": 3, "base_size": 40}
MORE = {"generations": 5, "mutants": 6}  # of the strong run: some mutants of failures it solves
TARGETS = ["3 4 =", "17 22 ="]  # inputs as the report prints binary_operation's


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
    return run_search(
        SearchConfig(model_settings(f"run:{sweep}"), **SMALL), tmp_path_factory.mktemp("most") / "s"
    )


def _failed(model, inputs: list[str]) -> np.ndarray:
    """(S, N) whether each seed fails each input, decoded and judged afresh."""
    src = from_input_keys(inputs)
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


@pytest.mark.parametrize("fitness", ["length_penalty", "target_length", "target_problems"])
def test_a_text_fitness_weighs_the_share_of_seeds_failing_by_the_inputs_text(
    sweep, model, fitness, tmp_path
):
    targets = tmp_path / "targets.txt"
    targets.write_text("\n".join(TARGETS[:1]) + "\n\n" + TARGETS[1] + "\n")  # a blank line
    weighed = {"length_penalty": {}, "target_length": {"target_length": 9}}.get(
        fitness, {"targets_file": str(targets)}
    )
    config = SearchConfig(model_settings(f"run:{sweep}"), **SMALL, fitness=fitness, **weighed)
    run = run_search(config, tmp_path / "s")
    evaluated = _evaluated(run)
    texts = list(evaluated["text"])
    lengths = np.array([len(t) for t in texts], dtype=float)
    weight = {
        "length_penalty": 1 / lengths,
        "target_length": 1 / (np.abs(lengths - 9) + 1),
        "target_problems": (
            make_embedder("char").embed(texts) @ make_embedder("char").embed(TARGETS).T
        ).max(axis=1),
    }[fitness]
    share = _failed(model, list(evaluated["input"])).mean(axis=0)
    np.testing.assert_allclose(evaluated["fitness"], share * weight)
    assert (weight < 1).any() and (weight > 0).all()
    # SAGGA's tau when --tau is left out, as the identity records it
    archive = pd.read_parquet(run / "archive.parquet")
    assert config.archive_tau == 0.01 and config.absolute().tau == 0.01
    assert set(archive["input"]) == set(evaluated.loc[evaluated["fitness"] >= 0.01, "input"])
    assert len(archive) > 0
    said = {"length_penalty": "1 / the length", "target_length": "| + 1)"}
    assert said.get(fitness, str(targets)) in report_run(run)[0].read_text()


def test_bad_fitness_settings_are_one_line_exit_2_and_nothing_written(sweep, tmp_path, capsys):
    from genprobe.cli import main

    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n")
    cases = [
        (["--fitness", "short"], "--fitness must be one of"),
        (["--fitness", "target_length"], "--target-length"),
        (["--fitness", "target_length", "--target-length", "0"], "--target-length"),
        (["--fitness", "target_problems"], "--targets"),
        (["--fitness", "target_problems", "--targets", str(tmp_path / "no.txt")], "no.txt"),
        (["--fitness", "target_problems", "--targets", str(empty)], "empty.txt"),
        (["--targets", str(empty)], "--targets must be left out unless --fitness target_problems"),
        (["--target-length", "9"], "--target-length must be left out unless --fitness target_len"),
    ]
    for options, said in cases:
        out = tmp_path / "out"
        with pytest.raises(SystemExit) as exit:
            main(["search", "--model", f"run:{sweep}", "--out", str(out), *options])
        error = capsys.readouterr().err
        assert exit.value.code == 2 and error.count("\n") == 1 and said in error, error
        assert not out.exists(), options


def test_invalid_mutants_are_counted_per_operator_and_never_scored(most, model):
    evaluated = _evaluated(most)
    assert task_probes(model.task).valid_inputs(from_input_keys(list(evaluated["input"]))).all()
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
    again = run_search(SearchConfig(model_settings(f"run:{sweep}"), **SMALL), tmp_path / "again")
    pd.testing.assert_frame_equal(
        pd.read_parquet(again / "archive.parquet"), pd.read_parquet(most / "archive.parquet")
    )
    other = run_search(
        SearchConfig(model_settings(f"run:{sweep}"), **{**SMALL, "seed": 1}), tmp_path / "other"
    )
    assert set(_evaluated(other)["input"]) != set(_evaluated(most)["input"])


def test_a_finished_searchs_rerun_only_reads(sweep, most, tmp_path, monkeypatch):
    """No generation replayed, no analysis made again (clusters, slices: tags run SymPy on an
    integration search), no file changed."""
    run = tmp_path / "s"
    shutil.copytree(most, run)
    files = {path: path.read_bytes() for path in run.rglob("*") if path.is_file()}

    def computes(*args, **kwargs):
        raise AssertionError("a finished search computed again")

    monkeypatch.setattr(search_analysis, "clusters", computes)
    monkeypatch.setattr(search_analysis, "slices", computes)
    monkeypatch.setattr(search_loop.Search, "absorb", computes)
    run_search(SearchConfig(model_settings(f"run:{sweep}"), **SMALL), run)
    assert {path: path.read_bytes() for path in run.rglob("*") if path.is_file()} == files


class Killed(Exception):
    """The analysis killed mid-way (after the tag shards before it finished)."""


def test_a_killed_analysis_tags_no_input_twice_and_ends_as_an_uninterrupted_one(
    sweep, most, tmp_path, monkeypatch
):
    """The task's tags go through the shards of `tags.py`: killed after two of them, the rerun
    tags only the inputs no finished shard has, and writes the clusters an uninterrupted
    analysis writes."""
    asked: list[list[str]] = []
    kill_at = [None]

    def fake(self, src, workers=None):
        if len(asked) == kill_at[0]:
            raise Killed
        keys = input_keys(src)
        asked.append(keys)
        return [Tag(FAILURE_KINDS[len(key) % 3], f"{len(key)} ids") for key in keys]

    monkeypatch.setattr(BinaryOperationProbes, "tag_failures", fake)
    monkeypatch.setattr(search_tags, "TAG_CHUNK", 4)
    config = SearchConfig(model_settings(f"run:{sweep}"), **SMALL, tag_limit=10)
    runs = {name: tmp_path / name for name in ("whole", "killed")}
    for run in runs.values():
        shutil.copytree(most, run)
    run_search(config, runs["whole"])  # another --tag-limit: the analysis only, again
    assert [len(keys) for keys in asked] == [4, 4, 2]
    whole, asked[:] = [key for keys in asked for key in keys], []
    kill_at[0] = 2
    with pytest.raises(Killed):
        run_search(config, runs["killed"])
    kill_at[0] = None
    run_search(config, runs["killed"])
    tagged = [key for keys in asked for key in keys]
    assert sorted(tagged) == sorted(whole) and len(set(tagged)) == len(tagged) == 10
    assert [len(keys) for keys in asked] == [4, 4, 2]  # the last 2, in a shard of their own
    found = json.loads((runs["killed"] / "clusters.json").read_text())
    assert found == json.loads((runs["whole"] / "clusters.json").read_text())
    examples = [e for c in found["clusters"] for e in c["examples"]]
    assert [e["input"] in whole for e in examples] == ["tag" in e for e in examples]
    assert all(e["tag"]["detail"] == f"{len(e['input'])} ids" for e in examples if "tag" in e)
    assert any("tag" in e for e in examples)
    assert sum(sum(c["tagged"].values()) for c in found["clusters"]) == 10


def test_a_search_stopped_by_its_budget_resumes_to_the_uninterrupted_archive(sweep, most, tmp_path):
    config = SearchConfig(model_settings(f"run:{sweep}"), **SMALL, minutes=1.0)
    ticks = iter(range(0, 10_000, 50))  # 50 s of "CPU time" per reading: two generations
    stopped = run_search(config, tmp_path / "run", clock=lambda: next(ticks))
    state = json.loads((stopped / "search.json").read_text())
    assert state["stop"] == "time budget" and state["generations"] < SMALL["generations"]
    resumed = run_search(dataclasses.replace(config, minutes=None), tmp_path / "run")
    assert json.loads((resumed / "search.json").read_text())["stop"] == "generations"
    pd.testing.assert_frame_equal(
        pd.read_parquet(resumed / "archive.parquet"), pd.read_parquet(most / "archive.parquet")
    )


@pytest.mark.parametrize("selection", ["fitness", "kmeans"])
def test_saggas_selection_mutates_what_the_last_generation_archived_and_the_base(
    sweep, selection, tmp_path
):
    sizes = {**SMALL, "generations": 6, "population": 8}
    config = SearchConfig(model_settings(f"run:{sweep}"), **sizes, selection=selection)
    evaluated = _evaluated(run_search(config, tmp_path / "s"))
    base = set(evaluated.loc[evaluated["generation"] == 0, "input"])
    from_archive = 0
    for generation in range(1, config.generations + 1):
        before = evaluated[evaluated["generation"] == generation - 1]
        archived = before[before["fitness"] >= config.archive_tau]
        parents = set(evaluated.loc[evaluated["generation"] == generation, "parent"])
        assert parents & base and parents <= base | set(archived["input"])
        if selection == "fitness":  # only the fittest `population` of them
            fittest = archived.sort_values("fitness", ascending=False, kind="stable")
            assert parents - base <= set(fittest["input"][: config.population])
        from_archive += len(parents - base)
    assert from_archive


def _failed_by_all(model, src: np.ndarray, ranked) -> np.ndarray:
    """(S, N) whether none of each member's candidates (`Ranked`) of each input is right."""
    members, n, k = ranked.out.shape[:3]
    outcomes = model.task.outcomes(
        np.repeat(np.tile(src, (members, 1)), k, axis=0), ranked.out.reshape(members * n * k, -1),
        ranked.length.reshape(-1), ranked.finished.reshape(-1),
    ).reshape(members, n, k)  # fmt: skip
    right = (outcomes == Outcome.CORRECT.value) & np.isfinite(ranked.score)
    return ~right.any(axis=2)


def test_at_k_seeds_fail_the_inputs_none_of_their_top_k_beam_candidates_solve(
    sweep, model, tmp_path
):
    run = run_search(SearchConfig(model_settings(f"run:{sweep}"), k=3, **SMALL), tmp_path / "s")
    evaluated = _evaluated(run)
    src = from_input_keys(list(evaluated["input"]))
    failed = _failed_by_all(model, src, model.candidates(src, 3))
    assert evaluated["failed"].tolist() == failed.sum(axis=0).tolist()
    greedy = _failed(model, list(evaluated["input"]))
    assert (failed <= greedy).all() and (failed < greedy).any()  # some right only at rank 2-3


def test_with_a_temperature_seeds_fail_the_inputs_none_of_their_samples_solve(
    strong_sweep, tmp_path
):
    config = SearchConfig(
        model_settings(f"run:{strong_sweep}"), k=4, temperature=1.5, seed=3, **SMALL
    )
    run = run_search(config, tmp_path / "s")
    evaluated = _evaluated(run)
    src = from_input_keys(list(evaluated["input"]))
    model = load_model(f"run:{strong_sweep}")
    failed = _failed_by_all(model, src, model.sampled(src, 4, 1.5, 3))
    assert evaluated["failed"].tolist() == failed.sum(axis=0).tolist()
    greedy = _failed(model, list(evaluated["input"]))
    assert (failed != greedy).any()  # samples are not greedy's answer
    text = report_run(run)[0].read_text()
    assert "4 samples at temperature 1.5 (seed 3), the distinct ones most probable first" in text


def test_disagree_finds_inputs_seed_a_gets_right_and_seed_b_wrong(sweep, model, tmp_path):
    config = SearchConfig(model_settings(f"run:{sweep}"), target="disagree:1,2", tau=1.0, **SMALL)
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
    # a task that cannot tell an exploit from a robustness failure tags nothing
    assert not any("tag" in e for c in found for e in c["examples"]) and "| kind |" not in text
    assert "invalid (never scored)" in text
    tables = read_tables(most)
    assert len(tables["examples"]) == len(_evaluated(most))
    assert len(tables["clusters"]) == len(found)


def test_a_boolean_features_slice_reads_as_a_condition():
    def row(feature, low, **boolean):
        return SimpleNamespace(feature=feature, low=low, high=low, **boolean)

    read = search_report._feature_slice
    assert read(row("abs", 1, boolean=True)) == "has abs"
    assert read(row("abs", 0, boolean=True)) == "no abs"
    assert read(row("x in exponent", 1, boolean=True)) == "x in exponent"
    assert read(row("depth", 6, boolean=False)) == "depth = 6"
    assert read(row("abs", 1)) == "abs = 1"  # slices.parquet of a search before booleans


def test_a_feature_range_shows_integers_in_full():
    assert search_report._range(166.0, 17565568854912.0) == "166–17565568854912"
    assert search_report._range(0.5, 0.5) == "0.5" and search_report._range(2, 3.25) == "2–3.25"


def _trained(run: Path) -> set[str]:
    """The inputs of the sweep's training file, as written there."""
    lines = (Path(run) / "data" / "train.jsonl").read_text().splitlines()
    return {json.loads(line)["input"] for line in lines}


def _lines(keys: pd.Series) -> list[str]:
    vocab = load_task("binary_operation", {"p": 23}).source_vocab
    return input_lines(vocab, from_input_keys(list(keys)))


def test_the_inputs_the_seeds_trained_on_are_marked_and_counted(most, sweep):
    trained = _trained(sweep)
    archive, evaluated = pd.read_parquet(most / "archive.parquet"), _evaluated(most)
    assert list(archive["trained_on"]) == [text in trained for text in _lines(archive["input"])]
    stats = json.loads((most / "search.json").read_text())["stats"]
    every = _lines(evaluated["input"])
    assert sum(s["trained_on"] for s in stats) == sum(t in trained for t in every) > 0
    assert sum(s["archived_trained_on"] for s in stats) == archive["trained_on"].sum()
    assert "| archived inputs the seeds trained on |" in report_run(most)[0].read_text()


def test_bad_input_is_one_line_exit_2_and_nothing_written(sweep, tmp_path, capsys):
    from genprobe.cli import main

    unfinished = tmp_path / "unfinished"
    shutil.copytree(sweep, unfinished)
    unfinish(unfinished, "train")
    cases = {
        ("--target", "best"): "--target",
        ("--target", "disagree:1,9"): "seeds (1, 2, 3)",
        ("--task", "scan"): "the run's own task",
        ("--tau", "0"): "--tau",
        ("--formats", "2"): "left out for a model that is not a language model",
        ("--data-seed", "3"): "--data-seed must be left out for a run: model",
        ("--selection", "roulette"): "--selection",
        ("--k", "0"): "--k must be 1 to 64",
        ("--tag-limit", "-1"): "--tag-limit must be an integer >= 0",
        ("--temperature", "0"): "--temperature must be a positive number",
        ("--temperature", "inf"): "--temperature must be a positive number",
        ("--temperature", "1"): "--temperature must be with --k 2 or more",
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


# --- some seeds (run:RUN_DIR@SEEDS), and two runs (--against) --------------------------------


def test_a_run_spec_with_seeds_searches_those_seeds_only(sweep, tmp_path):
    config = SearchConfig(
        model_settings(f"run:{sweep}@1,3"), target="disagree:3,1", tau=1.0, **SMALL
    )
    run = run_search(config, tmp_path / "run")
    assert json.loads((run / "search.json").read_text())["members"] == ["seed=1", "seed=3"]
    archive = pd.read_parquet(run / "archive.parquet")
    assert len(archive) > 0
    failed = _failed(load_model(f"run:{sweep}@1,3"), list(archive["input"]))
    assert failed[0].all() and not failed[1].any()  # seed 3 right, seed 1 wrong
    with pytest.raises(ConfigError, match=r"run.s seeds \(1, 3\)"):
        SearchConfig(model_settings(f"run:{sweep}@1,3"), target="disagree:1,2").checked()


@pytest.fixture(scope="module")
def strong_most(strong_sweep, tmp_path_factory):
    """A search for inputs most of the strong run's seeds fail, from its training inputs: its
    seeds get some of the inputs evaluated right."""
    config = SearchConfig(
        model_settings(f"run:{strong_sweep}"), base_split="train", **{**SMALL, **MORE}
    )
    return run_search(config, tmp_path_factory.mktemp("strong_most") / "s")


def test_each_cluster_has_a_slice_against_the_inputs_every_seed_gets_right(
    strong_most, strong_sweep
):
    most, model = strong_most, load_model(f"run:{strong_sweep}")
    archive = pd.read_parquet(most / "archive.parquet")
    evaluated = _evaluated(most)
    right = evaluated[evaluated["failed"] == 0]  # fewer than MAX_CONTRAST: all of them
    assert 0 < len(right) < MAX_CONTRAST and not _failed(model, list(right["input"])).any()
    held = features(model.task, list(archive["input"]))
    contrast = features(model.task, list(right["input"]))
    found = json.loads((most / "clusters.json").read_text())["clusters"]
    for cluster in found:
        found_slice = cluster["slice"]
        conditions = [Literal(*c) for c in found_slice["conditions"]]
        assert found_slice["text"] == Slice(tuple(conditions), 0, 0, 0, 0).text
        members = np.logical_and.reduce([c.holds(held) for c in conditions])[cluster["rows"]]
        matched = int(np.logical_and.reduce([c.holds(contrast) for c in conditions]).sum())
        assert found_slice["coverage"] == pytest.approx(members.mean())
        assert found_slice["contrast"] == matched
        assert found_slice["precision"] == pytest.approx(members.sum() / (members.sum() + matched))
    assert any(c["slice"]["conditions"] for c in found)


def test_a_nearby_success_is_the_solved_mutant_most_like_the_failure_it_was_made_from(
    strong_most,
):
    most, embedder = strong_most, make_embedder("char")
    archive = pd.read_parquet(most / "archive.parquet")
    evaluated = _evaluated(most)
    right = evaluated[evaluated["failed"] == 0]
    found = json.loads((most / "clusters.json").read_text())["clusters"]
    text_of = dict(zip(archive["input"], archive["text"], strict=True))
    for cluster in found:
        members = set(archive["input"].iloc[cluster["rows"]])
        solved = right[right["parent"].isin(members)]
        near = cluster["nearby"]
        if solved.empty:
            assert near is None
            continue
        parents = [text_of[p] for p in solved["parent"]]
        similarity = (embedder.embed(solved["text"]) * embedder.embed(parents)).sum(axis=1)
        assert near["input"] in set(solved["input"]) and near["mutants"] == len(solved)
        row = solved[solved["input"] == near["input"]].iloc[0]
        assert near["operator"] == row["operator"] and near["parent"] == text_of[row["parent"]]
        assert near["similarity"] == pytest.approx(similarity.max(), abs=1e-3)
    assert any(c["nearby"] is not None for c in found)
    text = report_run(most)[0].read_text()
    near = next(c["nearby"] for c in found if c["nearby"] is not None)
    assert f"Nearby success: `{near['text']}`" in text and "(covers " in text


AGAINST = {**SMALL, "target": "disagree", "base_split": "train"}


@pytest.fixture(scope="module")
def against(strong_sweep, sweep, tmp_path_factory):
    """Where the strong run is right and the one-epoch run is not."""
    config = SearchConfig(
        model_settings(f"run:{strong_sweep}"), against=ModelSpec.read(f"run:{sweep}"), **AGAINST
    )
    return run_search(config, tmp_path_factory.mktemp("against") / "s")


def test_against_archives_inputs_run_a_gets_right_more_than_run_b(against, strong_sweep, sweep):
    archive = pd.read_parquet(against / "archive.parquet")
    assert len(archive) > 0
    inputs = list(archive["input"])
    right_a = 1 - _failed(load_model(f"run:{strong_sweep}"), inputs).mean(axis=0)
    right_b = 1 - _failed(load_model(f"run:{sweep}"), inputs).mean(axis=0)
    assert (right_a - right_b >= 0.5).all()
    np.testing.assert_allclose(archive["fitness"], right_a - right_b)
    state = json.loads((against / "search.json").read_text())
    labels = ["A:seed=1", "A:seed=2", "B:seed=1", "B:seed=2", "B:seed=3"]
    assert state["members"] == labels and state["runs"]["B"]["run"] == str(sweep)
    assert all(len(answers) == 5 for answers in archive["answers"])


def test_against_reports_the_seeds_failing_per_run(against):
    found = json.loads((against / "clusters.json").read_text())["clusters"]
    archive = pd.read_parquet(against / "archive.parquet")
    failed = np.array([list(o) for o in archive["outcomes"]]) != Outcome.CORRECT.value
    for cluster in found:
        rows = failed[cluster["rows"]]
        assert cluster["by_run"]["A"]["seeds_failing"] == pytest.approx(rows[:, :2].mean())
        assert cluster["by_run"]["B"]["all_seeds_fail"] == rows[:, 2:].all(axis=1).sum()
    assert {"failure A", "failure B"} <= set(pd.read_parquet(against / "slices.parquet"))
    text = report_run(against)[0].read_text()
    assert "Where two runs disagree" in text and "Run B: `" in text
    assert f"A {found[0]['by_run']['A']['seeds_failing']:.0%}, B " in text
    assert "by_run.B.seeds_failing" in read_tables(against)["clusters"]


def test_against_marks_what_each_runs_seeds_trained_on(strong_sweep, sweep, tmp_path):
    half = tmp_path / "half"  # run B: the one-epoch sweep, had it trained on half its data
    shutil.copytree(sweep, half)
    lines = (half / "data" / "train.jsonl").read_text().splitlines(keepends=True)
    (half / "data" / "train.jsonl").write_text("".join(lines[::2]))
    rerecord(half, half / "data" / "train.jsonl")
    config = SearchConfig(
        model_settings(f"run:{strong_sweep}"), against=ModelSpec.read(f"run:{half}"), **AGAINST
    )
    run = run_search(config, tmp_path / "search")
    archive = pd.read_parquet(run / "archive.parquet")
    archived = _lines(archive["input"])
    stats = json.loads((run / "search.json").read_text())["stats"]
    found = json.loads((run / "clusters.json").read_text())["clusters"]
    for column, trained_by in (("trained_on", strong_sweep), ("trained_on_b", half)):
        trained = _trained(trained_by)
        assert list(archive[column]) == [text in trained for text in archived]
        assert sum(s[f"archived_{column}"] for s in stats) == archive[column].sum()
        assert [c[column] for c in found] == [archive[column].iloc[c["rows"]].sum() for c in found]
    assert sum(s["trained_on_b"] for s in stats) < sum(s["trained_on"] for s in stats)
    text = report_run(run)[0].read_text()
    assert "| archived inputs run B's seeds trained on |" in text
    assert "| A trained on | B trained on |" in text


def test_against_with_one_seed_of_each_run(strong_sweep, sweep, tmp_path):
    config = SearchConfig(
        model_settings(f"run:{strong_sweep}"),
        against=ModelSpec.read(f"run:{sweep}"),
        **{**AGAINST, "target": "disagree:2,3"},
    )
    archive = pd.read_parquet(run_search(config, tmp_path / "run") / "archive.parquet")
    assert len(archive) > 0
    inputs = list(archive["input"])
    assert not _failed(load_model(f"run:{strong_sweep}@2"), inputs).any()
    assert _failed(load_model(f"run:{sweep}@3"), inputs).all()


def test_against_stopped_by_its_budget_resumes_to_the_same_archive(
    strong_sweep, sweep, against, tmp_path
):
    config = SearchConfig(
        model_settings(f"run:{strong_sweep}"),
        against=ModelSpec.read(f"run:{sweep}"),
        **AGAINST,
        minutes=1.0,
    )
    ticks = iter(range(0, 10_000, 50))
    stopped = run_search(config, tmp_path / "run", clock=lambda: next(ticks))
    assert json.loads((stopped / "search.json").read_text())["stop"] == "time budget"
    resumed = run_search(dataclasses.replace(config, minutes=None), tmp_path / "run")
    pd.testing.assert_frame_equal(
        pd.read_parquet(resumed / "archive.parquet"), pd.read_parquet(against / "archive.parquet")
    )


def test_a_config_without_against_keeps_its_identity(sweep, strong_sweep):
    plain = SearchConfig(model_settings(f"run:{sweep}")).identity()
    assert set(plain) == {
        "model", "target", "generations", "population", "mutants", "archive_size", "tau",
        "base_split", "base_size", "seed", "sweep_hash",
    }  # fmt: skip
    two = SearchConfig(
        model_settings(f"run:{strong_sweep}"),
        target="disagree",
        against=ModelSpec.read(f"run:{sweep}"),
    ).identity()
    assert two["against"] == f"run:{sweep}" and two["against_hash"] != two["sweep_hash"]
    assert str(SearchConfig.from_identity(two).against) == f"run:{sweep}"


def test_a_search_of_a_sweep_keeps_the_hash_it_had_before_language_models(monkeypatch):
    """The hashes these configs' identities had before a search took a language model (its
    task, prompt grid and data seed); the sweeps' own hashes stand in for read ones."""
    monkeypatch.setattr(sweep_results, "read_config_hash", lambda path: "0123456789abcdef")
    some = SearchConfig(
        model_settings("run:/runs/parity@1,3"), target="disagree:1,3", generations=5
    )
    assert config_hash(some.identity()) == "be150eb2dcc9eb2c"
    # the run's own task, named, is no part of it either
    named = dataclasses.replace(some, task="binary_operation", task_options=(("p", 23),))
    assert config_hash(named.identity()) == "be150eb2dcc9eb2c"
    two = SearchConfig(
        model_settings("run:/runs/parity"),
        target="disagree",
        against=ModelSpec.read("run:/runs/wide"),
    )
    assert config_hash(two.identity()) == "2b8d5398287105fd"
    # nor is the default selection, added later
    assert config_hash(dataclasses.replace(some, selection="tournament").identity()) == (
        "be150eb2dcc9eb2c"
    )
    assert config_hash(dataclasses.replace(some, selection="kmeans").identity()) != (
        "be150eb2dcc9eb2c"
    )
    # nor greedy decoding (k = 1), named
    assert config_hash(dataclasses.replace(some, k=1).identity()) == "be150eb2dcc9eb2c"
    assert config_hash(dataclasses.replace(some, k=3).identity()) != "be150eb2dcc9eb2c"
    # nor the fitness of the target's score alone, nor its tau, named or left out
    for same in ({"fitness": "any_failure"}, {"tau": 0.5}, {"tau": None}):
        assert config_hash(dataclasses.replace(some, **same).identity()) == "be150eb2dcc9eb2c"
    short = dataclasses.replace(some, fitness="length_penalty")
    assert config_hash(short.identity()) != "be150eb2dcc9eb2c"
    assert short.identity()["tau"] == 0.01


def test_a_targets_file_is_in_the_identity_by_path_and_content(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_results, "read_config_hash", lambda path: "0123456789abcdef")
    targets = tmp_path / "targets.txt"
    targets.write_text("1 + 2 =\n")
    config = SearchConfig(
        model_settings("run:/runs/parity"), fitness="target_problems", targets_file=str(targets)
    )
    identity = config.identity()
    assert identity["targets_file"]["path"] == str(targets.absolute())
    assert SearchConfig.from_identity(identity).targets_file == str(targets.absolute())
    targets.write_text("1 + 3 =\n")
    assert config.identity()["targets_file"]["sha256"] != identity["targets_file"]["sha256"]


def test_against_bad_input_is_one_line_exit_2_and_nothing_written(
    sweep, strong_sweep, tiny_sweep, tmp_path, capsys
):
    from genprobe.cli import main

    other = tiny_sweep(
        seeds=(1,),
        task=load_task("binary_operation", {"p": 29}),
        model=MLPConfig(hidden=32),
        train=TrainConfig(max_epochs=1, lr=0.01, optimizer="adamw", batch_size=16),
    )
    other_task = run_sweep(other, tmp_path / "p29")
    cases = [
        (f"run:{other_task}", "disagree", "same task (binary_operation"),
        (f"run:{sweep}", "most", "disagree or disagree:SEED_A,SEED_B with --against"),
        (f"run:{sweep}", "disagree:3,3", "a seed of the run (1, 2)"),
        (f"run:{sweep}@1,7", "disagree", "--against must be seeds of the sweep"),
        (f"ckpt:{sweep}", "disagree", "--against must be run:RUN_DIR"),
        (None, "disagree", "most, any or disagree:SEED_A,SEED_B"),
    ]
    for spec, target, said in cases:
        out = tmp_path / "out"
        argv = ["search", "--model", f"run:{strong_sweep}", "--out", str(out), "--target", target]
        with pytest.raises(SystemExit) as exit:
            main(argv + ([] if spec is None else ["--against", spec]))
        error = capsys.readouterr().err
        assert exit.value.code == 2 and error.count("\n") == 1 and said in error, error
        assert not out.exists(), spec


def test_unfinished_seeds_are_those_whose_checkpoint_is_not_recorded(sweep, tmp_path):
    unfinished = tmp_path / "unfinished"
    shutil.copytree(sweep, unfinished)
    unfinish(unfinished, "train")
    assert unfinished_seeds(sweep) == []
    missing = unfinished_seeds(unfinished)
    assert len(missing) >= 1 and set(missing) <= {1, 2, 3}
    with pytest.raises(RunDirError, match=f"seed={missing[0]}.pt is missing"):
        load_members(unfinished)


# what a search's result files hold, the seconds each invocation spent aside
SPENT = ("search_seconds", "search_wall_seconds")


def _result_files(run: Path) -> dict:
    state = json.loads((run / "search.json").read_text())
    return {
        "search.json": {key: value for key, value in state.items() if key not in SPENT},
        "clusters.json": json.loads((run / "clusters.json").read_text()),
        **{
            name: pd.read_parquet(run / name).to_json(orient="split")
            for name in ("archive.parquet", "slices.parquet")
        },
    }


RESULT_CASES = [
    *[
        (name, how)
        for name in ("archive.parquet", "search.json", "clusters.json", "slices.parquet")
        for how in ("flipped", "truncated", "missing")
    ],
    *[
        (record, how)
        for record in ("progress/archive", "progress/search", "cluster/archive")
        for how in ("flipped", "missing")
    ],
]


@pytest.mark.parametrize(("damaged", "how"), RESULT_CASES)
def test_a_damaged_result_file_is_named_by_report_and_export_and_the_rerun_makes_it_again(
    sweep, most, cli, tmp_path, damaged, how
):
    """The archive and search.json (rewritten after each generation), clusters.json and
    slices.parquet are the driver's shards: damaged, or with their record (`shards/...`)
    damaged or gone, they are named in one line by what reads them (the report does not read
    the archive), never read; the rerun makes them again."""
    run = tmp_path / "s"
    shutil.copytree(most, run)
    path = run / (damaged if "." in damaged else f"shards/{damaged}.json")
    damage(path, how)
    readers = [("export", str(run), "--out", str(tmp_path / "x"))]
    for command in readers if damaged == "archive.parquet" else [("report", str(run)), *readers]:
        code, _, err = cli(*command)
        assert code == 2 and len(err.splitlines()) == 1, err
        assert err.startswith(f"genprobe: error: {path} "), err
    run_search(SearchConfig(model_settings(f"run:{sweep}"), **SMALL), run)
    assert _result_files(run) == _result_files(most)
    assert cli("report", str(run))[0] == 0
