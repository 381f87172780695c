"""The probe study on a finished sweep: every member decodes every suite as that member alone
would, the verdicts and statistics follow from the outputs, a rerun resumes, and bad input is
one line with nothing written."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import model_settings

from genprobe.analysis.render import clip
from genprobe.decoding.config import DecodingConfig
from genprobe.errors import ConfigError, GenprobeWarning
from genprobe.studies import report_run
from genprobe.studies.probe import run as probe_run
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.decode import decoded
from genprobe.studies.probe.report import WIDTH
from genprobe.studies.probe.results import read_probe, read_results, read_suites
from genprobe.studies.probe.run import run_probe
from genprobe.studies.probe.suites import build_suites as build
from genprobe.studies.probe.suites import saved_suites
from genprobe.studies.probe.summary import accuracy, consistency, failure_sharing
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.tasks.integration import from_prefix
from genprobe.tasks.integration.printing import answer_text, problem_text
from genprobe.tasks.registry import load_task
from genprobe.tasks.tokens import encode_outputs, input_lines, output_lines
from genprobe.under_test.adapters.integration_tokens import as_sequence_model
from genprobe.under_test.registry import ModelSpec, load_model


@pytest.fixture(scope="module")
def sweep(tiny_sweep, tmp_path_factory):
    """Three seeds of addition, trained for seconds (they get some sums right)."""
    task = load_task("addition", {"format": "reversed", "train_digits": 2})
    config = tiny_sweep(seeds=(1, 2, 3), task=task)
    return run_sweep(config, tmp_path_factory.mktemp("run") / "sweep")


@pytest.fixture(scope="module")
def probed(sweep, tmp_path_factory):
    out = tmp_path_factory.mktemp("probe") / "run"
    return run_probe(ProbeConfig(model_settings(f"run:{sweep}"), size=24, k=3), out)


@pytest.mark.slow
def test_a_finished_probe_reruns_without_loading_its_model(probed, sweep, monkeypatch):
    """The model's task is read from its spec (a sweep's config), not from the loaded model:
    a rerun of a finished probe loads nothing."""

    def refused(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(ModelSpec, "load", refused)
    config = ProbeConfig(model_settings(f"run:{sweep}"), size=24, k=3)
    assert run_probe(config, probed) == probed


@pytest.mark.slow
def test_every_row_is_the_verdict_of_what_its_member_answered(probed, sweep):
    results = read_results(probed)
    task = load_model(f"run:{sweep}").task
    assert set(results["member"]) == {"seed=1", "seed=2", "seed=3"}
    assert {"base", "task-length_3"} <= set(results["suite"])
    # a sweep's seeds are asked no prompt, and their outputs are their ids
    assert results["prompt"].isna().all() and results["completion"].isna().all()
    assert "candidate_completions" not in results  # the beam's candidates are the ids too
    vocab = task.target_vocab
    out, length = encode_outputs(vocab, [s.split() for s in results["output"]])
    ids = {t: i for i, t in enumerate(task.source_vocab, 1)}
    rows = [[ids[t] for t in line.split()] for line in results["input"]]
    src = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)
    for i, row in enumerate(rows):
        src[i, : len(row)] = row
    right = task.verify(src, out, length)
    assert list(right) == list(results["outcome"] == "correct")
    ranks = results["first_correct"].dropna()
    assert ranks.between(1, 3).all()
    checked = results.dropna(subset=["first_correct"])
    for rank, outcomes in zip(checked["first_correct"], checked["candidate_outcomes"], strict=True):
        assert list(outcomes).index("correct") == rank - 1
    failed = results["first_correct"].isna()
    search = results["gold_logprob"] > results["output_logprob"]
    expected = np.where(failed, np.where(search, "search", "model"), None)
    assert list(results["error"].fillna("-")) == [e or "-" for e in expected]


@pytest.mark.slow
def test_the_inputs_the_sweep_trained_on_are_marked_and_reported(probed, sweep):
    lines = (Path(sweep) / "data" / "train.jsonl").read_text().splitlines()
    trained = {json.loads(line)["input"] for line in lines}
    results = read_results(probed)
    assert list(results["seen"]) == list(results["input"].isin(trained))
    assert results["seen"].any() and not results["seen"].all()
    one = results[results["member"] == "seed=1"]
    counted = read_suites(probed).set_index("suite")["seen"]
    assert counted.to_dict() == one.groupby("suite")["seen"].sum().to_dict()
    assert "| trained on | new |" in report_run(probed)[0].read_text()


def test_a_sweeps_seeds_all_or_some_say_they_trained_on_its_training_file(sweep):
    task = load_task("addition", {"format": "reversed", "train_digits": 2})
    lines = (Path(sweep) / "data" / "train.jsonl").read_text().splitlines()
    written = [json.loads(line)["input"] for line in lines]
    for spec in (f"run:{sweep}", f"run:{sweep}@2"):
        assert input_lines(task.source_vocab, ModelSpec.read(spec).training_inputs(task)) == written
    assert ModelSpec.read("sympy").training_inputs(task) is None  # a kind that cannot say


@pytest.mark.slow
def test_members_decoded_together_answer_as_each_alone(sweep):
    model = load_model(f"run:{sweep}")
    src = model.task.generate(model.task.validation_split, 16, 7).src
    together = decoded(model, model.task, src, 2)
    alone = pd.concat(
        [decoded(model.subset([k]), model.task, src, 2) for k in range(3)], ignore_index=True
    )
    columns = ["member", "index", "output", "outcome", "first_correct", "error"]
    pd.testing.assert_frame_equal(together[columns], alone[columns])
    np.testing.assert_allclose(together["gold_logprob"], alone["gold_logprob"], rtol=1e-5)


@pytest.mark.slow
def test_the_answer_first_is_each_members_first_candidate_with_no_greedy_decode(sweep):
    model = load_model(f"run:{sweep}")
    src = model.task.generate(model.task.validation_split, 16, 7).src
    greedy = decoded(model, model.task, src, 3)
    asked = []
    candidates = model.candidates
    model.candidates = lambda src, k: asked.append(k) or candidates(src, k)
    first = decoded(model, model.task, src, 3, answer="first")
    assert asked == [3]  # the beam alone
    assert list(first["output"]) == [ranked[0] for ranked in greedy["candidates"]]
    assert list(first["outcome"]) == [ranked[0] for ranked in greedy["candidate_outcomes"]]
    same = ["member", "index", "candidates", "first_correct", "gold_logprob", "error"]
    pd.testing.assert_frame_equal(first[same], greedy[same])
    with pytest.raises(ConfigError, match="--answer"):
        ProbeConfig(model_settings("sympy"), task="integration", answer="beam").validated()


@pytest.mark.slow
def test_sampled_candidates_are_the_models_distinct_samples_judged_in_rank_order(
    strong_sweep, tmp_path
):
    config = ProbeConfig(
        model_settings(f"run:{strong_sweep}"), size=40, k=4, temperature=1.5, seed=2,
        families=(), relations=(), task_suites=False,
    )  # fmt: skip
    results = read_results(run_probe(config, tmp_path / "run"))
    model = load_model(f"run:{strong_sweep}")
    src = model.task.generate(model.task.validation_split, 40, 0).src
    assert list(results["input"]) == input_lines(model.task.source_vocab, src) * 2
    drawn = model.sampled(src, 4, 1.5, 2)
    present = np.isfinite(drawn.score).reshape(2 * 40, 4)
    texts = np.array(
        output_lines(model.task.target_vocab, drawn.out.reshape(2 * 40 * 4, -1)), dtype=object
    ).reshape(2 * 40, 4)
    for row, candidates in enumerate(results["candidates"]):
        assert list(candidates)[: present[row].sum()] == list(texts[row][present[row]])
    checked = results.dropna(subset=["first_correct"])
    assert (checked["first_correct"] > 1).any()  # a right sample not the most probable one
    for rank, outcomes in zip(checked["first_correct"], checked["candidate_outcomes"], strict=True):
        assert list(outcomes).index("correct") == rank - 1
    report = report_run(tmp_path / "run")[0].read_text()
    assert "the distinct outputs among 4 samples at temperature 1.5 (seed 2)" in report


@pytest.mark.slow
def test_a_rerun_redoes_only_what_is_missing(probed, tmp_path):
    copy = shutil.copytree(probed, tmp_path / "copy")
    before = read_results(copy)
    (copy / "results" / "base.parquet").unlink()
    with pytest.warns(GenprobeWarning, match="base.parquet is missing"):
        run_probe(read_probe(copy), copy)
    pd.testing.assert_frame_equal(
        read_results(copy).sort_values(["suite", "member", "index"]).reset_index(drop=True),
        before.sort_values(["suite", "member", "index"]).reset_index(drop=True),
    )


@pytest.mark.slow
def test_a_rerun_decodes_the_suites_it_kept_and_rebuilds_unreadable_ones(
    probed, tmp_path, monkeypatch
):
    copy = shutil.copytree(probed, tmp_path / "copy")
    built = [suite.key for suite in saved_suites(copy, read_probe(copy))]
    (copy / "results" / "base.parquet").unlink()
    calls = []
    monkeypatch.setattr(probe_run, "build_suites", lambda *a: calls.append(a) or build(*a))
    with pytest.warns(GenprobeWarning, match="base.parquet is missing"):
        run_probe(read_probe(copy), copy)
    assert not calls  # taken from suites.npz
    (copy / "suites.npz").write_bytes(b"not an archive")
    run_probe(read_probe(copy), copy)
    assert len(calls) == 1 and [s.key for s in saved_suites(copy, read_probe(copy))] == built
    assert saved_suites(copy, replace(read_probe(copy), size=5)) is None  # another run's


@pytest.mark.slow
def test_the_report_says_how_many_members_fail_each_input(probed):
    results = read_results(probed)
    sharing = failure_sharing(results)
    per_input = (
        results.assign(wrong=results["outcome"] != "correct")
        .groupby(["suite", "index"])["wrong"]
        .sum()
    )
    assert sharing.loc["base", "every"] == (per_input["base"] == 3).sum()
    assert sharing.loc["base", "one"] == (per_input["base"] == 1).sum()
    markdown = report_run(probed)[0].read_text()
    assert "Accuracy per suite across members" in markdown
    scores = accuracy(results)
    assert f"{100 * np.median(scores['base']):.1f}" in markdown


BAD = {
    "undeclared family": (["--families", "no_such"], "--families must be one the task declares"),
    "other task": (["--task", "scan"], "--task must be the model's own task (addition"),
    "integration model": (
        ["--model", "sympy", "--task", "scan"],
        "--task must be integration for the integration model sympy",
    ),
    "temperature 0": (["--k", "3", "--temperature", "0"], "--temperature must be a positive"),
    "one sample": (["--temperature", "1"], "--temperature must be with --k 2 or more"),
    "a model that does not sample": (
        ["--model", "sympy", "--task", "integration", "--k", "3", "--temperature", "1"],
        "--temperature must be left out for a model that does not sample (ckpt:, lc:, "
        "bundled: do)",
    ),
    "an endpoint asked integration, sampled": (
        ["--model", "openai:m@http://127.0.0.1:9/v1", "--task", "integration", "--k", "3",
         "--temperature", "1"],
        "--temperature must be left out for a model that does not sample the integration task "
        "(ckpt:, lc:, bundled: do)",
    ),
    "search budget not above k": (
        ["--k", "3", "--search-budget", "3"], "--search-budget must be more than --k (3)"
    ),
    "search temperatures alone": (
        ["--search-temperatures", "1"], "--search-temperatures must be with --search-budget"
    ),
    "search suites alone": (
        ["--search-suites", "base"], "--search-suites must be with --search-budget"
    ),
    "search temperature 0": (
        ["--search-budget", "4", "--search-temperatures", "1,0"],
        "--search-temperatures must be a positive",
    ),
    "search temperature not a number": (
        ["--search-budget", "4", "--search-temperatures", "hot"],
        "--search-temperatures must be a number",
    ),
    "unknown search suite": (
        ["--search-budget", "4", "--search-suites", "nope"],
        "--search-suites must be suites of this run (base",
    ),
    "a model that does not sample, searched": (
        ["--model", "sympy", "--task", "integration", "--search-budget", "4",
         "--search-temperatures", "1"],
        "--search-temperatures must be left out for a model that does not sample",
    ),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_one_line_and_writes_nothing(cli, sweep, tmp_path, case):
    extra, message = BAD[case]
    args = ["--model", f"run:{sweep}", *extra] if "--model" not in extra else extra
    code, _, err = cli("probe", *args, "--out", str(tmp_path / "out"))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_directory_that_is_not_a_finished_sweep_is_refused(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = cli(
        "probe", "--model", f"run:{tmp_path / 'empty'}", "--out", str(tmp_path / "o")
    )
    assert code == 2 and "config.json" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_consistency_compares_each_members_answers_to_a_pair(probed):
    results = read_results(probed)
    table = consistency(results, read_probe(probed).load_task())
    assert set(table["suite"]) == {"relation-commutativity"}
    partners = results[results["suite"] == "relation-commutativity"]
    originals = results[results["kind"].isin(["base", "origin"])]
    pairs = partners.merge(originals, on=["member", "origin"], suffixes=("", "_original"))
    same = (pairs["output"] == pairs["output_original"]).groupby(pairs["member"]).mean()
    assert dict(table.set_index("member")["consistent"]) == pytest.approx(dict(same))
    assert (table["pairs"] == len(partners) / 3).all()


def wrong(problem: str, k: int) -> list[str]:
    """py: model of the integration task: x, whatever the problem."""
    del problem, k
    return ["x"]


def probe_wrong(size: int, *options: str) -> list[str]:
    """The options of a `probe` of `wrong` on `size` inputs of the integration task, without
    the task's own splits."""
    return ["--model", "py:test_probe:wrong", "--task", "integration", "--size", str(size),
            "--no-task-suites", *options]  # fmt: skip


