"""The report of a seed sweep: what it says (tables, figures, text), from result files only.

Statistics go to `stats.json`, figures to `figures/`, and the blocks to `analysis.render`,
which writes `report.md` and `report.html`.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Sequence
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
from genprobe.studies.seed_sensitivity import paper
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.paper import differences, is_paper_task
from genprobe.studies.seed_sensitivity.results import (
    accuracy_table,
    read_predictions,
    read_training,
)

TITLE = "Seed sensitivity of generalization"
SCATTER_PAIRS = (("repeat", "long"), ("short", "long"))
CALLED_OUT = (("repeat", "long"), ("short", "long"))  # the pairs the paper discusses
STALL_THRESHOLD = 0.95  # a seed whose best validation accuracy is below this stopped learning


def write_report(run: str | Path) -> tuple[Path, Path]:
    """Compute statistics, draw figures, write `stats.json`, `report.md` and `report.html`."""
    run = Path(run)
    stored = read_config(run)
    config = SweepConfig.from_dict(stored["config"])
    accuracy = accuracy_table(read_predictions(run))
    training = read_training(run)
    stalled = stalled_seeds(training)
    summaries = suite_summaries(accuracy)
    healthy = accuracy.drop(index=[int(seed) for seed in stalled], errors="ignore")
    correlations = [
        correlate(a, accuracy[a].to_numpy(), b, accuracy[b].to_numpy())
        for a, b in itertools.combinations(accuracy.columns, 2)
    ]
    write_json(
        run / "stats.json",
        {
            "summary": {suite: s.to_dict() for suite, s in summaries.items()},
            "stalled_seeds": stalled,
            "summary_without_stalled": {
                suite: s.to_dict() for suite, s in suite_summaries(healthy).items()
            }
            if stalled and len(healthy) > 0
            else None,
            "correlations": [c.to_dict() for c in correlations],
        },
    )
    blocks = [
        _introduction(stored, config, len(accuracy)),
        Heading("Accuracy across seeds (%)"),
        Text(
            "Mean, sample standard deviation, extremes, median, interquartile mean, and a 95 % "
            "percentile-bootstrap interval of the mean over seeds (cf. Table 3)."
        ),
        _summary_table(summaries),
        *(_paper_blocks(config, summaries, correlations) if is_paper_task(config) else []),
        *_stalled_blocks(stalled, training, healthy),
        Heading("Accuracy per seed (%)"),
        Text(
            "The highest and lowest value of each suite in bold (cf. Table 4); `validation`: the "
            "best validation accuracy, kept by early stopping after `epochs` epochs; `stalled`: "
            f"stopped below {100 * STALL_THRESHOLD:.0f} % validation accuracy."
        ),
        _per_seed_table(accuracy, training, stalled),
        *_correlation_blocks(run, accuracy.columns, correlations),
        Heading("Learning curves"),
        *_learning_curves(run, training, stalled),
        Heading("Figures"),
        *_figures(run, accuracy),
    ]
    write_tensorboard(run, training)
    return render(run, TITLE, blocks)


def stalled_seeds(training: dict[str, Any]) -> list[str]:
    """Seeds (as strings, in run order) whose best validation accuracy is below the threshold."""
    return [seed for seed, t in training.items() if t["best_accuracy"] < STALL_THRESHOLD]


def write_tensorboard(run: Path, training: dict[str, Any]) -> Path | None:
    """Validation accuracy per epoch as TensorBoard scalars (`validation/seed=N`) in
    `run/tensorboard`, if the optional `tensorboard` package is installed; else None."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    target = run / "tensorboard"
    with tempfile.TemporaryDirectory(dir=run, prefix=".tensorboard-") as tmp:
        writer = SummaryWriter(tmp)
        for seed, t in training.items():
            for epoch, value in enumerate(t["validation"], start=1):
                writer.add_scalar(f"validation/seed={seed}", value, epoch)
        writer.close()
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    return target


