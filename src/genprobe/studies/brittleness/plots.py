"""The brittleness report's figures (matplotlib, PNG, no display needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from genprobe.analysis.plots import save_figure


def failure_by_range(
    frame: pd.DataFrame,
    ks: Sequence[int],
    path: Path,
    shares: Mapping[str, float | None] | None = None,
) -> Path:
    """Fail@k against the coefficient range, one line per template, one panel per k
    (Welleck et al. 2022, Figure 2). `frame`: rows of `tables.fail_table` by template and
    coefficient range; `shares`: the percentage of training integers in each range, drawn on
    a log-scaled right axis."""
    ranges = sorted(frame["coeff_range"].unique(), key=lambda r: int(r.split("-")[0]))
    fig, axes = plt.subplots(
        1, len(ks), figsize=(5.2 * len(ks), 4.6), squeeze=False, layout="constrained"
    )
    for ax, k in zip(axes[0], ks, strict=True):
        for template, group in frame.groupby("template", sort=True):
            values = group.set_index("coeff_range")[f"Fail@{k}"].reindex(ranges)
            ax.plot(range(len(ranges)), values.to_numpy(dtype=float), marker="o", label=template)
        ax.set_xticks(range(len(ranges)), ranges, rotation=35, ha="right")
        ax.set_xlabel("coefficient range")
        ax.set_ylabel(f"Fail@{k} (%)")
        ax.set_ylim(-3, 103)
        ax.grid(alpha=0.3)
        right = _shares_axis(ax, [shares.get(r) for r in ranges]) if shares else None
    # one legend under the panels: inside one, it hid the curves it names
    handles, labels = axes[0][0].get_legend_handles_labels()
    if right is not None:
        more = right.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle("Failure rate on simple primitives by coefficient range")
    return save_figure(fig, path)


def _shares_axis(ax: Any, shares: Sequence[float | None]) -> Any:
    """The training integers' share per range on a right axis (log: 99 % and 0.01 % both
    show), returned (None when no range has any); ranges with none are left out of the line."""
    values = [np.nan if v is None or v <= 0 else v for v in shares]
    if np.isnan(values).all():
        return None
    right = ax.twinx()
    right.plot(range(len(values)), values, "k--", marker="s", label="training integers")
    right.set_yscale("log")
    right.set_ylabel("training integers in the range (%)")
    return right
