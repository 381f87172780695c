"""The sweep report's stalled seeds and the comparison of runs (`rewriting compare`)."""

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from genprobe.analysis.stats import compare_groups
from genprobe.models.architectures.recurrent import RecurrentConfig
from genprobe.runs.provenance import cpu_model
from genprobe.studies.seed_sensitivity import report, run_sweep, summary
from genprobe.studies.seed_sensitivity.compare import Run, load_runs, write_comparison
from genprobe.studies.seed_sensitivity.results import read_predictions
from genprobe.tasks.rewriting.task import RewritingTask
from genprobe.training.trainer import TrainConfig


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_sweep):
    root = tmp_path_factory.mktemp("runs")
    return (
        run_sweep(tiny_sweep(seeds=(1, 2, 3)), root / "paper"),
        run_sweep(
            tiny_sweep(seeds=(1, 2, 3), model=RecurrentConfig(attention="dot", input_feeding=True)),
            root / "dot-feeding",
        ),
        run_sweep(tiny_sweep(seeds=(1, 2, 3), task=RewritingTask(n_symbols=20)), root / "twenty"),
    )


def test_compare_groups_is_the_difference_of_means_with_a_rank_test():
    a, b = np.array([0.1, 0.2, 0.3, 0.4, 0.5]), np.array([0.5, 0.6, 0.7, 0.8, 0.95])
    d = compare_groups(a, b)
    assert d.difference == pytest.approx(b.mean() - a.mean())
    assert d.ci_low < d.difference < d.ci_high and d.ci_low > 0
    # Tied seeds (0.5): exact over all 252 splits of the 10 seeds, not the normal approximation.
    every_split = stats.PermutationMethod(n_resamples=np.inf)
    assert d.mann_whitney_p == pytest.approx(stats.mannwhitneyu(b, a, method=every_split).pvalue)
    assert (d.n_a, d.n_b) == (5, 5)


def test_compare_leaves_out_a_seed_missing_from_a_suite_and_says_why_an_interval_is(
    tmp_path, tiny_sweep
):
    seeds = pd.Index([1, 2, 3, 4], name="seed")
    config = tiny_sweep(seeds=tuple(seeds))
    reference = {"short": [0.1, 0.2, 0.3, 0.4], "long": [0.5, np.nan, 0.6, 0.7]}
    variant = {"short": [0.5, 0.6, 0.7, 0.8], "long": [0.2, 0.25, 0.3, 0.35]}
    runs = [
        Run(name, config, pd.DataFrame(accuracy, index=seeds), tmp_path / name)
        for name, accuracy in (("paper", reference), ("variant", variant))
    ]
    write_comparison(runs, tmp_path)
    saved = json.loads((tmp_path / "compare.json").read_text())
    long = saved["summary"]["paper"]["long"]
    assert long["n"] == 3 and long["mean"] == pytest.approx(0.6)
    assert long["ci_low"] < 0.6 < long["ci_high"]
    differences = {d["suite"]: d for d in saved["differences"]}
    assert differences["long"]["n_a"] == 3
    assert differences["long"]["difference"] == pytest.approx(0.275 - 0.6)
    short = differences["short"]
    assert short["improvement"]["probability"] == 1.0  # every variant seed beats the paper's
    assert math.isnan(short["improvement"]["ci_low"])
    assert short["mann_whitney_p"] == pytest.approx(2 / math.comb(8, 4))
    text = (tmp_path / "report.md").read_text()
    assert "| long | paper | 3 | 60.00 |" in text and "nan" not in text.lower()
    assert "| variant | short | +40.00 | [+25.00, +55.00] | 1.00 | – | 0.0286 | 4 vs 4 |" in text
    assert (
        "No interval (–) in `95% CI of P` for variant on every suite: the seeds do not "
        "overlap, so every resample gives the same value" in text
    )


