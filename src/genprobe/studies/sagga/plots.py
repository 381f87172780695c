"""The SAGGA report's figures (matplotlib, PNG, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from genprobe.analysis.plots import save_figure


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


def failure_lengths(archive: pd.DataFrame, path: Path) -> Path:
    """Printed length of the archived failures."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.hist(archive["length"], bins=range(0, 101, 4), color="tab:red", alpha=0.7)
    ax.set_xlabel("printed length of the problem (characters)")
    ax.set_ylabel("archived failures")
    ax.grid(alpha=0.3)
    ax.set_title(f"Failure lengths ({len(archive)} failures)")
    return save_figure(fig, path)
