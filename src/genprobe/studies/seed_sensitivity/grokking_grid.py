"""A grid of sweeps trained over time (e.g. training fraction × weight decay): per cell, the
share of seeds that grokked within the budget and the median grokking step, as a table and as
the phase diagram of Power et al. (2022) and Liu et al. (2022, Omnigrok).

The grid's directory holds `grid.json`:

    {"axes": {"task.train_fraction": [0.3, 0.5], "train.weight_decay": [0.1, 1.0]},
     "cells": [{"values": {"task.train_fraction": 0.3, "train.weight_decay": 0.1},
                "run": "<subdir>"}, ...]}

`read_grid` reads it and loads each cell's run with a function the caller gives (the sweep's
curves and budget); everything else takes cells already loaded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis import grokking_plots as plots
from genprobe.analysis.grokking import grokking
from genprobe.analysis.render import Block, Figure, Heading, Table, Text, interval
from genprobe.analysis.render import write_report as render
from genprobe.errors import DataFormatError, RunDirError

GRID = "grid.json"
TITLE = "Grokking across a grid of settings"


@dataclass(frozen=True, eq=False)
class GridCell:
    values: dict[str, float]  # the cell's setting on each axis
    curves: pd.DataFrame  # its sweep's curves (`read_curves`)
    budget: int  # its step budget


def read_grid(
    grid_dir: str | Path, load: Callable[[Path], tuple[pd.DataFrame, int]]
) -> tuple[list[str], list[GridCell]]:
    """The grid's axes (in `grid.json`'s order) and its cells, each cell's run directory
    loaded by `load(run_dir) -> (curves, budget)`.

    Raises:
        RunDirError: no `grid.json` in `grid_dir`.
        DataFormatError: `grid.json` is not JSON, lacks `axes` or `cells`, or a cell lacks a
            value for an axis or its `run`; the message names the file and the cell.
    """
    path = Path(grid_dir) / GRID
    if not path.is_file():
        raise RunDirError(f"{grid_dir} is not a grid of runs: it has no {GRID}")
    try:
        grid = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DataFormatError(path, None, f"not JSON: {error}") from None
    if not isinstance(grid, dict) or not isinstance(grid.get("axes"), dict):
        raise DataFormatError(path, None, "needs an object `axes`: axis name -> its values")
    if not isinstance(grid.get("cells"), list) or not grid["cells"]:
        raise DataFormatError(path, None, "needs a non-empty list `cells`")
    axes = list(grid["axes"])
    cells = []
    for i, cell in enumerate(grid["cells"]):
        values = cell.get("values") if isinstance(cell, dict) else None
        if not isinstance(values, dict) or sorted(values) != sorted(axes):
            raise DataFormatError(path, None, f"cells[{i}].values must name each of {axes}")
        if not isinstance(cell.get("run"), str):
            raise DataFormatError(path, None, f"cells[{i}].run must be a run directory")
        curves, budget = load(Path(grid_dir) / cell["run"])
        cells.append(GridCell({a: values[a] for a in axes}, curves, budget))
    return axes, cells


def grid_table(
    axes: Sequence[str], cells: Sequence[GridCell], held_out_role: str, threshold: float
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
    axes: Sequence[str],
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
        x, y = axes[0], (axes[1] if len(axes) == 2 else None)
        path = plots.phase_grid(table, x, y, Path(out) / "figures" / "phase_grid.png")
        blocks.append(
            Figure(
                path.relative_to(out),
                f"Share of seeds that grokked per cell ({x} across"
                + (f", {y} up" if y else "")
                + "), labelled with seeds grokked / seeds and the median grokking step.",
            )
        )
    shown = table[list(axes)].map(lambda v: f"{v:g}")
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
    axes: Sequence[str],
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