@pytest.mark.slow
def test_compare_puts_runs_side_by_side_against_the_reference(runs, tmp_path, cli):
    paper, variant, _ = runs
    out = tmp_path / "cmp"
    code, _, _ = cli("rewriting", "compare", str(paper), str(variant), "--out", str(out))
    assert code == 0
    result = json.loads((out / "compare.json").read_text())
    assert set(result["runs"]) == {"paper", "dot-feeding"}
    long = [d for d in result["differences"] if d["suite"] == "long"]
    assert len(long) == 1 and long[0]["run"] == "dot-feeding"
    summary = result["summary"]
    expected = summary["dot-feeding"]["long"]["mean"] - summary["paper"]["long"]["mean"]
    assert long[0]["difference"] == pytest.approx(expected)
    text = (out / "report.md").read_text()
    assert (
        "| repeat | Weber et al. 2018, Table 3 | 50 | 86.67 | 13.39 |" in text
    )  # the paper's task
    assert "| dot-feeding | 3 | rewriting | LSTM seq2seq with dot attention, input feeding" in text
    assert (out / "figures" / "runs.png").stat().st_size > 0 and (out / "report.html").exists()
    # on the same items: the seeds (1-3 in both) pair, the difference is of the same answers
    paired = {row["suite"]: row for row in result["paired"]}
    assert set(paired) == set(summary["paper"]) and all(r["paired_seeds"] for r in paired.values())
    assert paired["long"]["difference"] == pytest.approx(expected)
    judged = [read_predictions(run) for run in (paper, variant)]
    long_ = [j[(j["suite"] == "long") & (j["role"] == "answer")] for j in judged]
    right = [(j.sort_values(["seed", "index"])["outcome"] == "correct").to_numpy().reshape(3, -1)
             for j in long_]  # fmt: skip
    significant = [0, 0]  # pairs of seed k significant for the variant, for the paper
    for k in range(3):
        only = [int((right[i][k] & ~right[1 - i][k]).sum()) for i in (1, 0)]
        if sum(only) and stats.binomtest(only[0], sum(only)).pvalue < 0.05:
            significant[only[1] > only[0]] += 1
    assert [paired["long"]["favour_run"], paired["long"]["favour_reference"]] == significant
    assert "## On the same items" in text and "TOST" in text
    assert (out / "figures" / "profiles.png").stat().st_size > 1000


@pytest.mark.slow
def test_compare_leaves_table_3_out_for_another_task_and_refuses_bad_input(
    runs, tmp_path, cli, strong_sweep
):
    paper, _, twenty = runs
    write_comparison(load_runs([paper, twenty]), tmp_path / "cmp")
    text = (tmp_path / "cmp" / "report.md").read_text()
    assert "Weber et al. 2018" not in text
    assert "Not paired where the items differ (another data seed or suite size): twenty on" in text
    for args, message in [
        ([str(paper)], "at least two run directories"),
        ([str(paper), str(tmp_path)], "is not a run directory"),
        ([str(paper), str(twenty), "--names", "a"], "names must be 2 distinct names"),
        (
            [str(paper), str(strong_sweep)],
            "runs must be runs of one task. Got 'binary_operation and rewriting'",
        ),
    ]:
        code, _, err = cli("rewriting", "compare", *args, "--out", str(tmp_path / "x"))
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_report_flags_stalled_seeds_and_summarizes_without_them(runs, monkeypatch):
    run = runs[0]
    recorded = report.read_training(run)
    recorded["1"]["best_accuracy"] = 0.99
    recorded["2"].update(best_accuracy=0.62, validation=[0.62])
    # seed 3 waited its patience out on a plateau at 3 %
    patience = report.read_members(run).train.patience
    plateau = [0.03] * (patience + 2)
    recorded["3"].update(
        best_accuracy=0.03, validation=plateau, epochs=len(plateau), best_epoch=1,
        last_improvement=1,
    )  # fmt: skip
    monkeypatch.setattr(report, "read_training", lambda _: recorded)
    report.write_report(run)
    saved = json.loads((run / "stats.json").read_text())
    assert saved["stalled_seeds"] == ["2", "3"]
    assert saved["summary_without_stalled"]["long"]["n"] == 1
    assert saved["summary"]["long"]["n"] == 3
    text = (run / "report.md").read_text()
    assert "Seeds that stopped below 95 % validation accuracy" in text
    assert "2 (62.00 % after 1 epoch, epoch cap)" in text
    assert "The epoch cap (`--max-epochs` 1) ended 1 of them" in text
    assert f"3 (3.00 % after {patience + 2} epochs, early stopping)" in text
    assert f"Early stopping (`--patience` {patience}) ended 1 of them" in text
    assert "| 2 |" in text and "| yes |" in text


