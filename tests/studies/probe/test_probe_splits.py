"""The task's splits as probe suites: the integration task's brittleness suites are decoded like
any task's, judged as `integration brittleness` judges them, and `--splits` adds a split the
task does not decode by default."""

from dataclasses import replace

import numpy as np
import pytest
from helpers import model_settings

from genprobe.errors import ConfigError
from genprobe.runs.provenance import file_digest
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.report import write_report
from genprobe.studies.probe.results import read_probe, read_results, read_suites
from genprobe.studies.probe.run import run_probe
from genprobe.studies.probe.suites import build_suites, derived_suites
from genprobe.studies.probe.summary import fail_by_set
from genprobe.tasks.integration.suites import SuiteRequest, build_suite
from genprobe.tasks.integration.suites.splits import suite_table
from genprobe.tasks.integration.suites.table import GROUP_COLUMNS
from genprobe.tasks.registry import load_task, task_probes
from genprobe.tasks.tokens import input_lines, output_lines

ONLY_SPLITS = {"families": (), "relations": (), "task_suites": False}


def test_the_integration_task_suites_are_the_brittleness_suites():
    task = load_task("integration")
    config = ProbeConfig(
        model_settings("sympy"), task="integration", size=4, data_seed=43, **ONLY_SPLITS
    )
    suites = build_suites(config, task)
    assert [suite.key for suite in suites] == ["base"]  # base alone: no pool drawn for it
    suites = {s.key: s for s in build_suites(ProbeConfig(**{**vars(config), "task_suites": True}),
                                                          task)}  # fmt: skip
    assert list(suites) == [
        "base", "task-test", "task-robustness-simple", "task-integer-extrapolation",
    ]  # fmt: skip
    drawn = task.generate("robustness-simple", 4, 43)
    suite = suites["task-robustness-simple"]
    assert input_lines(task.source_vocab, suite.src) == input_lines(task.source_vocab, drawn.src)
    assert output_lines(task.target_vocab, suite.reference) == output_lines(
        task.target_vocab, drawn.tgt
    )
    # and each problem's set, template and coefficient range, what that study's tables group by
    table = suite_table("robustness-simple", 4, 43, task.method, task.max_ops)
    assert list(suite.columns) == list(GROUP_COLUMNS)
    for name, values in suite.columns.items():
        assert list(values) == ["" if value is None else value for value in table[name]]
    assert suites["base"].columns == {} and suites["task-test"].columns == {}


def test_a_split_asked_for_keeps_the_brittleness_studys_sets(tmp_path):
    # the base inputs perturbed (none here, but decoded) are integer-extrapolation's: SymPy
    # integrates them at once, where the validation split's run into its 5 s deadline
    config = ProbeConfig(
        model_settings("sympy"), task="integration", size=6, data_seed=43,
        splits=("robustness-simple",), base_split="integer-extrapolation", **ONLY_SPLITS,
    )  # fmt: skip
    run = run_probe(config, tmp_path / "probe")
    suites = read_suites(run).set_index("suite")
    assert suites.loc["task-robustness-simple", "inputs"] == 6
    assert read_probe(run).splits == ("robustness-simple",)
    rows = read_results(run).query("suite == 'task-robustness-simple'").sort_values("index")
    task = load_task("integration")
    assert "correct" in set(rows["outcome"])  # SymPy integrates simple primitives
    sets = suite_table("robustness-simple", 6, 43, task.method, task.max_ops)["set"]
    assert list(rows["set"]) == list(sets)  # the split's sets, on its rows only
    base = read_results(run).query("suite == 'base'")["set"]  # the base split's own sets
    assert list(base) == list(suite_table("integer-extrapolation", 6, 43, "bwd", 15)["set"])
    # the brittleness study's tables of Fail@k per set and template, from the probe's rows
    table = fail_by_set(read_results(run), 1)
    failed = rows.assign(failed=100.0 * (rows["first_correct"] != 1).fillna(True))
    expected = failed.groupby(["set", "template"])["failed"].agg(["size", "mean"])
    assert list(table["suite"].unique()) == ["base", "task-robustness-simple"]
    table = table[table["suite"] == "task-robustness-simple"]
    assert list(zip(table["set"], table["template"], strict=True)) == list(expected.index)
    assert list(table["n"]) == list(expected["size"])
    assert list(table["Fail@1"]) == list(expected["mean"])
    write_report(run)
    assert "## Fail@k per set" in (run / "report.md").read_text()


def test_a_split_the_task_lacks_is_one_line_and_writes_nothing(cli, tmp_path):
    out = tmp_path / "probe"
    code, _, err = cli("probe", "--model", "sympy", "--task", "integration",
                       "--splits", "operator-extrapolaton", "--out", str(out))  # fmt: skip
    assert code == 2 and "operator-extrapolation" in err, err
    assert len([line for line in err.splitlines() if line.strip()]) == 1
    assert not out.exists()


