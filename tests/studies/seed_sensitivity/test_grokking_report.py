import itertools

from helpers import grokking_curves

from genprobe.analysis.render import Figure, Table, write_report
from genprobe.studies.seed_sensitivity.grid_report import GridCell, write_grid_report
from genprobe.studies.seed_sensitivity.over_time_report import compare_blocks, over_time_blocks

BUDGET = 10_000


def test_the_over_time_report_holds_its_figures_and_a_row_per_seed(tmp_path):
    blocks = over_time_blocks(tmp_path, grokking_curves(), BUDGET, 0.99, "held_out")
    md, page = write_report(tmp_path, "Seed sensitivity", blocks)
    figures = [b for b in blocks if isinstance(b, Figure)]
    assert [f.path.name for f in figures] == [
        "over_time.png", "grokking_steps.png", "grokking_delay.png", "weight_norm.png"
    ]  # fmt: skip
    assert page.read_text().count("data:image/png;base64,") == 4
    summary, per_seed = (b.frame for b in blocks if isinstance(b, Table))
    assert summary.iloc[0].to_dict() == {
        "seeds": "12",
        "memorized": "12",
        "grokked": "8 (67 %)",
        "95% CI of share": "[39 %, 86 %]",
        "median grokking step": "3,070",
        "median delay": "2,384",
    }
    # seed 0 passed 99 % and dropped: censored, not grokked at its first crossing
    assert per_seed.iloc[0].to_dict() == {
        "seed": "0", "memorized": "113", "grokked": "–", "delay": "–",
        "outcome": "did not grok within the budget",
    }  # fmt: skip
    assert "| 0 | 113 | – | – | did not grok within the budget |" in md.read_text()


def test_comparing_runs_gives_the_later_run_a_positive_difference(tmp_path):
    early = grokking_curves(seeds=12)
    late = early.copy()  # the same seeds, their held-out curves three evaluations later
    held_out = late["role"] == "held_out"
    late.loc[held_out, "accuracy"] = (
        late[held_out].groupby("seed")["accuracy"].shift(3, fill_value=0.0)
    )
    blocks = compare_blocks(tmp_path, [("early", early, BUDGET), ("late", late, BUDGET)],
                            0.99, "held_out")  # fmt: skip
    [table] = [b.frame for b in blocks if isinstance(b, Table)]
    row = table.iloc[0]
    assert row["run"] == "late"
    assert row["median step (early)"] == "3,070"
    assert int(row["difference"].replace(",", "")) > 0
    assert (tmp_path / "figures" / "grokking_steps.png").is_file()


def test_a_grid_report_has_the_phase_diagram_and_a_row_per_cell(tmp_path):
    axes = {"task.train_fraction": [0.5, 0.3], "train.weight_decay": [0.1, 1.0]}
    cells = [
        GridCell({"task.train_fraction": f, "train.weight_decay": w},
                 grokking_curves(seeds=4 + i, budget=BUDGET), BUDGET)
        for i, (f, w) in enumerate(itertools.product(*axes.values()))
    ]  # fmt: skip
    md, page = write_grid_report(tmp_path, axes, cells, "held_out", 0.99)
    assert page.read_text().count("data:image/png;base64,") == 1
    assert (tmp_path / "figures" / "phase_grid.png").is_file()
    rows = [line for line in md.read_text().splitlines() if line.startswith("| 0.")]
    # the last cell, 7 seeds: 4 grok, Wilson [25 %, 84 %] by hand
    assert rows[3].startswith("| 0.3 | 1 | 4 of 7 | 57 % | [25, 84] | 3,070 |")
    assert len(rows) == 4
