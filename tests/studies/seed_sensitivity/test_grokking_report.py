import json

import pytest
from helpers import grokking_curves

from genprobe.analysis.render import Figure, Table, write_report
from genprobe.errors import DataFormatError, RunDirError
from genprobe.studies.seed_sensitivity.grokking_grid import read_grid, write_grid_report
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


def _grid(tmp_path, cells):
    (tmp_path / "grid.json").write_text(json.dumps(cells))
    return tmp_path


def test_a_grid_report_reads_grid_json_and_loads_each_cell_through_the_callers_function(
    tmp_path,
):
    axes = {"task.train_fraction": [0.3, 0.5], "train.weight_decay": [0.1, 1.0]}
    cells = [
        {"values": {"task.train_fraction": f, "train.weight_decay": w}, "run": f"f{f}_wd{w}"}
        for f in axes["task.train_fraction"]
        for w in axes["train.weight_decay"]
    ]
    loaded = []

    def load(run):
        loaded.append(run.name)
        return grokking_curves(seeds=3 + len(loaded), budget=BUDGET), BUDGET

    names, read = read_grid(_grid(tmp_path, {"axes": axes, "cells": cells}), load)
    assert names == list(axes) and loaded == [c["run"] for c in cells]
    assert read[3].values == {"task.train_fraction": 0.5, "train.weight_decay": 1.0}
    md, page = write_grid_report(tmp_path, names, read, "held_out", 0.99)
    assert page.read_text().count("data:image/png;base64,") == 1
    assert "| 0.5 | 1 | 4 of 7 | 57 % | [25, 84] | 3,070 |" in md.read_text()


@pytest.mark.parametrize(
    ("grid", "words"),
    [
        ("{", "not JSON"),
        ({"cells": []}, "needs an object `axes`"),
        ({"axes": {"a": [1]}, "cells": []}, "needs a non-empty list `cells`"),
        ({"axes": {"a": [1]}, "cells": [{"values": {"b": 1}, "run": "x"}]},
         r"cells\[0\].values must name each of \['a'\]"),
        ({"axes": {"a": [1]}, "cells": [{"values": {"a": 1}}]}, r"cells\[0\].run must be"),
    ],
)  # fmt: skip
def test_a_malformed_grid_json_is_named(tmp_path, grid, words):
    (tmp_path / "grid.json").write_text(grid if isinstance(grid, str) else json.dumps(grid))
    with pytest.raises(DataFormatError, match=words):
        read_grid(tmp_path, lambda run: pytest.fail("no cell is loaded"))


def test_a_directory_without_grid_json_is_not_a_grid(tmp_path):
    with pytest.raises(RunDirError, match=r"has no grid\.json"):
        read_grid(tmp_path, lambda run: pytest.fail("no cell is loaded"))
