"""The probe on a sweep of a task with many right outputs (symbol rewriting): the report shows
each input every member fails with the right output its suite knows, and "–" where its suite
knows none."""

import pandas as pd
import pytest
from helpers import model_settings

from genprobe.studies import report_run
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.results import read_results
from genprobe.studies.probe.run import run_probe
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.tasks.registry import load_task


@pytest.fixture(scope="module")
def probed(tiny_sweep, tmp_path_factory):
    """Two seeds trained for seconds: they fail nearly every input."""
    config = tiny_sweep(seeds=(1, 2), task=load_task("rewriting"))
    sweep = run_sweep(config, tmp_path_factory.mktemp("run") / "sweep")
    out = run_probe(
        ProbeConfig(model_settings(f"run:{sweep}"), size=12), tmp_path_factory.mktemp("probe") / "p"
    )
    report_run(out)
    return out


def test_inputs_every_member_fails_show_the_right_output_their_suite_knows(probed):
    results = read_results(probed)
    known = results.groupby("suite")["reference"].apply(lambda r: r.notna().any())
    assert known.any() and not known.all()  # suites with references and suites without
    report = (probed / "report.md").read_text().split("## Inputs every member fails")[1]
    report = report.split("\n## ")[0]  # this section alone
    rows = [line.split("|")[1:-1] for line in report.splitlines() if line.startswith("| ")][1:]
    shown = pd.DataFrame([[cell.strip() for cell in row] for row in rows])
    for suite, right in zip(shown[0], shown[2], strict=True):
        assert (right == "–") != known[suite], (suite, right)
