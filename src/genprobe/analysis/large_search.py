"""What a large search (`studies/large_search.py`) says, for every study that runs one: the
brittleness study's, keyed by suite and row, and the probe's, keyed by member, suite and input.

Per input and decoding (`per_input`): how many candidates, the probability of the top one and of
the last, the mass they cover, how many are right and the first right rank. Per decoding
(`fixes`): how many failures of the ordinary search at k the large one fixes, at which rank, and
how sure the model is of its top candidate (Welleck et al. 2022, section 6.1). The figure
(`top_vs_correct`) is the paper's Figure 3.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from genprobe.analysis.plots import save_figure
from genprobe.tasks.verdict import Outcome


def per_input(rows: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """One row per input (`keys`) and decoding, in the order `rows` (one per candidate) give
    them: candidates, p_top (of rank 1), p_bottom (of the last rank), mass (their summed
    probability; NaN where the model gives none), n_correct, first_correct_rank (null: none
    right)."""
    rows = rows.reset_index(drop=True)
    correct = rows["outcome"] == Outcome.CORRECT.value
    p = np.exp(rows["logprob"].to_numpy(dtype=float))
    groups = rows.assign(p=p, correct=correct, correct_rank=rows["rank"].where(correct)).groupby(
        [*keys, "decoding"], sort=False
    )
    table = pd.DataFrame(
        {
            "candidates": groups.size(),
            "p_top": p[groups["rank"].idxmin().to_numpy()],
            "p_bottom": p[groups["rank"].idxmax().to_numpy()],
            "mass": groups["p"].sum(min_count=1),
            "n_correct": groups["correct"].sum(),
            "first_correct_rank": groups["correct_rank"].min().astype("Int64"),
        }
    )
    return table.reset_index()


def fixes(
    table: pd.DataFrame, first_correct: pd.Series, k: int, keys: Sequence[str]
) -> pd.DataFrame:
    """Per decoding of `per_input`'s table: inputs, the ordinary search's failures at k among
    them (`first_correct`: its first right rank, indexed by `keys`), how many the large search
    fixes and the median rank it fixes them at, the mean probability of the top candidate (and
    where none is right), of the last one, and the mean mass."""
    rows = []
    for decoding, group in table.groupby("decoding", sort=False):
        before = first_correct.reindex(pd.MultiIndex.from_frame(group[list(keys)]))
        failures = (before.isna() | (before > k)).to_numpy(dtype=bool)
        fixed = failures & group["first_correct_rank"].notna().to_numpy()
        none = group["n_correct"].to_numpy() == 0
        rows.append(
            {
                "decoding": decoding,
                "problems": len(group),
                f"failures@{k}": int(failures.sum()),
                "fixed": int(fixed.sum()),
                "fixed %": 100.0 * fixed.sum() / failures.sum() if failures.any() else float("nan"),
                "median rank fixed": float(np.median(group["first_correct_rank"][fixed]))
                if fixed.any()
                else float("nan"),
                "mean p(top)": float(group["p_top"].mean()),
                "mean p(top), none correct": float(group["p_top"][none].mean())
                if none.any()
                else float("nan"),
                "mean p(last)": float(group["p_bottom"].mean()),
                "mean mass": float(group["mass"].mean()),
            }
        )
    return pd.DataFrame(rows)


def top_vs_correct(rows: pd.DataFrame, path: Path, beam: str) -> Path:
    """Log10 probability of the top beam candidate of each input against those of every
    correct candidate (Welleck et al. 2022, Figure 3), a panel per suite where `rows` hold
    several (an in-distribution suite pooled with shifted ones would hide both). `rows`: the
    large search's rows (those without a log-probability left out); `beam`: the decoding of
    its beam, as its rows name it."""
    searched = rows[(rows["decoding"] == beam) & rows["logprob"].notna()]
    searched = searched.assign(log10=searched["logprob"].to_numpy(dtype=float) / np.log(10))
    top_or_correct = (searched["rank"] == 1) | (searched["outcome"] == "correct")
    plotted = searched.loc[top_or_correct, "log10"]
    low = min(plotted.min(), 0) if len(plotted) else 0
    bins = np.linspace(low - 0.5, 0.5, 40)
    suites = list(dict.fromkeys(searched["suite"])) if "suite" in searched else []
    suites = suites or [None]
    columns = min(len(suites), 3)
    lines = -(-len(suites) // columns)
    size = (6, 4) if len(suites) == 1 else (4.2 * columns, 3.2 * lines)
    fig, axes = plt.subplots(lines, columns, figsize=size, squeeze=False, sharex=True)
    for ax, suite in zip(axes.flat, suites, strict=False):
        shown = searched if suite is None else searched[searched["suite"] == suite]
        top = shown.loc[shown["rank"] == 1, "log10"]
        correct = shown.loc[shown["outcome"] == "correct", "log10"]
        ax.hist(top, bins=bins, alpha=0.6, label=f"max (top candidate, {len(top)})")
        ax.hist(correct, bins=bins, alpha=0.6, label=f"correct ({len(correct)})")
        ax.set_xlabel("log10 probability")
        ax.set_ylabel("candidates")
        ax.legend(fontsize="small")
        ax.set_title(
            suite if len(suites) > 1 else "Top candidate vs correct candidates, large beam"
        )
    for ax in axes.flat[len(suites) :]:
        ax.set_visible(False)
    if len(suites) > 1:
        fig.suptitle("Top candidate vs correct candidates, large beam")
    return save_figure(fig, path)
