import pandas as pd

from genprobe.analysis.plots import end_labels


def test_seeds_that_end_together_share_a_label_and_labels_keep_apart():
    labels = end_labels({"1": (3, 0.0), "2": (3, 0.0), "3": (3, 1.0), "4": (5, 1.0)}, gap=4.0)
    assert labels == {
        "seeds 1, 2": (3, 0.0, 0.0),
        "seed 3": (3, 1.0, 4.0),  # pushed up off the label below it
        "seed 4": (5, 1.0, 1.0),  # another epoch: stays on its point
    }
    many = end_labels({str(s): (1, 0.0) for s in range(8)})
    assert list(many) == ["seeds 0, 1, 2, 3, 4 and 3 more"]


def _drawn(monkeypatch, module, draw):
    """The axes `draw` made, caught before the figure is saved and closed."""
    caught = []
    monkeypatch.setattr(module, "save_figure", lambda fig, path: caught.append(fig) or path)
    draw()
    [fig] = caught
    fig.canvas.draw()
    return fig.axes[0]


def _ticks_shown(ax):
    low, high = ax.get_xlim()
    return [t for t in ax.get_xticks() if low <= t <= high]


def test_one_generation_gets_integer_generations_and_counts_from_zero(monkeypatch, tmp_path):
    from genprobe.analysis import plots

    stats = pd.DataFrame({"generation": [1], "archive_size": [0], "novel_found": [0]})
    ax = _drawn(monkeypatch, plots, lambda: plots.progress(stats, tmp_path / "p.png"))
    assert _ticks_shown(ax) == [1.0]
    assert ax.get_ylim()[0] == 0 and all(t == int(t) for t in ax.get_yticks())


def test_one_epoch_learning_curves_have_integer_epochs(monkeypatch, tmp_path):
    from genprobe.analysis import plots

    ax = _drawn(
        monkeypatch,
        plots,
        lambda: plots.learning_curves(
            {"1": [0.0], "2": [0.0]}, {"1": 1, "2": 1}, {"1", "2"}, tmp_path / "c.png"
        ),
    )
    assert _ticks_shown(ax) == [1.0]
    assert [t.get_text() for t in ax.texts] == ["seeds 1, 2"]


def test_learning_curves_give_each_seed_a_colour_the_colour_bar_names(monkeypatch, tmp_path):
    from genprobe.analysis import plots

    seeds = [str(s) for s in range(1, 51)]
    curves = {seed: [0.0, 0.5, 0.99] for seed in seeds}
    curves["7"] = [0.0, 0.1]
    ax = _drawn(
        monkeypatch,
        plots,
        lambda: plots.learning_curves(
            curves, dict.fromkeys(seeds, 3) | {"7": 2}, {"7"}, tmp_path / "c.png"
        ),
    )
    lines = ax.get_lines()
    assert len(lines) == 50 and len({line.get_color() for line in lines}) == 50
    assert [line.get_linestyle() for line in lines].count("--") == 1  # the stalled seed
    assert lines[6].get_linestyle() == "--"
    bar = ax.figure.axes[1]  # the colour bar
    assert bar.get_ylabel() == "seed"
    assert [t.get_text() for t in bar.get_yticklabels()] == seeds[::5]
