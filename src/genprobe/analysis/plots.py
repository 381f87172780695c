"""Figures across seeds, as PNG files (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.cm import ScalarMappable
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.ticker import MaxNLocator

from genprobe.runs.atomic import atomic_path


def suite_distributions(accuracy: pd.DataFrame, path: Path, members: str = "seeds") -> Path:
    """Box per suite with every seed as a dot (Weber et al. 2018, Figure 1).

    `accuracy` has one row per seed and one column per suite, values in [0, 1]; `members`
    names the rows in the title (a probe's members may be a language model's prompts).
    """
    fig, ax = plt.subplots(figsize=(1.6 * len(accuracy.columns) + 2, 4))
    data = [100 * accuracy[suite].to_numpy() for suite in accuracy.columns]
    ax.boxplot(data, widths=0.5, showfliers=False)
    jitter = np.random.default_rng(0)  # fixed: the same run draws the same figure
    for i, values in enumerate(data, start=1):
        ax.scatter(i + jitter.uniform(-0.15, 0.15, len(values)), values, s=14, alpha=0.7, zorder=3)
    long = max(map(len, accuracy.columns), default=0) > 12
    ax.set_xticks(
        range(1, len(data) + 1),
        list(accuracy.columns),
        rotation=20 if long else 0,
        ha="right" if long else "center",
    )
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(f"Accuracy per suite across {_counted(len(accuracy), members)}")
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, path)


def example_histograms(panels: dict[str, tuple[np.ndarray, float]], path: Path) -> Path:
    """One histogram per panel of values in [low, 1] (name → (values, low): a suite's
    examples' scores, say), side by side; NaNs (undetermined) left out and counted."""
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels) + 0.8, 3.2), sharey=True,
                             squeeze=False)  # fmt: skip
    for ax, (name, (values, low)) in zip(axes[0], panels.items(), strict=True):
        known = values[~np.isnan(values)]
        ax.hist(known, bins=np.linspace(low, 1, 21), color="tab:blue", alpha=0.8)
        missing = len(values) - len(known)
        ax.set_title(name + (f"\n({missing:,} undetermined)" if missing else ""), fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("examples")
    return save_figure(fig, path)


def data_map_figure(table: pd.DataFrame, path: Path) -> Path:
    """Swayamdipta et al.'s data map: one dot per training example, its variability (x)
    against its confidence (y), coloured by its correctness (`analysis.data_maps.data_map`'s
    columns); examples no member trained on left out."""
    known = table.dropna(subset=["confidence", "variability"])
    fig, ax = plt.subplots(figsize=(5.2, 4.5))
    dots = ax.scatter(known["variability"], known["confidence"], c=known["correctness"],
                      cmap="viridis", vmin=0, vmax=1, s=6, alpha=0.7, linewidths=0)  # fmt: skip
    fig.colorbar(dots, ax=ax, label="correctness (share of training time right)")
    ax.set_xlabel("variability (std of the target's probability)")
    ax.set_ylabel("confidence (mean of the target's probability)")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(f"Data map of {len(known):,} training examples")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def performance_profiles(profiles: dict[str, pd.DataFrame], path: Path) -> Path:
    """One curve per run: the share of its members × suites at or above each accuracy
    threshold with its band (`analysis.paired.performance_profile`'s columns; Agarwal et al.
    2021, Figure 5)."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, (name, table) in enumerate(profiles.items()):
        x = 100 * table["threshold"]
        ax.plot(x, 100 * table["share"], color=f"C{i}", label=name)
        ax.fill_between(x, 100 * table["low"], 100 * table["high"], color=f"C{i}", alpha=0.2)
    ax.set_xlabel("accuracy threshold τ (%)")
    ax.set_ylabel("members × suites with accuracy ≥ τ (%)")
    ax.set_ylim(-3, 103)
    ax.set_title("Performance profiles")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def suite_scatter(accuracy: pd.DataFrame, x: str, y: str, path: Path) -> Path:
    """One dot per seed: accuracy on suite `x` against suite `y`."""
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.scatter(100 * accuracy[x], 100 * accuracy[y], s=18)
    ax.set_xlabel(f"{x} accuracy (%)")
    ax.set_ylabel(f"{y} accuracy (%)")
    ax.set_xlim(-3, 103)
    ax.set_ylim(-3, 103)
    ax.set_title(f"{y} vs {x}, one dot per seed")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def correlation_heatmap(matrix: pd.DataFrame, path: Path, title: str) -> Path:
    """A square matrix of correlations in [-1, 1], each cell labelled with its value."""
    n = len(matrix)
    fig, ax = plt.subplots(figsize=(1.0 * n + 2.2, 0.9 * n + 1.4))
    image = ax.imshow(matrix.to_numpy(dtype=float), cmap="RdBu_r", vmin=-1, vmax=1)
    for i in range(n):
        for j in range(n):
            value = matrix.iat[i, j]
            label = "" if np.isnan(value) else f"{value:+.2f}"
            color = "white" if abs(value) > 0.6 else "black"  # readable on the dark ends
            ax.text(j, i, label, ha="center", va="center", fontsize=9, color=color)
    ax.set_xticks(range(n), list(matrix.columns), rotation=30, ha="right")
    ax.set_yticks(range(n), list(matrix.index))
    ax.set_title(title)
    fig.colorbar(image, ax=ax, shrink=0.8)
    return save_figure(fig, path)


def learning_curves(
    curves: dict[str, list[float]], best: dict[str, int], flagged: set[str], path: Path
) -> Path:
    """Validation accuracy per epoch, one line per seed in a colour of its own (the colour bar
    names the seeds); a dot where each seed's kept (best) epoch is, a cross where it stopped;
    `flagged` seeds dashed and labelled, seeds that end at the same point under one label."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    last = max(map(len, curves.values()), default=1)
    ends = {seed: (len(curves[seed]), 100 * curves[seed][-1]) for seed in curves if seed in flagged}
    for text, (epoch, value, height) in end_labels(ends).items():
        ax.annotate(text, (epoch, value), (epoch + 0.03 * last, height), fontsize=8,
                    va="center", arrowprops={"arrowstyle": "-", "lw": 0.5})  # fmt: skip
    colors = seed_colors(list(curves), fig, ax)
    for seed, curve in curves.items():
        epochs = np.arange(1, len(curve) + 1)
        values = 100 * np.asarray(curve)
        style = "--" if seed in flagged else "-"
        ax.plot(epochs, values, color=colors[seed], ls=style, alpha=0.8, lw=1.2)
        ax.scatter(best[seed], values[best[seed] - 1], color=colors[seed], s=14, zorder=3)
        ax.scatter(epochs[-1], values[-1], color=colors[seed], marker="x", s=20, zorder=3)
    ax.set_xlabel("epoch")
    ax.set_xlim(0.5, last + 0.5 + 0.12 * last)  # room for the labels right of the last epoch
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_ylabel("validation accuracy (%)")
    ax.set_ylim(-3, 103)
    ax.set_title("Validation accuracy per epoch (dot: kept epoch, x: stopped)")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


MAX_SEED_TICKS = 12  # seeds the colour bar names; with more, every k-th


def seed_colors(seeds: list[str], fig: plt.Figure, ax: plt.Axes) -> dict[str, Any]:
    """A colour per seed, in order along viridis (its pale yellow end left out, for contrast
    on white), and a colour bar beside `ax` with a band per seed, named by its seed."""
    n = max(len(seeds), 1)
    cmap = ListedColormap(plt.get_cmap("viridis")(np.linspace(0, 0.88, n)))
    bar = fig.colorbar(
        ScalarMappable(BoundaryNorm(np.arange(n + 1) - 0.5, n), cmap), ax=ax, pad=0.02
    )
    shown = range(0, len(seeds), -(-len(seeds) // MAX_SEED_TICKS))
    bar.set_ticks(list(shown), labels=[seeds[i] for i in shown])
    bar.set_label("seed")
    return {seed: cmap(i) for i, seed in enumerate(seeds)}


def end_labels(
    ends: dict[str, tuple[int, float]], gap: float = 4.0
) -> dict[str, tuple[int, float, float]]:
    """One label per end point of the flagged seeds' curves: `seed 3`, or `seeds 1, 2` where
    several end at the same (epoch, accuracy %). Returns label -> (epoch, accuracy, height of
    the label): at one epoch, labels are `gap` points of accuracy apart at least, so they do
    not overlap; each label is joined to its point by a line."""
    points: dict[tuple[int, float], list[str]] = {}
    for seed, (epoch, value) in ends.items():
        points.setdefault((epoch, round(value, 6)), []).append(seed)
    labels: dict[str, tuple[int, float, float]] = {}
    previous: dict[int, float] = {}
    for (epoch, value), seeds in sorted(points.items()):
        height = max(value, previous.get(epoch, -np.inf) + gap)
        previous[epoch] = height
        text = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(seeds[:5])}"
        text += f" and {len(seeds) - 5} more" if len(seeds) > 5 else ""
        labels[text] = (epoch, value, height)
    return labels


def length_curves(
    table: pd.DataFrame,
    path: Path,
    trained: tuple[int, int] | None = None,
    label: str = "length",
    what: str = "accuracy",
    who: str = "seeds",
) -> Path:
    """Accuracy per example length: one thin line per seed (of a probe: per member, `who`),
    the median over them, and a band from the 25th to the 75th percentile. `table` has one row
    per seed and one column per length, values in [0, 1]; `trained` shades the lengths seen in
    training."""
    lengths = np.asarray(table.columns, dtype=float)
    values = 100 * table.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if trained is not None:
        ax.axvspan(trained[0] - 0.5, trained[1] + 0.5, color="tab:green", alpha=0.08,
                   label="training lengths")  # fmt: skip
    marker = "o" if len(lengths) <= 30 else None
    for row in values:
        ax.plot(lengths, row, color="tab:gray", alpha=0.3, lw=0.8, marker=marker, ms=2)
    with np.errstate(all="ignore"):  # a length some seed lacks is NaN for it
        low, median, high = np.nanpercentile(values, [25, 50, 75], axis=0)
    ax.fill_between(lengths, low, high, color="tab:blue", alpha=0.2, label="25th-75th percentile")
    ax.plot(lengths, median, color="tab:blue", lw=2, label=f"median over {who}")
    ax.set_xlabel(label)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(f"{what} (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(f"{what.capitalize()} per {label}, {_counted(len(values), who)} (thin lines)")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def runs_side_by_side(accuracy: pd.DataFrame, path: Path) -> Path:
    """Per suite, one box and strip per run; `accuracy` has columns run, suite, accuracy."""
    suites = list(dict.fromkeys(accuracy["suite"]))
    runs = list(dict.fromkeys(accuracy["run"]))
    fig, axes = plt.subplots(
        1, len(suites), figsize=(1.1 * len(runs) * len(suites) + 2, 4.2), sharey=True
    )
    axes = np.atleast_1d(axes)
    jitter = np.random.default_rng(0)
    for ax, suite in zip(axes, suites, strict=True):
        data = [
            100 * accuracy.loc[(accuracy["suite"] == suite) & (accuracy["run"] == run), "accuracy"]
            for run in runs
        ]
        ax.boxplot(data, widths=0.5, showfliers=False)
        for i, values in enumerate(data, start=1):
            ax.scatter(i + jitter.uniform(-0.15, 0.15, len(values)), values, s=10, alpha=0.7,
                       zorder=3)  # fmt: skip
        ax.set_xticks(range(1, len(runs) + 1), runs, rotation=30, ha="right")
        ax.set_title(suite)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("accuracy (%)")
    axes[0].set_ylim(-3, 103)
    return save_figure(fig, path)


def progress(stats: pd.DataFrame, path: Path) -> Path:
    """Archive size and novel failures per generation, each on its own axis: after a few
    hundred generations the archive is hundreds of times one generation's yield."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    bars = ax.bar(stats["generation"], stats["novel_found"], alpha=0.5, label="novel failures")
    ax.set_xlabel("generation")
    ax.set_xlim(stats["generation"].min() - 0.6, stats["generation"].max() + 0.6)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_ylabel("novel failures in the generation")
    ax.set_ylim(0, 1.05 * max(1, stats["novel_found"].max()))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    archive = ax.twinx()
    (line,) = archive.plot(
        stats["generation"], stats["archive_size"], color="tab:red", label="archive size"
    )
    archive.set_ylabel("archive size")
    archive.set_ylim(0, 1.05 * max(1, stats["archive_size"].max()))
    archive.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(handles=[line, bars], loc="upper left")
    ax.set_title("What each generation added")
    return save_figure(fig, path)


def save_figure(fig: plt.Figure, path: Path) -> Path:
    """Write `fig` as a PNG (atomically) and close it; returns `path`. A figure made with a
    layout engine of its own (`layout="constrained"`) keeps it."""
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    return path


def _counted(n: int, plural: str) -> str:
    """`3 seeds`, `1 seed`."""
    return f"{n} {plural[:-1] if n == 1 and plural.endswith('s') else plural}"