@pytest.mark.slow
def test_an_integration_model_is_probed_on_the_integration_task(cli, tmp_path):
    out = tmp_path / "run"
    code, _, err = cli("probe", *probe_wrong(4, "--families", "coefficient", "--out", str(out)))
    assert code == 0, err
    results = read_results(out)
    assert set(results["suite"]) == {"base", "family-coefficient"}
    assert set(results["member"]) == {"py:test_probe:wrong"}
    assert (results["output"] == "x").all() and (results["outcome"] == "incorrect").all()
    report = (out / "report.md").read_text()
    assert "Accuracy per suite across members" in report
    assert "seen" not in results and "trained on" not in report  # the model does not say
    # every member fails every input: the report shows them as SymPy prints them, with the
    # antiderivative the suite knows as the right output
    first = results.iloc[0]
    integrand, antiderivative = (
        clip(problem_text(from_prefix(first[column].split())), WIDTH)
        for column in ("input", "reference")
    )
    assert f"| base | {integrand} | {antiderivative} (" in report
    assert "| x (1 token; 1 of 1) |" in report


@pytest.mark.slow
def test_a_scoring_integration_model_scores_the_known_antiderivatives(cli, tmp_path, checkpoint):
    out = tmp_path / "run"
    args = ["--model", f"ckpt:{checkpoint}", "--task", "integration", "--size", "3"]
    args += ["--families", "coefficient,add_exp", "--no-task-suites", "--out", str(out)]
    code, _, err = cli("probe", *args)
    assert code == 0, err
    results = read_results(out)
    assert results["reference"].notna().all()
    model = as_sequence_model(f"ckpt:{checkpoint}", load_task("integration"))
    generated = model.task.generate("validation", 3, 0)
    base = results[results["suite"] == "base"]
    assert list(base["reference"]) == output_lines(model.task.target_vocab, generated.tgt)
    scores = model.score(generated.src, generated.tgt, (generated.tgt >= 0).sum(axis=1))[0]
    np.testing.assert_allclose(base["gold_logprob"], scores, rtol=1e-5)
    # an answer that cannot be read has no score to weigh against the reference
    assert results["error"][results["outcome"] == "unparseable"].isna().all()


