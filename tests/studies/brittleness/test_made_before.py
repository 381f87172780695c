"""Brittleness runs made before the study ran as a preset of the probe
(`tests/golden/brittleness-before-probe.tar.gz`: the golden runs of that code, finished and
killed mid-way, in their own layout of suite tables and solve shards): a finished one is read
as it is, a killed one finishes in the probe's layout with what a new run computes."""

import json
import tarfile

import pytest
from helpers import examples
from study_runs import GOLDEN, INPUTS, STUDIES, assert_same_numbers, canonical, unpack

from genprobe.studies.brittleness.results import read_examples

pytestmark = pytest.mark.slow

BEFORE = GOLDEN.with_name("brittleness-before-probe.tar.gz")
ARGV = STUDIES["brittleness"].argv


@pytest.fixture
def runs(tmp_path):
    """The golden archive (its inputs, today's brittleness runs) and the runs made before."""
    golden = unpack(tmp_path / "today")
    with tarfile.open(BEFORE) as archive:
        archive.extractall(tmp_path / "before", filter="data")
    return golden, tmp_path / "before" / "golden" / "runs"


def test_a_finished_run_made_before_is_read_as_it_is(runs, cli):
    _, before = runs
    run = before / "brittleness"
    stored = (run / "config.json").read_bytes()
    made = canonical(examples(run).to_dict("list"))
    code, _, err = cli(*ARGV(INPUTS), "--out", str(run))
    assert code == 0, err
    assert "a finished run made before" in err
    assert (run / "config.json").read_bytes() == stored
    assert canonical(examples(run).to_dict("list")) == made
    assert not (run / "suites.json").exists()  # no suite of the probe's was made
    assert read_examples(run)["candidates"].map(len).gt(0).all()
    summary = json.loads((run / "summary.json").read_text())
    assert {row["suite"] for row in summary["fail"]["strict"]} == {
        "in-distribution", "robustness-simple",
    }  # fmt: skip
    assert cli("report", str(run))[0] == 0


def test_a_run_killed_under_the_code_before_finishes_as_a_probe(runs, cli):
    golden, before = runs
    run = before / "brittleness.killed"
    assert (run / "shards" / "solve").is_dir() and not (run / "summary.json").exists()
    stored = (run / "config.json").read_bytes()
    code, _, err = cli(*ARGV(INPUTS), "--out", str(run))
    assert code == 0, err
    assert (run / "config.json").read_bytes() == stored  # the same run: its hash kept
    assert (run / "suites.json").exists()  # decoded again, in the probe's layout
    finished = examples(golden / "runs" / "brittleness").to_dict("list")
    assert_same_numbers("brittleness", examples(run).to_dict("list"), finished, golden)