def suite_summaries(accuracy: pd.DataFrame) -> dict[str, Summary]:
    """Per suite, the summary across seeds of `accuracy_table`'s column."""
    return {suite: summarize(accuracy[suite].to_numpy()) for suite in accuracy.columns}


def _introduction(stored: dict[str, Any], config: SweepConfig, seeds: int) -> Text:
    train = config.train
    model = config.model_config()
    attention = "no attention" if model.attention == "none" else f"{model.attention} attention"
    extras = [
        "input feeding" if model.input_feeding else "",
        "" if model.attention_layer else "no tanh attentional layer",
    ]
    architecture = ", ".join(e for e in [attention, *extras] if e)
    rule = (
        "the paper's rule taken literally: a seed stops at its first epoch without improvement"
        if train.patience == 1
        else f"a seed stops after {train.patience} epochs without improvement"
    )
    if train.min_delta:
        rule += f" of more than {100 * train.min_delta:g} points"
    differs = differences(config)
    return Text(
        f"{seeds} seeds of one {model.cell.upper()} seq2seq with {architecture} "
        f"(embedding {model.emb}, hidden {model.hidden}, dropout {model.dropout}, "
        f"SGD lr {train.lr}, batch {train.batch_size}, gradient norm {train.max_grad_norm}), "
        f"trained on {config.train_size:,} symbol-rewriting examples with early stopping on "
        f"{config.validation_size:,} validation examples ({rule}; at most {train.max_epochs} "
        f"epochs; it keeps its best epoch). Accuracy = share of outputs that satisfy the "
        f"validity rule. "
        + (f"Differs from the paper's Table 1 in: {'; '.join(differs)}. " if differs else "")
        + f"Config hash `{stored['hash']}`, data seed {config.data_seed}."
    )


def _paper_blocks(
    config: SweepConfig, summaries: dict[str, Summary], correlations: list[Correlation]
) -> list[Block]:
    rows = []
    for label, source in (("ours", None), ("Weber et al. 2018", paper.TABLE_3)):
        means, ranges = {"": f"{label}, mean ± std"}, {"": f"{label}, min – max"}
        for suite in paper.TABLE_3:
            if source is None:
                s = summaries.get(suite)
                values = None if s is None else [100 * v for v in (s.mean, s.std, s.min, s.max)]
            else:
                values = list(source[suite])
            means[suite] = "" if values is None else f"{values[0]:.2f} ± {values[1]:.2f}"
            ranges[suite] = "" if values is None else f"{values[2]:.2f} – {values[3]:.2f}"
        rows += [means, ranges]
    ours = next((c for c in correlations if (c.a, c.b) == ("repeat", "long")), None)
    pearson = "" if ours is None else f" Repeat–Long Pearson r: ours {_signed(ours.pearson)}, "
    return [
        Heading("Beside the paper (Table 3)"),
        Text(
            f"Our {summaries['standard'].n if 'standard' in summaries else ''} seeds beside the "
            f"paper's {paper.SEEDS} (their numbers, from their Table 3; the authors' test files "
            f"differ from our generated suites).{pearson}"
            + (f"the paper's {paper.REPEAT_LONG_PEARSON:+.2f}." if pearson else "")
        ),
        Table(pd.DataFrame(rows)),
    ]


def _stalled_blocks(
    stalled: list[str], training: dict[str, Any], healthy: pd.DataFrame
) -> list[Block]:
    if not stalled:
        return []
    listed = ", ".join(
        f"{seed} ({100 * training[seed]['best_accuracy']:.2f} % after "
        f"{training[seed]['epochs']} epoch{'s' * (training[seed]['epochs'] != 1)})"
        for seed in stalled
    )
    blocks: list[Block] = [
        Heading(f"Seeds that stopped below {100 * STALL_THRESHOLD:.0f} % validation accuracy"),
        Text(
            f"{len(stalled)} seed{'s' * (len(stalled) > 1)}: {listed}. Early stopping ended "
            "them before they learned the training distribution, so their test accuracies say "
            "little about generalization. The statistics without them:"
        ),
    ]
    if len(healthy) > 0:
        blocks.append(_summary_table(suite_summaries(healthy)))
    return blocks


