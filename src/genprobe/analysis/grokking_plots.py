"""Figures of grokking over training time, as PNG files (`plots.save_figure`).

Steps run on a symmetric-log axis: linear from 0 (the evaluation at initialization) to 1,
logarithmic after, so the early evaluations and the budget both show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import SymLogNorm
from matplotlib.ticker import StrMethodFormatter

from genprobe.analysis.grokking import KaplanMeier
from genprobe.analysis.plots import save_figure


def accuracy_over_time(
    curves: pd.DataFrame, bands: pd.DataFrame, roles: list[str], threshold: float, path: Path
) -> Path:
    """One panel per role: accuracy per seed (thin lines), the IQM over seeds and its 95 %
    bootstrap band (`grokking.iqm_curves`), the threshold dotted."""
    fig, axes = plt.subplots(1, len(roles), figsize=(5.2 * len(roles), 4.2), sharey=True)
    for ax, role in zip(np.atleast_1d(axes), roles, strict=True):
        rows = curves[curves["role"] == role]
        for _, seed in rows.groupby("seed"):
            ax.plot(seed["step"], 100 * seed["accuracy"], color="tab:gray", alpha=0.3, lw=0.7)
        band = bands[bands["role"] == role]
        ax.fill_between(band["step"], 100 * band["ci_low"], 100 * band["ci_high"],
                        color="tab:blue", alpha=0.25, label="95 % CI of the IQM")  # fmt: skip
        ax.plot(band["step"], 100 * band["iqm"], color="tab:blue", lw=2, label="IQM over seeds")
        ax.axhline(100 * threshold, color="black", ls=":", lw=1, label=f"{100 * threshold:g} %")
        _step_axis(ax, int(rows["step"].max()))
        ax.set_title(f"{role} ({rows['seed'].nunique()} seeds, thin lines)")
        ax.grid(alpha=0.3)
    first = np.atleast_1d(axes)[0]
    first.set_ylabel("accuracy (%)")
    first.set_ylim(-3, 103)
    first.legend(loc="center left", fontsize=8)
    return save_figure(fig, path)


def grokking_cdf(estimates: Mapping[str, KaplanMeier], path: Path) -> Path:
    """Per run, the Kaplan-Meier CDF of grokking steps with its 95 % band; the share that
    grokked within the budget in the legend; a "+" at the budget marks the censored seeds."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    budget = max(km.budget for km in estimates.values())
    for i, (name, km) in enumerate(estimates.items()):
        color = f"C{i}"
        steps = np.concatenate([[0], km.steps, [km.budget]])
        cdf = 100 * np.concatenate([[0], km.cdf, km.cdf[-1:]])
        low, high = (100 * np.concatenate([[0], v, v[-1:]]) for v in (km.ci_low, km.ci_high))
        share = km.share
        label = (f"{name}: {share.k} of {share.n} grokked "
                 f"[{100 * share.ci_low:.0f}, {100 * share.ci_high:.0f}] %")  # fmt: skip
        ax.step(steps, cdf, where="post", color=color, lw=2, label=label)
        ax.fill_between(steps, low, high, step="post", color=color, alpha=0.2)
        if censored := share.n - share.k:
            ax.plot(km.budget, cdf[-1], "+", color=color, ms=12, mew=2)
            ax.annotate(f"{censored} censored", (km.budget, cdf[-1]), (-6, 8 + 12 * i), color=color,
                        textcoords="offset points", ha="right", fontsize=8)  # fmt: skip
    ax.axhline(50, color="black", ls=":", lw=1)
    _step_axis(ax, budget)
    ax.set_ylabel("seeds grokked (%)")
    ax.set_ylim(-3, 103)
    ax.set_title("Grokking step across seeds (Kaplan-Meier, 95 % band)")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def delay_distribution(members: pd.DataFrame, path: Path) -> Path:
    """The empirical CDF of the memorization-to-grokking delay over the seeds that grokked."""
    delays = np.sort(members["delay"].dropna().to_numpy(dtype=float))
    fig, ax = plt.subplots(figsize=(6, 4))
    if len(delays):
        share = 100 * np.arange(1, len(delays) + 1) / len(delays)
        ax.step(np.concatenate([[delays[0]], delays]), np.concatenate([[0], share]),
                where="post", lw=2)  # fmt: skip
        ax.plot(delays, share, "o", ms=3, color="C0")
        ax.axvline(np.median(delays), color="black", ls=":", lw=1,
                   label=f"median {np.median(delays):,.0f} steps")  # fmt: skip
        ax.legend(loc="lower right", fontsize=8)
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    else:
        ax.text(0.5, 0.5, "no seed both memorized and grokked", ha="center", va="center",
                transform=ax.transAxes)  # fmt: skip
    ax.set_xlabel("steps from memorization to grokking")
    ax.set_ylabel("seeds that grokked (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(f"Memorization-to-grokking delay ({len(delays)} seeds)")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def weight_norm_against_accuracy(curves: pd.DataFrame, held_out_role: str, path: Path) -> Path:
    """Held-out accuracy against the weight norm: one thin line per seed through its
    evaluations, each dot coloured by its step."""
    rows = curves[curves["role"] == held_out_role].sort_values(["seed", "step"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for _, seed in rows.groupby("seed"):
        ax.plot(seed["weight_norm"], 100 * seed["accuracy"], color="tab:gray", alpha=0.3, lw=0.7)
    norm = SymLogNorm(linthresh=1, vmin=0, vmax=max(1, int(rows["step"].max())))
    dots = ax.scatter(rows["weight_norm"], 100 * rows["accuracy"], c=rows["step"], norm=norm,
                      cmap="viridis", s=8, zorder=3)  # fmt: skip
    fig.colorbar(dots, ax=ax, pad=0.02).set_label("step")
    ax.set_xlabel("weight norm (L2, all parameters)")
    ax.set_ylabel(f"{held_out_role} accuracy (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(f"Weight norm and {held_out_role} accuracy over training, one line per seed")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def phase_grid(table: pd.DataFrame, axes: Mapping[str, Sequence[Any]], path: Path) -> Path:
    """The grid of runs, the first axis across and the second up (one row without it), in the
    order of each axis's values: each cell coloured by the share of seeds that grokked,
    labelled with it and the median grokking step. `table` has a column per axis, and share,
    grokked, seeds, median_step (NaN: no median within the budget)."""
    (x, xs), (y, ys) = (*axes.items(), (None, [None]))[:2]
    shares = np.full((len(ys), len(xs)), np.nan)
    fig, ax = plt.subplots(figsize=(1.5 * len(xs) + 2.5, 1.1 * len(ys) + 1.6))
    for cell in table.to_dict("records"):
        i, j = list(ys).index(cell[y]) if y else 0, list(xs).index(cell[x])
        shares[i, j] = cell["share"]
        median = cell["median_step"]
        step = "median –" if np.isnan(median) else f"median {median:,.0f}"
        text = f"{cell['grokked']}/{cell['seeds']}\n{step}"
        color = "white" if cell["share"] < 0.35 else "black"  # viridis: dark below, light above
        ax.text(j, i, text, ha="center", va="center", fontsize=8, color=color)
    image = ax.imshow(shares, cmap="viridis", vmin=0, vmax=1, origin="lower", aspect="auto")
    ax.set_xticks(range(len(xs)), [setting(v) for v in xs])
    ax.set_xlabel(x)
    if y:
        ax.set_yticks(range(len(ys)), [setting(v) for v in ys])
        ax.set_ylabel(y)
    else:
        ax.set_yticks([])
    fig.colorbar(image, ax=ax, pad=0.02).set_label("share of seeds that grokked")
    ax.set_title("Seeds that grokked within the budget (median grokking step)")
    return save_figure(fig, path)


def setting(value: Any) -> str:
    """A setting's value as a label: numbers short (`0.3`, `1e-05`), anything else as text."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _step_axis(ax: plt.Axes, last: int) -> None:
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(0, max(last, 1) * 1.05)
    ax.set_xlabel("training step")
