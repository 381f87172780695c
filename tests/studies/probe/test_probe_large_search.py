"""The probe's large search (`--search-budget`): a beam and samples far wider than Fail@k's,
every distinct answer judged once, and the report's count of the failures it fixes."""

from __future__ import annotations

import io
import shutil
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from helpers import model_settings

from genprobe.analysis.large_search import per_input
from genprobe.errors import ConfigError, GenprobeWarning
from genprobe.runs.shards import Shard
from genprobe.studies.large_search import judged_once, large_search, searched_rows
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.large_search import LargeSearchStage, search_path, search_shards
from genprobe.studies.probe.report import write_report
from genprobe.studies.probe.results import read_large_search, read_probe, read_results
from genprobe.studies.probe.run import run_probe
from genprobe.studies.probe.study import LARGE_SEARCH
from genprobe.studies.probe.suites import build_suites
from genprobe.studies.probe.summary import large_search_fixes
from genprobe.tasks.tokens import output_lines
from genprobe.under_test.registry import load_model
from genprobe.under_test.sequences import Ranked


def _ranked(out: list, score: list) -> Ranked:
    """Ranked of one member: out (N, k, M) ids, score (N, k) (-inf: missing)."""
    out = np.array([out], dtype=np.int64)
    score = np.array([score], dtype=float)
    present = np.isfinite(score)
    return Ranked(out, (out >= 0).sum(axis=3), present, score, np.where(present, score, np.nan))


def test_every_distinct_answer_of_an_input_is_judged_once():
    beam = _ranked([[[1, 2], [3, -1]], [[1, 2], [4, -1]]], [[-1.0, -2.0], [-1.0, -3.0]])
    drawn = _ranked(
        [[[3, -1], [5, -1], [-1, -1]], [[3, -1], [-1, -1], [-1, -1]]],
        [[-2.0, -4.0, -np.inf], [-2.5, -np.inf, -np.inf]],
    )
    asked = []

    def judge_of(joined):
        def judge(member, row, rank):
            answers = map(tuple, joined.out[member, row, rank].tolist())
            asked.extend(zip(row.tolist(), answers, strict=True))
            first = joined.out[member, row, rank, 0]
            return [f"{r}:{a}" for r, a in zip(row, first, strict=True)]

        return judge

    judged = judged_once({"beam": beam, "T=1": drawn}, judge_of)
    # input 0 has answers [1 2], [3], [5]; input 1 has [1 2], [4], [3]: [3] is asked twice,
    # once per input, and each input's [3] of the beam and of the samples judged once
    assert sorted(asked) == sorted(
        [(0, (1, 2)), (0, (3, -1)), (0, (5, -1)), (1, (1, 2)), (1, (4, -1)), (1, (3, -1))]
    )
    assert judged["beam"].tolist() == [[["0:1", "0:3"], ["1:1", "1:4"]]]
    assert judged["T=1"].tolist() == [[["0:3", "0:5", None], ["1:3", None, None]]]
    rows = searched_rows({"beam": beam, "T=1": drawn}, judged, ["a", "b", "c", "d", "e", "f"])
    assert list(rows["input"]) == [0, 0, 0, 0, 1, 1, 1]
    assert list(rows["decoding"]) == ["beam", "beam", "T=1", "T=1", "beam", "beam", "T=1"]
    assert list(rows["rank"]) == [1, 2, 1, 2, 1, 2, 1]
    assert list(rows["answer"]) == ["b c", "d", "d", "f", "b c", "e", "d"]


def test_an_output_with_a_special_token_before_its_end_is_judged_apart_from_one_without():
    # ids [1, 2] ended at rank 1; at rank 2 the same ids then a special token (-1) the beam
    # drew before its end: equal rows of `out`, other outputs (the task sees the -1)
    out = np.array([[[[1, 2, -1], [1, 2, -1]]]], dtype=np.int64)
    score = np.array([[[-1.0, -2.0]]])
    beam = Ranked(out, np.array([[[2, 3]]]), np.ones((1, 1, 2), bool), score, score)
    asked = []

    def judge_of(joined):
        def judge(member, row, rank):
            asked.extend(rank.tolist())
            return ["correct" if joined.length[0, 0, r] == 2 else "unparseable" for r in rank]

        return judge

    judged = judged_once({"beam": beam}, judge_of)
    assert sorted(asked) == [0, 1]
    assert judged["beam"].tolist() == [[["correct", "unparseable"]]]


