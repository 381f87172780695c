"""The SAGGA report's figures (matplotlib, PNG, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from genprobe.analysis.plots import save_figure


def failure_lengths(archive: pd.DataFrame, path: Path) -> Path:
    """Printed length of the archived failures."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.hist(archive["length"], bins=range(0, 101, 4), color="tab:red", alpha=0.7)
    ax.set_xlabel("printed length of the problem (characters)")
    ax.set_ylabel("archived failures")
    ax.grid(alpha=0.3)
    ax.set_title(f"Failure lengths ({len(archive)} failures)")
    return save_figure(fig, path)