def test_a_run_made_before_the_option_keeps_its_identity():
    config = ProbeConfig(model_settings("sympy"), task="integration")
    assert "splits" not in config.identity()
    asked = ProbeConfig(
        model_settings("sympy"), task="integration", splits=("operator-extrapolation",)
    )
    assert asked.identity()["splits"] == ["operator-extrapolation"]
    assert ProbeConfig.from_identity(asked.identity()) == asked


def test_a_split_and_a_derived_suite_take_the_size_given_them():
    task = load_task("integration")
    config = ProbeConfig(
        model_settings("sympy"), task="integration", size=3, data_seed=43, seed=43,
        splits=("robustness-simple",), derived=("compositionality",), **ONLY_SPLITS,
        suite_sizes=(("derived-compositionality", 2), ("task-robustness-simple", 5)),
    )  # fmt: skip
    base, split = build_suites(config.validated(), task)
    assert len(base.src) == 3  # the base (what families perturb) keeps --size
    drawn = task.generate("robustness-simple", 5, 43)
    assert input_lines(task.source_vocab, split.src) == input_lines(task.source_vocab, drawn.src)
    solved = np.ones(3, bool)
    [sums] = derived_suites(config, task, [(base, solved)])
    [two] = derived_suites(replace(config, size=2, suite_sizes=()), task, [(base, solved)])
    assert len(sums.src) and np.array_equal(sums.src, two.src)
    assert config.identity()["suite_sizes"] == {
        "derived-compositionality": 2, "task-robustness-simple": 5,
    }  # fmt: skip
    assert ProbeConfig.from_identity(config.identity()) == config
    assert "suite_sizes" not in replace(config, suite_sizes=()).identity()  # older runs' hash


@pytest.mark.parametrize(
    ("given", "named"),
    [("task-robustnes-simple=4", "task-integer-extrapolation"), ("base=4", "task-test"),
     ("task-test=x", "whole number"), ("task-test=0", "at least 1")],
)  # fmt: skip
def test_a_suite_size_of_no_such_suite_or_no_number_is_one_line(cli, tmp_path, given, named):
    out = tmp_path / "probe"
    code, _, err = cli("probe", "--model", "sympy", "--task", "integration",
                       "--suite-size", given, "--out", str(out))  # fmt: skip
    assert code == 2 and named in err and "--suite-size" in err, err
    assert len([line for line in err.splitlines() if line.strip()]) == 1
    assert not out.exists()


def test_a_data_file_gives_the_study_s_in_distribution_and_validation_primitives(validation):

    task = load_task("integration", {"data": str(validation)})
    assert task.options()["data_sha256"] == file_digest(validation)
    assert "in-distribution" in task.suites()
    for split in ("in-distribution", "validation-primitives"):
        request = SuiteRequest(validation=validation, seed=43)
        theirs = build_suite(split, request).frame  # the study's suite: every problem, in order
        size = task.split_spec(split).size
        assert size == len(theirs)
        drawn = task.generate(split, size, 43)
        ours = input_lines(task.source_vocab, drawn.src)
        assert sorted(ours) == sorted(theirs["problem"])  # the same problems, another order
        first = task.generate(split, 2, 43)  # a split's first n, for any larger n
        assert input_lines(task.source_vocab, first.src) == ours[:2]
        sets = task_probes(task).split_columns(split, 2, 43)["set"]
        assert set(sets) == set(theirs["set"])
    with pytest.raises(ConfigError, match="data"):
        load_task("integration", {"data": str(validation), "data_sha256": "0" * 16})
    with pytest.raises(ConfigError, match="data=FILE"):
        load_task("integration", {"data_split": "valid"})
    with pytest.raises(ConfigError, match="existing file"):
        load_task("integration", {"data": str(validation) + ".gone"})
    assert "data" not in load_task("integration").options()  # runs before it keep their hash


def test_a_probe_of_a_data_file_records_its_digest_and_refuses_another_file(
    cli, validation, tmp_path, monkeypatch
):
    data = tmp_path / "test.txt"
    data.write_bytes(validation.read_bytes())
    out = tmp_path / "probe"
    monkeypatch.chdir(tmp_path)  # the file given by a relative path, recorded absolute
    args = ("probe", "--model", "sympy", "--task", "integration", "--task-option",
            "data=test.txt", "--base-split", "validation-primitives", "--families", "",
            "--relations", "", "--no-task-suites", "--splits", "in-distribution", "--size", "3",
            "--out", str(out))  # fmt: skip
    code, _, err = cli(*args)
    assert code == 0, err
    recorded = read_probe(out)
    assert dict(recorded.task_options)["data_sha256"] == file_digest(data)
    assert dict(recorded.task_options)["data"] == str(data.absolute())
    suites = read_suites(out).set_index("suite")
    assert suites.loc["base", "inputs"] == 3 and suites.loc["task-in-distribution", "inputs"] == 3
    data.write_text(data.read_text() + "1|sub Y' exp x\texp x\n")  # another file at the path
    code, _, err = cli(*args)
    assert code == 2 and len([line for line in err.splitlines() if line.strip()]) == 1, err