def test_per_input_is_each_inputs_candidates_counted():
    rng = np.random.default_rng(0)
    rows = pd.DataFrame(
        [
            {"member": m, "index": i, "decoding": d, "rank": r,
             "logprob": np.nan if (m, r) == (1, 2) else -rng.random() * r,
             "outcome": rng.choice(["correct", "incorrect"])}
            for m in range(2) for i in range(3) for d in ("beam", "T=1")
            for r in range(1, 2 + rng.integers(4))
        ]
    )  # fmt: skip
    table = per_input(rows, ["member", "index"])
    for key, group in rows.groupby(["member", "index", "decoding"], sort=False):
        got = table.set_index(["member", "index", "decoding"]).loc[key]
        p = np.exp(group["logprob"].to_numpy())
        correct = (group["outcome"] == "correct").to_numpy()
        assert got["candidates"] == len(group)
        np.testing.assert_equal([got["p_top"], got["p_bottom"]], [p[0], p[-1]])
        assert got["mass"] == pytest.approx(np.nansum(p))
        assert got["n_correct"] == correct.sum()
        first = np.argmax(correct) + 1 if correct.any() else None
        assert (pd.isna(got["first_correct_rank"]) and first is None) or (
            got["first_correct_rank"] == first
        )
    assert list(table["decoding"][:2]) == ["beam", "T=1"]  # in the rows' order


@pytest.mark.parametrize("task", ["scan", "addition"])
def test_the_suites_named_before_they_are_built_are_those_built(task, tmp_path):
    inputs = tmp_path / "mine.jsonl"
    inputs.write_text('{"input": "jump twice"}\n' if task == "scan" else '{"input": "1 2 + 3 4"}\n')
    config = ProbeConfig(model_settings("run:x"), task=task, size=5, inputs=(str(inputs),))
    task = config.load_task()
    built = [suite.key for suite in build_suites(config, task) if suite.kind != "origin"]
    assert config.suite_keys(task) == built and built[-1] == "input-mine"


@pytest.fixture(scope="module")
def searched_run(strong_sweep, tmp_path_factory):
    config = ProbeConfig(
        model_settings(f"run:{strong_sweep}"), size=30, k=2, families=(), relations=(),
        task_suites=False, search_budget=6, search_temperatures=(1.0,), seed=3,
    )  # fmt: skip
    return run_probe(config, tmp_path_factory.mktemp("large") / "run")


@pytest.mark.slow
def test_the_large_search_is_the_models_beam_and_samples_judged(searched_run, strong_sweep):
    rows = read_large_search(searched_run)
    model = load_model(f"run:{strong_sweep}")
    task = model.task
    src = task.generate(task.validation_split, 30, 0).src
    for name, ranked in (
        ("beam", model.candidates(src, 6)),
        ("T=1", model.sampled(src, 6, 1.0, 3)),
    ):
        member, row, rank = np.nonzero(ranked.present)
        expected = pd.DataFrame(
            {
                "member": np.array(model.members)[member], "index": row, "rank": rank + 1,
                "answer": output_lines(task.target_vocab, ranked.out[member, row, rank]),
                "logprob": ranked.logprob[member, row, rank],
                "outcome": task.outcomes(
                    src[row], ranked.out[member, row, rank], ranked.length[member, row, rank],
                    ranked.finished[member, row, rank],
                ),
            }
        )  # fmt: skip
        got = rows[rows["decoding"] == name].sort_values(["member", "index", "rank"])
        pd.testing.assert_frame_equal(
            got[list(expected.columns)].reset_index(drop=True),
            expected.sort_values(["member", "index", "rank"]).reset_index(drop=True),
            check_dtype=False,
        )