@pytest.mark.slow
def test_a_seq2seq_integration_model_samples_its_candidates(cli, tmp_path, checkpoint):
    out = tmp_path / "run"
    args = ["--model", f"ckpt:{checkpoint}", "--task", "integration", "--size", "3", "--k", "3"]
    args += ["--temperature", "0.8", "--seed", "5", "--families", "coefficient"]
    code, _, err = cli("probe", *args, "--no-task-suites", "--out", str(out))
    assert code == 0, err
    base = read_results(out).query("suite == 'base'")
    task = load_task("integration")
    problems = task.problems(task.generate("validation", 3, 0).src)
    sampling = DecodingConfig(method="sample", temperature=0.8, samples=3, seed=5)
    drawn = load_model(f"ckpt:{checkpoint}", decoding=sampling).candidates(problems, 3)
    for completions, candidates in zip(base["candidate_completions"], drawn, strict=True):
        texts = [answer_text(c.answer) for c in candidates]
        assert list(completions)[: len(texts)] == texts and len(texts) >= 1


@pytest.mark.slow
def test_a_suite_decoded_in_shards_gives_the_rows_of_one_shard(probed, sweep, tmp_path):
    """`--shard-size 10`: each suite of 24 inputs in shards of 10, 10 and 4, every row the same
    (its index its place in the suite); a shard lost is decoded again alone, to the same rows."""
    config = ProbeConfig(model_settings(f"run:{sweep}"), size=24, k=3, shard_size=10)
    run = run_probe(config, tmp_path / "sharded")
    chunks = sorted(p.name for p in (run / "results" / "base").glob("*.parquet"))
    assert chunks == ["00000.parquet", "00001.parquet", "00002.parquet"]
    whole = read_results(probed)
    pd.testing.assert_frame_equal(read_results(run), whole)
    (run / "results" / "base" / "00001.parquet").unlink()
    (run / "shards" / "decode" / "base.00001.json").unlink()
    before = {p: p.stat().st_mtime_ns for p in (run / "results" / "base").glob("*.parquet")}
    run_probe(config, run)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())  # the others kept
    pd.testing.assert_frame_equal(read_results(run), whole)
    with pytest.raises(ConfigError, match="--shard-size"):
        run_probe(replace(config, shard_size=0), tmp_path / "bad")
