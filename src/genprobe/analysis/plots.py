"""Figures across seeds, as PNG files (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from genprobe.runs.atomic import atomic_path


def suite_distributions(accuracy: pd.DataFrame, path: Path) -> Path:
    """Box per suite with every seed as a dot (Weber et al. 2018, Figure 1).

    `accuracy` has one row per seed and one column per suite, values in [0, 1].
    """
    fig, ax = plt.subplots(figsize=(1.6 * len(accuracy.columns) + 2, 4))
    data = [100 * accuracy[suite].to_numpy() for suite in accuracy.columns]
    ax.boxplot(data, widths=0.5, showfliers=False)
    jitter = np.random.default_rng(0)  # fixed: the same run draws the same figure
    for i, values in enumerate(data, start=1):
        ax.scatter(i + jitter.uniform(-0.15, 0.15, len(values)), values, s=14, alpha=0.7, zorder=3)
    ax.set_xticks(range(1, len(data) + 1), list(accuracy.columns))
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(f"Accuracy per suite across {len(accuracy)} seeds")
    ax.grid(axis="y", alpha=0.3)
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


def save_figure(fig: plt.Figure, path: Path) -> Path:
    """Write `fig` as a PNG (atomically) and close it; returns `path`."""
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    return path