@pytest.mark.slow
def test_the_report_counts_the_failures_the_large_search_fixes(searched_run):
    results, rows = read_results(searched_run), read_large_search(searched_run)
    table = large_search_fixes(results, rows, 2).set_index("decoding")
    for decoding in ("beam", "T=1"):
        found = rows[rows["decoding"] == decoding]
        right = found[found["outcome"] == "correct"].groupby(["member", "index"])["rank"].min()
        failed = results[results["first_correct"].isna()].set_index(["member", "index"]).index
        fixed = right.index.isin(failed).sum()
        assert table.loc[decoding, "failures@2"] == len(failed)
        assert table.loc[decoding, "fixed"] == fixed
        assert table.loc[decoding, "inputs"] == len(results)
    assert table.loc["beam", "fixed"] > 0  # a beam of 6 finds what one of 2 missed
    markdown = write_report(searched_run)[0].read_text()
    assert "Is it a search problem? A larger search" in markdown
    assert (
        "with a beam of 6, and the distinct outputs among 6 samples at temperature 1 (seed 3)"
        in markdown
    )
    assert "search_probabilities.png" in markdown


@pytest.mark.slow
def test_a_rerun_searches_only_what_is_missing(searched_run, tmp_path):
    copy = shutil.copytree(searched_run, tmp_path / "copy")
    before = read_large_search(copy)
    shard = sorted((copy / "large-search" / "base").iterdir())[0]
    shard.unlink()
    with pytest.warns(GenprobeWarning, match="is missing"):
        run_probe(read_probe(copy), copy)
    pd.testing.assert_frame_equal(read_large_search(copy), before)


def test_search_where_keeps_the_inputs_of_the_sets_and_templates_named():
    templates = "k1*exp(k2*x)|k1*sin(k2*x)|k1*cos(k2*x)|k1*tan(k2*x)"
    config = ProbeConfig(
        model_settings("sympy"), task="integration", size=4, data_seed=43, families=(),
        relations=(), task_suites=False, splits=("robustness-simple",),
        suite_sizes=(("task-robustness-simple", 300),), search_budget=8,
        search_suites=("task-robustness-simple",),
        search_where=(("set", "simple_coeff1"), ("template", templates)),
    ).validated()  # fmt: skip
    suites = build_suites(config, config.load_task())
    simple = suites[1]
    shards = search_shards(suites, config)
    index = [i for shard in shards for i in shard.spec["index"]]
    columns = simple.columns
    # the study's large search: simple_coeff1's k1*{exp,sin,cos,tan}(k2*x) problems
    expected = np.flatnonzero(
        (columns["set"] == "simple_coeff1") & np.isin(columns["template"], templates.split("|"))
    )
    assert len(expected) and index == expected.tolist()
    assert all(s.spec["src"] == simple.src[s.spec["index"]].tolist() for s in shards)
    every = search_shards(suites, replace(config, search_where=()))  # the layout of runs before
    assert all("index" not in s.spec for s in every) and len(every) > len(shards)
    with pytest.raises(ConfigError, match="--search-budget"):
        replace(config, search_budget=None).validated()


@pytest.mark.slow
def test_a_search_of_some_inputs_names_each_by_its_place_in_its_suite(strong_sweep, tmp_path):
    model = load_model(f"run:{strong_sweep}")
    config = ProbeConfig(model_settings(f"run:{strong_sweep}"), search_budget=4)
    src = model.task.generate(model.task.validation_split, 12, 0).src
    spec = {"suite": "base", "chunk": 0, "start": 3, "index": [3, 7, 11],
            "src": src[[3, 7, 11]].tolist()}  # fmt: skip
    outputs = LargeSearchStage(config).run(model, Shard(LARGE_SEARCH, "base.0000", spec), tmp_path)
    frame = pd.read_parquet(io.BytesIO(outputs[search_path("base", 0)]))
    assert sorted(set(frame["index"])) == [3, 7, 11]
    alone = large_search(model, src[7:8], 4, (), 0)  # the same input searched alone
    assert list(frame[frame["index"] == 7]["answer"]) == list(alone["answer"])
