"""Derived suites in the probe (`--derived`): suites the task builds of the base inputs every
member solved, once they are decoded (the brittleness study's robustness-validation and
compositionality, built by its builders), kept with the run's suites and decoded as they are."""

import json
from dataclasses import replace
from functools import cache

import numpy as np
import pandas as pd
import pytest
from helpers import model_settings
from test_probe import probe_wrong

from genprobe.errors import ConfigError
from genprobe.runs.provenance import config_hash
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.results import read_results, read_suites
from genprobe.studies.probe.run import every_member_solved
from genprobe.studies.probe.suites import build_suites, derived_suites
from genprobe.tasks.integration.prefix import from_prefix
from genprobe.tasks.integration.printing import problem_text
from genprobe.tasks.integration.suites import Primitive, compositionality, robustness_validation
from genprobe.tasks.registry import load_task, task_probes

BARE = {"families": (), "relations": (), "task_suites": False}
SOLVED = 2  # `oracle` solves the first two base inputs of a probe of data seed 0


@cache
def _known() -> dict[str, str]:
    task = load_task("integration")
    drawn = task.generate(task.validation_split, SOLVED, 0)
    answers = [task.answer(row[row >= 0]) for row in drawn.tgt]
    return {
        problem_text(problem): problem_text(answer)
        for problem, answer in zip(task.problems(drawn.src), answers, strict=True)
    }


def oracle(problem: str, k: int) -> list[str]:
    """py: model of the integration task: the antiderivative of the first two base inputs of a
    probe of data seed 0, x for any other problem."""
    del k
    return [_known().get(problem, "x")]


def test_derived_suites_are_the_brittleness_builders_suites_of_the_solved_inputs():
    task = load_task("integration")
    derived = ("robustness-validation", "compositionality")
    config = ProbeConfig(
        model_settings("sympy"), task="integration", derived=derived, size=6, seed=43, **BARE
    )
    [base] = build_suites(config, task)
    solved = np.array([True, False, True, True, False, False])
    validation, sums = derived_suites(config, task, [(base, solved)])
    assert [validation.key, sums.key] == [f"derived-{name}" for name in derived]
    rows = np.flatnonzero(solved)
    primitives = [
        Primitive(problem, task.answer(ref[ref >= 0]), i)
        for i, (problem, ref) in enumerate(
            zip(task.problems(base.src[rows]), base.reference[rows], strict=True)
        )
    ]
    expected = robustness_validation(primitives, n=6, seed=43, exact=False)
    assert len(validation.src) == len(expected) and validation.invalid == 0
    assert list(validation.columns["set"]) == list(expected["set"])
    assert set(validation.origin) == set(rows) and validation.parts is None
    summed = compositionality({"comp_valid": primitives}, n=6, seed=43, exact=False)
    assert len(sums.src) == len(summed) and (sums.origin == -1).all()
    assert set(sums.columns["set"]) == {"comp_valid k=2", "comp_valid k=3", "comp_valid k=4"}
    assert set(sums.parts.ravel()) <= {-1, *rows}
    assert ((sums.parts >= 0).sum(axis=1) == summed["k"].to_numpy()).all()
    for suite in (validation, sums):  # every input with its known antiderivative
        length = (suite.reference >= 0).sum(axis=1)
        assert task.verify(suite.src, suite.reference, length).all()
    none = derived_suites(config, task, [(base, np.zeros(6, bool))])
    assert [len(suite.src) for suite in none] == [0, 0]


def _decoded(rows: dict, outcomes: list) -> pd.DataFrame:
    """Decode-stage result rows (`rows`' columns) of two candidates each, `outcomes` theirs (None:
    not judged), the answer the first candidate."""
    return pd.DataFrame(
        {**rows, "candidates": [["x", "y"]] * len(outcomes), "candidate_outcomes": outcomes,
         "outcome": [ranked[0] for ranked in outcomes]}
    )  # fmt: skip


RIGHT_AT = {1: ["correct", None], 2: ["incorrect", "correct"], None: ["incorrect", "incorrect"]}


def test_an_input_is_solved_when_every_member_has_it_right_at_rank_1():
    first_correct = [1, 1, 2, None, 1, None, 1, 1, None]
    results = _decoded(
        {"member": ["a"] * 4 + ["b"] * 4 + ["a"], "suite": ["base"] * 8 + ["family-x"],
         "index": [0, 1, 2, 3] * 2 + [0]},
        [RIGHT_AT[rank] for rank in first_correct],
    )  # fmt: skip
    assert list(every_member_solved(results, 5)) == [True, False, False, False, False]


