"""Suites correlated across the members of a study (a sweep's seeds, a language model's
prompt formats and draws): the report section that shows every pair as one heatmap and its
table, Pearson r of the members' accuracies (each pair over the members scored on both)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis import plots
from genprobe.analysis.render import Block, Figure, Heading, Table, Text
from genprobe.analysis.stats import MIN_SEEDS


def correlation_section(run: Path, accuracy: pd.DataFrame, who: str, more: str = "") -> list[Block]:
    """Heading, text, heatmap (`figures/correlations.png`) and table of the correlations
    between the suites (columns) of `accuracy` (one row per member, `who` naming them: "seeds",
    "members"); none with fewer than two suites, a sentence with fewer than `MIN_SEEDS`
    members. `more`: a sentence after the text's first."""
    suites = list(accuracy.columns)
    heading = Heading(f"Correlation between suites across {who}")
    if len(suites) < 2:
        return []
    if len(accuracy) < MIN_SEEDS:
        why = f"needs at least {MIN_SEEDS} {who}, and there are {len(accuracy)}"
        return [heading, Text(f"Not computed: a correlation across {who} {why}.")]
    constant = [suite for suite in suites if accuracy[suite].nunique() == 1]
    pearson = accuracy.astype(float).corr()  # NaN beside a constant suite
    pearson = pearson.mask(np.eye(len(suites), dtype=bool), 1.0)
    one = who.removesuffix("s")
    figure = plots.correlation_heatmap(
        pearson, run / "figures" / "correlations.png", f"Pearson r of per-{one} accuracies"
    )
    compact = pearson.map(lambda x: "–" if np.isnan(x) else f"{x:+.2f}")
    compact.index.name = ""
    undefined = (
        f" –: undefined, a suite constant across {who} ({', '.join(constant)}) correlates with "
        "nothing."
    )
    return [
        heading,
        Text(
            f"Pearson r of per-{one} accuracies for every pair of suites."
            + (f" {more}" if more else "")
            + (undefined if constant else "")
        ),
        Figure(figure.relative_to(run), f"Pearson r between suites, across {who}."),
        Table(compact.reset_index()),
    ]
