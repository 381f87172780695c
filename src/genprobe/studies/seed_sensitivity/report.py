"""The report of a seed sweep: what it says (tables, figures, text), from result files only.

Statistics go to `stats.json`, figures to `figures/`, and the blocks to `analysis.render`,
which writes `report.md` and `report.html`.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.analysis import plots
from genprobe.analysis.render import Block, Figure, Heading, Table, Text
from genprobe.analysis.render import write_report as render
from genprobe.analysis.stats import Correlation, Summary, correlate, summarize
from genprobe.runs.atomic import write_json
from genprobe.runs.rundir import read_config
from genprobe.studies.seed_sensitivity.results import (
    accuracy_table,
    read_predictions,
    read_training,
)

TITLE = "Seed sensitivity of generalization"
SCATTER_PAIRS = (("repeat", "long"), ("short", "long"))


def write_report(run: str | Path) -> tuple[Path, Path]:
    """Compute statistics, draw figures, write `stats.json`, `report.md` and `report.html`."""
    run = Path(run)
    accuracy = accuracy_table(read_predictions(run))
    summaries = suite_summaries(accuracy)
    correlations = [
        correlate(a, accuracy[a].to_numpy(), b, accuracy[b].to_numpy())
        for a, b in itertools.combinations(accuracy.columns, 2)
    ]
    write_json(
        run / "stats.json",
        {
            "summary": {suite: s.to_dict() for suite, s in summaries.items()},
            "correlations": [c.to_dict() for c in correlations],
        },
    )
    stored = read_config(run)
    blocks = [
        _introduction(stored, len(accuracy)),
        Heading("Accuracy across seeds (%)"),
        Text(
            "Mean, sample standard deviation, extremes, median, interquartile mean, and a 95 % "
            "percentile-bootstrap interval of the mean over seeds (cf. Table 3)."
        ),
        _summary_table(summaries),
        Heading("Accuracy per seed (%)"),
        Text(
            "The highest and lowest value of each suite in bold (cf. Table 4); `validation`: the "
            "best validation accuracy, kept by early stopping after `epochs` epochs."
        ),
        _per_seed_table(accuracy, read_training(run)),
        Heading("Correlation between suites across seeds"),
        Text(
            "Pearson and Spearman correlation of per-seed accuracies, with n and 95 % bootstrap "
            "intervals over seeds. Weber et al. report Pearson −0.71 for Repeat vs Long. "
            "NaN: a suite is constant across seeds."
        ),
        _correlation_table(correlations),
        Heading("Figures"),
        *_figures(run, accuracy),
    ]
    return render(run, TITLE, blocks)


def suite_summaries(accuracy: pd.DataFrame) -> dict[str, Summary]:
    """Per suite, the summary across seeds of `accuracy_table`'s column."""
    return {suite: summarize(accuracy[suite].to_numpy()) for suite in accuracy.columns}


def _introduction(stored: dict[str, Any], seeds: int) -> Text:
    config, train = stored["config"], stored["config"]["train"]
    return Text(
        f"{seeds} seeds of one LSTM seq2seq with bilinear attention "
        f"(embedding {config['emb']}, hidden {config['hidden']}, dropout {config['dropout']}, "
        f"SGD lr {train['lr']}, batch {train['batch_size']}, "
        f"gradient norm {train['max_grad_norm']}), "
        f"trained on {config['train_size']:,} symbol-rewriting examples with early stopping on "
        f"{config['validation_size']:,} validation examples. Accuracy = share of outputs that "
        f"satisfy the validity rule. Config hash `{stored['hash']}`, "
        f"data seed {config['data_seed']}."
    )


def _figures(run: Path, accuracy: pd.DataFrame) -> list[Block]:
    suites = plots.suite_distributions(accuracy, run / "figures" / "suites.png")
    figures: list[Block] = [
        Figure(
            suites.relative_to(run),
            "Accuracy per suite; one dot per seed (cf. Weber et al. 2018, Figure 1).",
        )
    ]
    for x, y in SCATTER_PAIRS:
        if x in accuracy and y in accuracy:
            path = plots.suite_scatter(accuracy, x, y, run / "figures" / f"scatter_{x}_{y}.png")
            figures.append(Figure(path.relative_to(run), f"{y} against {x}, one dot per seed."))
    return figures


def _pct(x: float) -> str:
    return "nan" if np.isnan(x) else f"{100 * x:.2f}"


def _summary_table(summaries: dict[str, Summary]) -> Table:
    rows = {
        "mean": "mean",
        "std": "std",
        "min": "min",
        "max": "max",
        "median": "median",
        "IQM": "iqm",
    }
    frame = pd.DataFrame(
        {
            suite: [_pct(getattr(s, key)) for key in rows.values()]
            + [f"[{_pct(s.ci_low)}, {_pct(s.ci_high)}]"]
            for suite, s in summaries.items()
        },
        index=[*rows, "95% CI of mean"],
    )
    frame.index.name = ""
    return Table(frame.reset_index())


def _per_seed_table(accuracy: pd.DataFrame, training: dict[str, Any]) -> Table:
    frame = accuracy.map(_pct).reset_index()
    frame["seed"] = frame["seed"].astype(str)
    if training:
        frame["validation"] = [_pct(training[s]["best_accuracy"]) for s in frame["seed"]]
        frame["epochs"] = [str(training[s]["epochs"]) for s in frame["seed"]]
    bold = set()
    for suite in accuracy.columns:
        values = accuracy[suite].to_numpy()
        for target in (values.max(), values.min()):
            bold.update((int(i), suite) for i in np.flatnonzero(values == target))
    return Table(frame, bold)


def _correlation_table(correlations: list[Correlation]) -> Table:
    def fmt(x: float) -> str:
        return "nan" if np.isnan(x) else f"{x:+.2f}"

    frame = pd.DataFrame(
        [
            {
                "suites": f"{c.a} vs {c.b}",
                "n": str(c.n),
                "Pearson r": fmt(c.pearson),
                "95% CI (Pearson)": f"[{fmt(c.pearson_ci[0])}, {fmt(c.pearson_ci[1])}]",
                "Spearman ρ": fmt(c.spearman),
                "95% CI (Spearman)": f"[{fmt(c.spearman_ci[0])}, {fmt(c.spearman_ci[1])}]",
            }
            for c in correlations
        ]
    )
    return Table(frame)