def _correlation_blocks(
    run: Path, suites: Sequence[str], correlations: list[Correlation]
) -> list[Block]:
    pearson = pd.DataFrame(np.eye(len(suites)), index=list(suites), columns=list(suites))
    for c in correlations:
        pearson.loc[c.a, c.b] = pearson.loc[c.b, c.a] = c.pearson
    figure = plots.correlation_heatmap(
        pearson, run / "figures" / "correlations.png", "Pearson r of per-seed accuracies"
    )
    compact = pearson.map(lambda x: "nan" if np.isnan(x) else f"{x:+.2f}")
    compact.index.name = ""
    called_out = [c for c in correlations if (c.a, c.b) in CALLED_OUT]
    return [
        Heading("Correlation between suites across seeds"),
        Text(
            "Pearson r of per-seed accuracies for every pair of suites (`stats.json` has every "
            "pair with Spearman ρ, p-values and bootstrap intervals). NaN: a suite is constant "
            "across seeds."
        ),
        Figure(figure.relative_to(run), "Pearson r between suites, across seeds."),
        Table(compact.reset_index()),
        Text(
            "The pairs the paper discusses, with n and 95 % bootstrap intervals over seeds "
            f"(Weber et al. report Pearson {paper.REPEAT_LONG_PEARSON:+.2f} for Repeat vs Long):"
        ),
        _correlation_table(called_out),
    ]


def _learning_curves(run: Path, training: dict[str, Any], stalled: list[str]) -> list[Block]:
    if not training:
        return [Text("No training summaries recorded.")]
    path = plots.learning_curves(
        {seed: t["validation"] for seed, t in training.items()},
        {seed: t["best_epoch"] for seed, t in training.items()},
        set(stalled),
        run / "figures" / "learning_curves.png",
    )
    return [
        Figure(
            path.relative_to(run),
            "Validation accuracy per epoch, one line per seed; dot: the epoch kept, x: the "
            f"epoch it stopped; red: stopped below {100 * STALL_THRESHOLD:.0f} %.",
        )
    ]


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


def _per_seed_table(accuracy: pd.DataFrame, training: dict[str, Any], stalled: list[str]) -> Table:
    frame = accuracy.map(_pct).reset_index()
    frame["seed"] = frame["seed"].astype(str)
    if training:
        frame["validation"] = [_pct(training[s]["best_accuracy"]) for s in frame["seed"]]
        frame["epochs"] = [str(training[s]["epochs"]) for s in frame["seed"]]
        frame["stalled"] = ["yes" if s in stalled else "" for s in frame["seed"]]
    bold = set()
    for suite in accuracy.columns:
        values = accuracy[suite].to_numpy()
        for target in (values.max(), values.min()):
            bold.update((int(i), suite) for i in np.flatnonzero(values == target))
    return Table(frame, bold)


def _signed(x: float) -> str:
    return "nan" if np.isnan(x) else f"{x:+.2f}"


def _correlation_table(correlations: list[Correlation]) -> Table:
    frame = pd.DataFrame(
        [
            {
                "suites": f"{c.a} vs {c.b}",
                "n": str(c.n),
                "Pearson r": _signed(c.pearson),
                "95% CI (Pearson)": f"[{_signed(c.pearson_ci[0])}, {_signed(c.pearson_ci[1])}]",
                "Spearman ρ": _signed(c.spearman),
                "95% CI (Spearman)": f"[{_signed(c.spearman_ci[0])}, {_signed(c.spearman_ci[1])}]",
            }
            for c in correlations
        ]
    )
    return Table(frame)