@pytest.mark.slow
def test_the_report_writes_validation_curves_as_a_tensorboard_log(runs):
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator"
    )
    run = runs[1]
    report.write_report(run)
    log = event_accumulator.EventAccumulator(str(run / "tensorboard"))
    log.Reload()
    training = report.read_training(run)
    assert sorted(log.Tags()["scalars"]) == [f"validation/seed={s}" for s in sorted(training)]
    events = log.Scalars("validation/seed=2")
    assert [e.step for e in events] == [1]
    assert events[0].value == pytest.approx(training["2"]["validation"][0])
    report.write_report(run)  # rewritten, not appended to
    assert len(list((run / "tensorboard").iterdir())) == 1


@pytest.mark.slow
def test_a_sweep_whose_loss_diverges_stops_its_seeds_and_says_so(tmp_path, tiny_sweep):
    # lr 1e37: the first update leaves weights near float32's largest, the second step's loss
    # is NaN or inf (4 steps an epoch).
    config = tiny_sweep(seeds=(1, 2), train=TrainConfig(max_epochs=3, lr=1e37))
    run = run_sweep(config, tmp_path / "run")
    training = report.read_training(run)
    assert {seed: (t["diverged"], t["epochs"]) for seed, t in training.items()} == {
        "1": (2, 1),
        "2": (2, 1),
    }
    report.write_report(run)
    text = (run / "report.md").read_text()
    assert "rounding" not in text and "nan" not in text  # as Python writes a NaN
    assert (
        "The training loss of 2 seeds went NaN or inf, at the step given: 1 (step 2), 2 (" in text
    )
    assert "The training loss of both seeds diverged (above)." in text
    assert "| divergence |" in text
    assert json.loads((run / "stats.json").read_text())["diverged_seeds"] == ["1", "2"]


def test_a_nan_difference_from_a_seed_alone_is_a_diverged_loss_not_rounding():
    # What a run trained at --lr inf recorded, before inf was refused.
    notes = {
        "members_equal_alone": False,
        "largest_difference": float("nan"),
        "measured": "member 1 of a stack of 1 against its seed alone after 2 training steps",
        "stacking": "stacked",
    }
    words = report._members_alone(notes)
    assert "rounding" not in words and "nan" not in words
    assert "is not known: the training loss diverged when it was measured" in words


def test_what_ended_a_seed_is_told_from_its_record():
    train = TrainConfig(max_epochs=5, patience=2)
    record = {
        "best_epoch": 2,
        "last_improvement": 2,
        "epochs": 4,
        "validation": [0.3, 0.5, 0.5, 0.4],
    }
    assert summary.stopped_by(record, train) == summary.EARLY_STOPPING
    improving = {**record, "epochs": 5, "last_improvement": 4, "validation": [0.1] * 5}
    assert summary.stopped_by(improving, train) == summary.EPOCH_CAP
    at_zero = {**record, "epochs": 5, "last_improvement": 0, "validation": [0.0] * 5}
    assert summary.stopped_by(at_zero, train) == summary.EPOCH_CAP
    diverged = {**at_zero, "epochs": 2, "diverged": 9, "validation": [0.0] * 2}
    assert summary.stopped_by(diverged, train) == summary.DIVERGENCE


@pytest.mark.slow
def test_a_sweep_where_no_seed_learned_says_so_with_the_numbers(runs, monkeypatch):
    run = runs[2]
    recorded = report.read_training(run)
    for t in recorded.values():
        t.update(best_accuracy=0.0, validation=[0.0], epochs=1, best_epoch=1, last_improvement=1)
    monkeypatch.setattr(report, "read_training", lambda _: recorded)
    report.write_report(run)
    text = (run / "report.md").read_text()
    assert "No seed learned the in-distribution task: all 3 seeds stayed at 0 % validation" in text
    assert "the epoch cap (`--max-epochs` 1) ended every seed" in text
    assert "Seeds that stopped below" not in text
    assert json.loads((run / "stats.json").read_text())["capped_seeds"] == ["1", "2", "3"]


