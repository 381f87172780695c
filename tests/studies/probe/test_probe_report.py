"""The probe report's share of members at or above a threshold accuracy, on a probe run built
here from result rows of known accuracies (a `sympy` model's run of the integration task: its
report needs neither the model nor SymPy)."""

import numpy as np
import pandas as pd
import pytest
from helpers import model_settings
from scipy import stats
from test_prompt_variance import N, frame

from genprobe.runs.rundir import open_run
from genprobe.runs.shards import Shard, ShardStore, json_bytes, parquet_bytes
from genprobe.studies import report_run
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.decode import FEATURE, result_path
from genprobe.studies.probe.study import DECODE, KIND, SUITES
from genprobe.studies.probe.suites import SUITES_FILE

# per suite, each member's accuracy (N = 40 inputs: multiples of 1/40)
ACCURACY = {
    "base": [1.0, 0.95, 0.9, 0.875, 0.5],  # 3 of 5 at 90 % or above, 4 at 85 %
    "family-x": [0.9, 0.2, 0.1, 0.0, 0.0],  # 1 of 5 at 90 %
}


@pytest.fixture
def run(tmp_path):
    return built(tmp_path / "probe", ProbeConfig(model_settings("sympy"), task="integration"))


def built(out, config, lengths=False):
    """A probe run of `config` whose members have the accuracies of ACCURACY; with `lengths`,
    the first half of each suite's inputs 2 tokens long, the second half 4."""
    path = open_run(out, KIND, config)
    listed = [
        {"suite": suite, "kind": "base" if suite == "base" else "family", "name": suite,
         "inputs": N, "invalid": 0}
        for suite in ACCURACY
    ]  # fmt: skip
    ShardStore(path).keep(Shard(SUITES, "all"), {SUITES_FILE: json_bytes(listed)})
    for suite, accuracies in ACCURACY.items():
        rows = frame({f"m{i}": acc for i, acc in enumerate(accuracies)}, suite)
        kind = "base" if suite == "base" else "family"
        rows = rows.assign(kind=kind, name=suite, input="x", gold="x", output="x",
                           first_correct=None, error=None)  # fmt: skip
        if lengths:
            rows[FEATURE + "length"] = np.where(rows["index"] < N // 2, 2, 4)
        ShardStore(path).record(
            Shard(DECODE, suite, {"suite": suite}),
            {result_path(suite): parquet_bytes(rows)},
            {},
        )
    return path


def table(report: str, header: str) -> dict[str, str]:
    """Per suite, the cell of column `header` in the report's first table."""
    lines = report.split("## Accuracy per suite across members")[1].split("\n\n")[2].splitlines()
    columns = [cell.strip() for cell in lines[0].strip("|").split("|")]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    return {row[0]: row[columns.index(header)] for row in cells}


def wilson(k: int, n: int) -> str:
    interval = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    return f"{k} of {n} [{100 * interval.low:.0f}, {100 * interval.high:.0f}]"


def test_the_share_of_members_at_the_threshold_has_its_wilson_interval(run):
    md, _ = report_run(run)
    assert table(md.read_text(), "≥ 90 %") == {"base": wilson(3, 5), "family-x": wilson(1, 5)}
    md, html = report_run(run, threshold=0.85)
    assert table(md.read_text(), "≥ 85 %") == {"base": wilson(4, 5), "family-x": wilson(1, 5)}
    assert "≥ 85 %" in html.read_text()


def test_accuracy_per_length_over_every_suite(tmp_path, run):
    # members get their first inputs right: per length, the right ones of both suites of 40
    length_run = built(
        tmp_path / "lengths", ProbeConfig(model_settings("sympy"), task="integration"), True
    )
    md, _ = report_run(length_run)
    section = md.read_text().split("## Accuracy per length")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    assert _cells(lines[0]) == ["length", "inputs", "median", "min", "max"]
    rows = {cells[0]: cells[1:] for cells in map(_cells, lines[2:])}
    # length 2: 100, 70, 60, 50, 50 (%); length 4: 90, 45, 40, 37.5, 0; 20 inputs per suite
    assert rows == {"2": ["40", "60.0", "50.0", "100.0"], "4": ["40", "40.0", "0.0", "90.0"]}
    assert (length_run / "figures" / "per_length.png").exists()
    assert "Accuracy per length" not in report_run(run)[0].read_text()  # no lengths


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_threshold_is_a_setting_of_the_report_command(cli, run):
    code, _, err = cli("report", str(run), "--threshold", "0.2")
    assert code == 0, err
    shares = table((run / "report.md").read_text(), "≥ 20 %")
    assert shares == {"base": wilson(5, 5), "family-x": wilson(2, 5)}
    code, _, err = cli("report", str(run), "--threshold", "1.5")
    assert code == 2 and err.strip() == (
        "genprobe: error: --threshold must be in [0, 1]. Got 1.5 instead."
    ), err
    assert table((run / "report.md").read_text(), "≥ 20 %") == shares  # the report kept


def test_the_threshold_is_no_part_of_the_run(cli, tmp_path):
    """`probe --threshold` changes the report only: a rerun with another resumes the run."""
    out = tmp_path / "probe"
    args = ["probe", "--model", "sympy", "--task", "integration", "--size", "2",
            "--no-task-suites", "--families", "", "--out", str(out)]  # fmt: skip
    code, _, err = cli(*args, "--threshold", "1.5")
    assert code == 2 and "--threshold" in err and not out.exists(), err
    code, said, err = cli(*args, "--threshold", "0.5")
    assert code == 0 and "decoding 1 suites" in said + err, err
    stored = (out / "config.json").read_text()
    decoded = (out / "results" / "base.parquet").stat().st_mtime_ns
    assert "≥ 50 %" in (out / "report.md").read_text()
    code, said, err = cli(*args, "--threshold", "0.9")
    assert code == 0 and "decoding" not in said + err, err
    assert (out / "config.json").read_text() == stored
    assert (out / "results" / "base.parquet").stat().st_mtime_ns == decoded
    assert "≥ 90 %" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("samples", "said"),
    [(0, "Decoding: greedy;"), (2, "Decoding: sampling at temperature 1 (each member's seed);")],
)
def test_the_report_says_how_the_members_decoded(tmp_path, samples, said):
    config = ProbeConfig(model_settings("sympy", samples=samples), task="integration")
    assert said in report_run(built(tmp_path / "probe", config))[0].read_text()


