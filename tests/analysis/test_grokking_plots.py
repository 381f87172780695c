import pandas as pd
from helpers import grokking_curves

from genprobe.analysis import grokking_plots
from genprobe.analysis.grokking import grokking, iqm_curves

PNG = b"\x89PNG"


def test_every_grokking_figure_is_written_as_a_png(tmp_path):
    curves = grokking_curves(seeds=6, budget=1000)
    result = grokking(curves, 1000, "held_out")
    bands = iqm_curves(curves, 1000, ["train", "held_out"])
    table = pd.DataFrame(
        {"fraction": [0.3, 0.5], "share": [0.2, 0.9], "grokked": [1, 9], "seeds": [5, 10],
         "median_step": [float("nan"), 300.0]}
    )  # fmt: skip
    paths = [
        grokking_plots.accuracy_over_time(
            curves, bands, ["train", "held_out"], 0.99, tmp_path / "a.png"
        ),
        grokking_plots.grokking_cdf({"run": result.kaplan_meier}, tmp_path / "b.png"),
        grokking_plots.delay_distribution(result.members, tmp_path / "c.png"),
        grokking_plots.delay_distribution(result.members.iloc[:0], tmp_path / "c0.png"),
        grokking_plots.weight_norm_against_accuracy(curves, "held_out", tmp_path / "d.png"),
        grokking_plots.phase_grid(table, {"fraction": [0.3, 0.5]}, tmp_path / "e.png"),
    ]
    for path in paths:
        assert path.read_bytes().startswith(PNG)


def test_the_phase_grid_labels_each_cell_with_its_share_and_median(monkeypatch, tmp_path):
    caught = []
    monkeypatch.setattr(grokking_plots, "save_figure", lambda fig, path: caught.append(fig))
    nan = float("nan")
    table = pd.DataFrame(
        {"f": [0.3, 0.3, 0.5, 0.5], "wd": [1.0, 0.1, 1.0, 0.1], "share": [0.5, 0, 1, 0.25],
         "grokked": [2, 0, 4, 1], "seeds": [4] * 4, "median_step": [900, nan, 120, nan]}
    )  # fmt: skip
    grokking_plots.phase_grid(table, {"f": [0.3, 0.5], "wd": [0.1, 1.0]}, tmp_path / "g.png")
    ax = caught[0].axes[0]  # cells in the axes' order of values, not the table's
    labels = {(t.get_position(), t.get_text()) for t in ax.texts}
    assert labels == {
        ((0, 0), "0/4\nmedian –"),
        ((0, 1), "2/4\nmedian 900"),
        ((1, 0), "1/4\nmedian –"),
        ((1, 1), "4/4\nmedian 120"),
    }
    shares = ax.images[0].get_array()
    assert shares[1, 0] == 0.5 and shares[0, 1] == 0.25  # rows: wd up, columns: f across