def test_a_probe_derives_suites_of_what_it_solved_and_resumes_from_them(cli, tmp_path):
    out = tmp_path / "run"
    args = probe_wrong(4, "--families", "", "--relations", "", "--derived",
                       "robustness-validation,compositionality", "--seed", "43")  # fmt: skip
    args[1] = "py:test_probe_derived:oracle"
    code, _, err = cli("probe", *args, "--out", str(out))
    assert code == 0, err
    results = read_results(out)
    base = results[results["suite"] == "base"]
    assert list(base["outcome"]) == ["correct"] * SOLVED + ["incorrect"] * 2
    moved = results[results["suite"] == "derived-robustness-validation"]
    assert len(moved) and set(moved["origin"]) == set(range(SOLVED))
    summed = results[results["suite"] == "derived-compositionality"]
    assert len(summed) and set(summed["parts"].explode()) <= {-1, *range(SOLVED)}
    assert results["reference"].notna().all()
    # each row carries its derived suite's set (`Suite.columns`); the base's have none
    assert base["set"].isna().all()
    assert set(moved["set"]) <= {"coeff_k*f", "coeff_f/k", "add_exp", "add_ln"}
    assert set(summed["set"]) <= {"comp_valid k=2", "comp_valid k=3", "comp_valid k=4"}
    suites = read_suites(out).set_index("suite")
    assert list(suites["kind"]) == ["base", "derived", "derived"]
    report = (out / "report.md").read_text()
    assert "| derived-robustness-validation | derived |" in report
    code, _, err = cli("probe", *args, "--out", str(out))  # from the suites it kept
    assert code == 0, err
    pd.testing.assert_frame_equal(read_results(out), results)


def test_nothing_solved_derives_empty_suites(cli, tmp_path):
    out = tmp_path / "run"
    args = probe_wrong(2, "--families", "", "--relations", "", "--derived", "compositionality")
    code, _, err = cli("probe", *args, "--out", str(out))
    assert code == 0, err
    assert "derived-compositionality (0)" in err
    assert set(read_results(out)["suite"]) == {"base"}


def test_a_derived_suite_the_task_lacks_is_one_line_naming_those_it_has(cli, tmp_path):
    out = tmp_path / "run"
    code, _, err = cli(
        "probe", "--model", "sympy", "--task", "integration", "--derived", "nope",
        "--out", str(out),
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1, err
    assert "robustness-validation, compositionality" in err
    assert not out.exists()


def test_a_config_without_derived_suites_keeps_its_hash():
    plain = ProbeConfig(model_settings("run:/runs/scan"), k=5)
    assert "derived" not in plain.identity()
    asked = replace(plain, derived=("compositionality",))
    assert config_hash(asked.identity()) != config_hash(plain.identity())
    rebuilt = ProbeConfig.from_identity(json.loads(json.dumps(asked.identity())))
    assert rebuilt == asked


@pytest.mark.parametrize("task", ["scan", "addition"])
def test_tasks_without_derived_suites_declare_none(task):
    assert task_probes(load_task(task)).derived() == {}


def test_compositionality_sums_the_solved_simple_primitives_of_robustness_simple_too():
    task = load_task("integration")
    config = ProbeConfig(
        model_settings("sympy"), task="integration", derived=("compositionality",), size=6,
        seed=43, data_seed=43, splits=("robustness-simple",),
        suite_sizes=(("task-robustness-simple", 40),), **BARE,
    )  # fmt: skip
    base, simple = build_suites(config, task)
    solved = np.arange(40) % 2 == 0
    [sums] = derived_suites(config, task, [(base, np.zeros(6, bool)), (simple, solved)])
    # the brittleness study's families of those solved problems, each its row among them
    families = {"comp_coeff": [], "comp_exp": []}
    family = {"simple_coeff1": "comp_coeff", "simple_expincr": "comp_exp",
              "simple_expdecr": "comp_exp"}  # fmt: skip
    problems = task.problems(simple.src)
    for row, i in enumerate(np.flatnonzero(solved)):
        if (name := family.get(simple.columns["set"][i])) is not None:
            reference = simple.reference[i]
            families[name].append(
                Primitive(problems[i], task.answer(reference[reference >= 0]), row)
            )
    assert families["comp_coeff"] and families["comp_exp"]
    expected = compositionality(families, n=6, seed=43, exact=False)
    assert list(sums.columns["set"]) == list(expected["set"] + " k=" + expected["k"].astype(str))
    assert [problem_text(p) for p in task.problems(sums.src)] == [
        problem_text(from_prefix(p.split())) for p in expected["problem"]
    ]
    assert (sums.origin == -1).all() and (sums.parts == -1).all()  # made of no base input
    length = (sums.reference >= 0).sum(axis=1)  # each with the sum of its parts' F
    assert task.verify(sums.src, sums.reference, length).all()


def test_solved_by_code_counts_a_timeout_and_a_base_input_right_below_rank_1():
    outcomes = [["incorrect", "correct"], ["timeout", None], ["incorrect", "incorrect"],
                ["correct", None]]  # fmt: skip
    rows = _decoded({"member": "a", "suite": "base", "index": [0, 1, 2, 3]}, outcomes)
    assert list(every_member_solved(rows, 4)) == [False, False, False, True]  # paper
    assert list(every_member_solved(rows, 4, solved_by="code")) == [True, True, False, True]
    split = rows.assign(suite="task-robustness-simple")  # a split's: at rank 1 only
    solved = every_member_solved(split, 4, "task-robustness-simple", "code")
    assert list(solved) == [False, True, False, True]
    one = rows.drop(columns=["candidates", "candidate_outcomes"]).assign(  # k = 1: one answer
        outcome=["incorrect", "timeout", "incorrect", "correct"]
    )
    assert list(every_member_solved(one, 4, solved_by="code")) == [False, True, False, True]
    with pytest.raises(ConfigError, match="--solved-by"):
        ProbeConfig(model_settings("sympy"), task="integration", solved_by="any").validated()