def test_every_pair_of_suites_is_correlated_across_members(run):
    md, _ = report_run(run)
    section = md.read_text().split("## Correlation between suites across members")[1]
    section = section.split("\n## ")[0]
    r = np.corrcoef(ACCURACY["base"], ACCURACY["family-x"])[0, 1]  # 0.55
    assert "correlations.png" in section and (run / "figures" / "correlations.png").is_file()
    assert f"| base | +1.00 | {r:+.2f} |" in section, section


def test_robustness_counts_only_the_perturbations_of_what_each_member_solves():
    from genprobe.studies.probe.summary import robustness_of_solved

    def rows(suite, kind, first):
        return pd.DataFrame(
            {"suite": suite, "kind": kind, "member": np.repeat(["m0", "m1"], 4),
             "origin": np.tile(np.arange(4), 2), "first_correct": pd.array(first, dtype="Int64")}
        )  # fmt: skip

    results = pd.concat([
        rows("base", "base", [1, 1, None, 1, 1, None, None, None]),
        rows("family-f", "family", [None, 3, 1, 1, 2, 1, 1, 1]),
        rows("relation-r", "relation", [None] * 8),  # partners are not perturbations of it
    ])  # fmt: skip
    table = robustness_of_solved(results, 5).set_index("member")
    assert list(table["suite"]) == ["family-f"] * 2
    assert list(table["solved"]) == [3, 1]
    assert np.allclose(table["fail_1"], [2 / 3, 1.0]) and np.allclose(table["fail_k"], [1 / 3, 0])


def test_robustness_on_new_inputs_leaves_out_what_the_model_was_trained_on():
    from genprobe.studies.probe.report import _solved_table
    from genprobe.studies.probe.summary import robustness_of_solved

    results = pd.DataFrame(
        {"suite": np.repeat(["base", "family-f"], 8), "kind": np.repeat(["base", "family"], 8),
         "member": np.tile(np.repeat(["m0", "m1"], 4), 2), "origin": np.tile(np.arange(4), 4),
         "first_correct": pd.array([1, 1, None, 1, 1, None, None, None,
                                    None, 3, 1, 1, 2, 1, 1, 1], dtype="Int64"),
         "seen": np.tile([True, False, False, True], 4)}
    )  # fmt: skip
    table = robustness_of_solved(results, 2).set_index("member")
    # m0 solved origins 0, 1 and 3, of which 1 is new (failed at 2); m1 solved only 0, seen
    assert list(table["new"]) == [1, 0]
    assert table.loc["m0", "fail_k_new"] == 1.0 and np.isnan(table.loc["m1", "fail_k_new"])
    assert np.allclose(table["fail_k"], [2 / 3, 0])
    shown = _solved_table(table.reset_index(), "solved originals", 2).iloc[0]
    assert shown["new"] == "0 (0–1)" and shown["Fail@2 new"] == "100.0"


def test_many_lengths_are_binned_and_a_bins_accuracy_is_over_its_inputs(tmp_path):
    from genprobe.studies.probe.summary import accuracy_by_length

    lengths = np.arange(1, 101)
    right = lengths % 3 == 0
    results = pd.DataFrame(
        {"suite": "base", "kind": "base", "member": "m0", FEATURE + "length": lengths,
         "outcome": np.where(right, "correct", "incorrect")}
    )  # fmt: skip
    binned = accuracy_by_length(results, 10)
    assert list(binned.columns) == list(range(1, 101, 10))
    assert np.allclose(binned.loc["m0"], right.reshape(10, 10).mean(axis=1))
    assert list(accuracy_by_length(results).columns) == list(lengths)
