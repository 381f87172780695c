"""The committed runs (`tests/golden/`, made by the code before a change) hold what their reports
and summaries said: written again by today's code from the same result files, report.md,
stats.json and summary.json are what they were, to the byte (report.html embeds its figures,
whose bytes are matplotlib's). And each run that judges outputs reads as the one schema of
judged outputs (`analysis.judged`), which counts what its study stored: the first right rank
of every input, and a sweep's accuracy per seed and suite."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from study_runs import out_of, unpack

from genprobe import read_tables
from genprobe.analysis import rates
from genprobe.analysis.judged import COLUMNS
from genprobe.studies import report_run

pytestmark = pytest.mark.slow

WRITTEN = {
    "sweep": ("report.md", "stats.json"),
    "brittleness": ("report.md", "summary.json"),
    "probe": ("report.md",),
    "sagga": ("report.md", "summary.json"),
    "search": ("report.md",),
}


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    return unpack(tmp_path_factory.mktemp("golden"))


@pytest.mark.parametrize("kind", WRITTEN)
def test_a_report_written_again_from_a_committed_run_says_what_it_said(kind, golden, tmp_path):
    committed = golden / out_of(kind)
    run = shutil.copytree(committed, tmp_path / kind)
    for name in WRITTEN[kind]:
        (run / name).unlink()
    report_run(run)
    for name in WRITTEN[kind]:
        assert (run / name).read_text() == (committed / name).read_text(), name


@pytest.mark.parametrize("kind", ["sweep", "over time"])
def test_a_sweeps_judged_answers_give_the_accuracy_its_metrics_recorded(kind, golden):
    run = golden / out_of(kind)
    judged = read_tables(run)["judged"]
    assert list(judged.columns[: len(COLUMNS)]) == list(COLUMNS)
    recorded = json.loads((run / "metrics.json").read_text())["seeds"]
    accuracy = rates.accuracy(judged, ["seed", "suite"])
    assert len(accuracy) == sum(len(seed["accuracy"]) for seed in recorded.values())
    for (seed, suite), value in accuracy.items():
        assert value == recorded[str(seed)]["accuracy"][suite]


def _firsts(judged: pd.DataFrame, policy: str = "strict") -> np.ndarray:
    first = rates.first_pass(judged, rates.PASSING[policy])["first"]
    return first.fillna(0).to_numpy()


def test_a_probes_judged_candidates_give_the_first_right_ranks_it_stored(golden):
    tables = read_tables(golden / out_of("probe"))
    results, judged = tables["results"], tables["judged"]
    assert list(judged.columns[: len(COLUMNS)]) == list(COLUMNS)
    assert len(judged) == len(results) * 3  # the answer and k = 2 candidates of every input
    stored = results["first_correct"].astype("float64").fillna(0).to_numpy()
    assert (_firsts(judged) == stored).all()


def test_a_brittleness_runs_judged_candidates_give_the_ranks_it_stored(golden):
    tables = read_tables(golden / out_of("brittleness"))
    examples, judged = tables["examples"], tables["judged"]
    assert list(judged.columns[: len(COLUMNS)]) == list(COLUMNS)
    assert (judged["member"] == examples["model"].iloc[0]).all()
    for policy, column in (("strict", "first_correct_rank"), ("generous", "first_generous_rank")):
        stored = examples[column].astype("float64").fillna(0).to_numpy()
        assert (_firsts(judged, policy) == stored).all(), policy
