"""Compositions in the probe (`--compositions`): each composite joins pool inputs that are decoded
too, so the report counts Fail@k on the composites whose every part a member solves (the
brittleness study's compositionality, for any task that declares compositions)."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from helpers import model_settings
from test_probe import probe_wrong

from genprobe.runs.provenance import config_hash
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.results import read_results
from genprobe.studies.probe.suites import POOL
from genprobe.studies.probe.suites import build_suites as build
from genprobe.studies.probe.summary import compositions_of_solved
from genprobe.tasks.registry import load_task, task_probes
from genprobe.tasks.row_edits import trim

BARE = {"families": (), "relations": (), "task_suites": False}


def test_composites_join_pool_inputs_that_are_decoded_too():
    task = load_task("scan")
    config = ProbeConfig(
        model_settings("run:unused"), task="scan", compositions=("and", "after"), size=200, **BARE
    )
    suites = {suite.key: suite for suite in build(config, task)}
    assert list(suites) == ["base", "composition-and", "composition-after", "origins"]
    pool = task.generate(task.validation_split, POOL * config.size, config.data_seed)
    decoded = np.concatenate([suites["base"].origin, suites["origins"].origin])
    for name in config.compositions:
        suite = suites[f"composition-{name}"]
        assert len(suite.src) == config.size and suite.parts.shape == (config.size, 2)
        assert len(np.unique(suite.parts, axis=0)) == config.size  # distinct tuples
        assert np.isin(suite.parts, decoded).all()  # every part is decoded: solved or not
        composition = task_probes(task).compositions()[name]
        joined = composition.join([pool.src[suite.parts[:, j]] for j in (0, 1)])
        assert len(joined) == config.size
        assert (trim(joined.src, 0) == suite.src).all()
        assert (suite.origin == -1).all()  # no perturbation of one original


def test_integration_composites_carry_the_sum_of_the_parts_antiderivatives():
    task = load_task("integration")
    config = ProbeConfig(
        model_settings("sympy"), task="integration", compositions=("sum_2",), size=3, **BARE
    )
    suite = build(config, task)[1]
    assert suite.kind == "composition" and suite.reference is not None
    assert (suite.parts < config.size).all()  # every base input is an integrand it takes
    length = (suite.reference >= 0).sum(axis=1)
    assert task.verify(suite.src, suite.reference, length).all()


def test_fail_at_k_counts_the_composites_of_parts_each_member_solved():
    base = pd.DataFrame(
        {"suite": "base", "kind": "base", "member": np.repeat(["m0", "m1"], 3),
         "origin": np.tile(np.arange(3), 2),
         "first_correct": pd.array([1, 1, None, 1, 2, 1], dtype="Int64")}
    )  # fmt: skip
    parts = [[0, 1], [0, 2], [1, 1], [2, 2]]
    composed = pd.DataFrame(
        {"suite": "composition-and", "kind": "composition", "member": np.repeat(["m0", "m1"], 4),
         "origin": -1, "parts": parts * 2,
         "first_correct": pd.array([None, 1, 2, 1, 1, None, 2, 1], dtype="Int64")}
    )  # fmt: skip
    table = compositions_of_solved(pd.concat([base, composed], ignore_index=True), 2)
    table = table.set_index("member")
    # m0 solved inputs 0 and 1: composites (0, 1) and (1, 1); m1 solved 0 and 2: (0, 2), (2, 2)
    assert list(table["solved"]) == [2, 2]
    assert np.allclose(table["fail_1"], [1.0, 0.5]) and np.allclose(table["fail_k"], [0.5, 0.5])
    assert compositions_of_solved(base, 2).empty
    # a derived composite of a split's inputs (no base part: -1 every part) was made of solved
    # inputs only, and counts beside those of base parts
    derived = pd.DataFrame(
        {"suite": "derived-compositionality", "kind": "derived", "member": ["m0", "m0"],
         "origin": -1, "parts": [[-1, -1], [0, 1]],
         "first_correct": pd.array([None, 1], dtype="Int64")}
    )  # fmt: skip
    table = compositions_of_solved(pd.concat([base, derived], ignore_index=True), 2)
    assert list(table["solved"]) == [2] and np.allclose(table["fail_1"], [0.5])


def test_a_probe_with_compositions_decodes_and_reports_them_and_resumes(cli, tmp_path):
    out = tmp_path / "run"
    args = probe_wrong(3, "--families", "", "--relations", "", "--compositions", "sum_2")
    code, _, err = cli("probe", *args, "--out", str(out))
    assert code == 0, err
    results = read_results(out)
    composed = results[results["suite"] == "composition-sum_2"]
    assert len(composed) == 3 and composed["parts"].map(len).eq(2).all()
    assert composed["reference"].notna().all()
    assert "| composition-sum_2 | composition |" in (out / "report.md").read_text()
    code, _, err = cli("probe", *args, "--out", str(out))  # from the suites it kept
    assert code == 0, err
    pd.testing.assert_frame_equal(read_results(out), results)


def test_a_composition_the_task_lacks_is_one_line_naming_those_it_has(cli, tmp_path):
    out = tmp_path / "run"
    code, _, err = cli(
        "probe", "--model", "sympy", "--task", "integration", "--compositions", "product",
        "--out", str(out),
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "sum_2, sum_3, sum_4" in err, err
    assert not out.exists()


def test_a_config_without_compositions_keeps_its_hash():
    plain = ProbeConfig(model_settings("run:/runs/scan"), k=5)
    assert "compositions" not in plain.identity()
    asked = replace(plain, compositions=("and",))
    assert config_hash(asked.identity()) != config_hash(plain.identity())
    rebuilt = ProbeConfig.from_identity(json.loads(json.dumps(asked.identity())))
    assert rebuilt == asked


@pytest.mark.parametrize("task", ["addition", "rewriting", "binary_operation"])
def test_tasks_without_compositions_declare_none(task):
    assert task_probes(load_task(task)).compositions() == {}
