"""A grid of sweeps trained over time (e.g. training fraction × weight decay): per cell, the
share of seeds that grokked within the budget and the median grokking step, as a table and as
the phase diagram of Power et al. (2022) and Liu et al. (2022, Omnigrok).

The axes are `grid.read_grid`'s (setting -> its values, in order); each cell comes loaded:
its values, its sweep's curves (`read_curves`) and its step budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.analysis import grokking_plots as plots
from genprobe.analysis.grokking import THRESHOLD, grokking
from genprobe.analysis.render import Block, Figure, Heading, Table, Text, interval
from genprobe.analysis.render import write_report as render
from genprobe.errors import RunDirError
from genprobe.studies.seed_sensitivity.curves import read_curves
from genprobe.studies.seed_sensitivity.grid import read_grid
from genprobe.studies.seed_sensitivity.results import read_sweep

TITLE = "Grokking across a grid of settings"


@dataclass(frozen=True, eq=False)
class GridCell:
    values: dict[str, Any]  # the cell's value of each axis's setting
    curves: pd.DataFrame  # its sweep's curves (`read_curves`)
    budget: int  # its step budget


def grid_table(
    axes: Mapping[str, Sequence[Any]],
    cells: Sequence[GridCell],
    held_out_role: str,
    threshold: float,
) -> pd.DataFrame:
    """One row per cell: its value on each axis, then seeds, grokked, share, share_ci_low,
    share_ci_high, median_step (NaN: more than half did not grok), median_reason,
    median_delay, budget.

    Raises:
        ConfigError, RunDirError: as `analysis.grokking.members`, for each cell.
    """
    rows = []
    for cell in cells:
        result = grokking(cell.curves, cell.budget, held_out_role, threshold)
        km = result.kaplan_meier
        rows.append(
            {
                **{axis: cell.values[axis] for axis in axes},
                "seeds": km.share.n,
                "grokked": km.share.k,
                "share": km.share.share,
                "share_ci_low": km.share.ci_low,
                "share_ci_high": km.share.ci_high,
                "median_step": km.median,
                "median_reason": km.median_reason,
                "median_delay": result.median_delay,
                "budget": cell.budget,
            }
        )
    return pd.DataFrame(rows)


def grid_blocks(
    out: Path,
    axes: Mapping[str, Sequence[Any]],
    cells: Sequence[GridCell],
    held_out_role: str,
    threshold: float,
) -> list[Block]:
    """The grid's table and, for one or two axes, its phase diagram
    (`out/figures/phase_grid.png`).

    Raises:
        ConfigError, RunDirError: as `analysis.grokking.members`, for each cell.
    """
    table = grid_table(axes, cells, held_out_role, threshold)
    budgets = sorted(set(table["budget"]))
    blocks: list[Block] = [
        Text(
            f"{len(cells)} cells, each a sweep of {_counts(table['seeds'])} seeds trained for "
            f"{_counts(table['budget'])} steps. A seed grokked at the first evaluation where "
            f"its {held_out_role} accuracy reached {100 * threshold:g} % and stayed there; a "
            "seed that did not grok within the budget is censored, counted in the share. Per "
            "cell: the share that grokked with its 95 % Wilson interval, the median grokking "
            "step (the first step by which half the seeds grokked, Kaplan-Meier; – where fewer "
            "than half did) and the median delay from memorization to grokking over the seeds "
            "that grokked." + (" The budgets differ between cells." if len(budgets) > 1 else "")
        )
    ]
    if len(axes) <= 2:
        path = plots.phase_grid(table, axes, Path(out) / "figures" / "phase_grid.png")
        x, *y = axes
        blocks.append(
            Figure(
                path.relative_to(out),
                f"Share of seeds that grokked per cell ({x} across"
                + (f", {y[0]} up" if y else "")
                + "), labelled with seeds grokked / seeds and the median grokking step.",
            )
        )
    shown = table[list(axes)].map(plots.setting)
    counts = zip(table["grokked"], table["seeds"], strict=True)
    shown["grokked"] = [f"{k} of {n}" for k, n in counts]
    shown["share"] = [f"{100 * v:.0f} %" for v in table["share"]]
    shown["95% CI"] = [
        interval(lo, hi, lambda v: f"{100 * v:.0f}")
        for lo, hi in zip(table["share_ci_low"], table["share_ci_high"], strict=True)
    ]
    shown["median step"] = table["median_step"].map(_step)
    shown["median delay"] = table["median_delay"].map(_step)
    return [*blocks, Table(shown)]


def write_grid_report(
    out: str | Path,
    axes: Mapping[str, Sequence[Any]],
    cells: Sequence[GridCell],
    held_out_role: str,
    threshold: float,
) -> tuple[Path, Path]:
    """Write `report.md` and `report.html` of the grid into `out`; returns their paths.

    Raises:
        ConfigError, RunDirError: as `analysis.grokking.members`, for each cell.
    """
    out = Path(out)
    blocks = [Heading("Phase diagram"), *grid_blocks(out, axes, cells, held_out_role, threshold)]
    return render(out, TITLE, blocks)


def _counts(values: pd.Series) -> str:
    low, high = int(values.min()), int(values.max())
    return f"{low:,}" if low == high else f"{low:,} to {high:,}"


def _step(value: float) -> str:
    return "–" if np.isnan(value) else f"{value:,.0f}"


def report_grid(path: str | Path, threshold: float = THRESHOLD) -> tuple[Path, Path]:
    """Write the report of the grid of runs in `path` (`grid.run_grid`), from its cells' curves.

    Raises:
        RunDirError: not a grid, a cell not trained over time, or one not finished.
        ConfigError: a threshold outside (0, 1].
    """
    axes, cells = read_grid(path)
    loaded = []
    for cell in cells:
        config = read_sweep(cell.run)
        if config.train.steps is None:
            raise RunDirError(f"{cell.run}: not trained over time (--steps)")
        loaded.append(GridCell(cell.values, read_curves(cell.run), config.train.steps))
    held_out = read_sweep(cells[0].run).task.suites()[0]
    return write_grid_report(path, axes, loaded, held_out, threshold)