@pytest.mark.slow
def test_two_seeds_get_no_correlations_and_no_nan_intervals(tmp_path, tiny_sweep):
    run = run_sweep(tiny_sweep(seeds=(1, 2)), tmp_path / "two")
    report.write_report(run)
    text = (run / "report.md").read_text()
    assert "a correlation across seeds needs at least 3 seeds, and there are 2" in text
    assert "nan" not in text.lower()
    # Two seeds give no interval, even where they are equal, and neither does the pooled IQM.
    assert "No interval (–) for every suite: needs at least 3 seeds, has 2." in text
    assert "(no interval: needs at least 3 seeds in each group, has 2)." in text
    assert not re.search(r"\[\d+\.\d+, \d+\.\d+\]", text.split("## Beside the paper")[0])
    assert "repeat–long Pearson r ours undefined (needs at least 3 seeds, has 2)" in text
    saved = json.loads((run / "stats.json").read_text())
    assert {c["reason"] for c in saved["correlations"]} == {"needs at least 3 seeds, has 2"}
    other = run_sweep(
        tiny_sweep(seeds=(1, 2), model=RecurrentConfig(input_feeding=True)), tmp_path / "other"
    )
    write_comparison(load_runs([run, other]), tmp_path / "cmp")
    compared = (tmp_path / "cmp" / "report.md").read_text()
    assert "nan" not in compared.lower() and "undefined (needs at least 3 seeds" in compared


@pytest.mark.slow
def test_equal_seeds_get_the_reason_for_no_interval_not_a_zero_width_one(runs, tmp_path):
    run = runs[0]
    report.write_report(run)
    saved = json.loads((run / "stats.json").read_text())
    # One epoch on 200 examples: every seed of this run stays at 0 % on every suite.
    assert {(s["n"], s["min"], s["max"]) for s in saved["summary"].values()} == {(3, 0.0, 0.0)}
    assert saved["summary"]["long"]["ci_reason"].startswith("all 3 seeds are equal, so every")
    assert saved["pooled_iqm"]["ci_reason"].startswith("every suite's seeds are equal, so every")
    text = (run / "report.md").read_text()
    assert "[0.00, 0.00]" not in text
    assert (
        "No interval (–) for every suite: all 3 seeds are equal, so every resample gives the "
        "same value and the bootstrap cannot bound what other seeds do." in text
    )
    write_comparison(load_runs([run, runs[1]]), tmp_path / "cmp")
    compared = (tmp_path / "cmp" / "report.md").read_text()
    assert "[+0.00, +0.00]" not in compared and "[0.50, 0.50]" not in compared
    assert "No interval (–) in `95% CI of P` for dot-feeding on every suite: every resample" in (
        compared
    )


@pytest.mark.slow
def test_the_report_says_where_the_seeds_trained(runs):
    run = runs[0]
    report.write_report(run)
    kernels = torch.backends.cpu.get_cpu_capability()
    where = f"Trained on `cpu` (1 torch thread, {cpu_model()}, {kernels} kernels) on host "
    assert where in (run / "report.md").read_text()
    assert where.replace("`cpu`", "<code>cpu</code>") in (run / "report.html").read_text()


@pytest.mark.slow
def test_the_per_seed_table_marks_each_suites_highest_and_lowest_apart(runs, monkeypatch):
    run = runs[0]
    predictions = report.read_predictions(run)
    share = {1: 1.0, 2: 0.5, 3: 0.0}  # of long's 12 examples each seed gets right
    long = predictions["suite"] == "long"
    predictions["outcome"] = "incorrect"
    predictions.loc[long, "outcome"] = [
        "correct" if index < 12 * share[seed] else "incorrect"
        for seed, index in zip(predictions["seed"][long], predictions["index"][long], strict=True)
    ]
    monkeypatch.setattr(report, "read_predictions", lambda *_: predictions)
    report.write_report(run)
    text = (run / "report.md").read_text()
    assert "highest value in bold (green in report.html), its lowest in italics (red)" in text
    # seed, standard, repeat, short, long, uncharacteristic: the other suites tie, unmarked
    assert "| 1 | 0.00 | 0.00 | 0.00 | **100.00** | 0.00 |" in text
    assert "| 2 | 0.00 | 0.00 | 0.00 | 50.00 | 0.00 |" in text
    assert "| 3 | 0.00 | 0.00 | 0.00 | *0.00* | 0.00 |" in text
    page = (run / "report.html").read_text()
    assert '<td class="high"><b>100.00</b></td>' in page
    assert '<td class="low"><i>0.00</i></td>' in page
