"""The report of a seed sweep: tables and figures as `report.md` and a self-contained `report.html`.

The report is built once as a list of blocks (heading, text, table, figure) and rendered twice,
so the Markdown and the HTML always say the same thing.
"""

from __future__ import annotations

import base64
import html
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis import plots
from genprobe.analysis.stats import correlate, summarize
from genprobe.runs.atomic import write_json, write_text
from genprobe.runs.rundir import read_config
from genprobe.studies.seed_sensitivity import read_predictions, read_training

SCATTER_PAIRS = (("repeat", "long"), ("short", "long"))
_CODE = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame  # already formatted as strings
    bold: frozenset[tuple[int, str]] = frozenset()  # (row position, column) cells to emphasize


@dataclass(frozen=True)
class Figure:
    path: Path  # relative to the run directory
    caption: str


Block = Heading | Text | Table | Figure


def write_report(run: str | Path) -> tuple[Path, Path]:
    """Compute statistics, draw figures, write `stats.json`, `report.md` and `report.html`."""
    run = Path(run)
    stored = read_config(run)
    accuracy = accuracy_table(read_predictions(run))
    blocks = _blocks(run, stored, accuracy)
    md, page = run / "report.md", run / "report.html"
    write_text(md, _markdown(blocks))
    write_text(page, _html(blocks, run))
    return md, page


def accuracy_table(predictions: pd.DataFrame) -> pd.DataFrame:
    """One row per seed, one column per suite (the standard suites first), accuracy in [0, 1]."""
    table = predictions.groupby(["seed", "suite"])["valid"].mean().unstack("suite")
    order = ["standard", "repeat", "short", "long"]
    columns = [c for c in order if c in table.columns] + sorted(set(table.columns) - set(order))
    return table[columns]


def _blocks(run: Path, stored: dict, accuracy: pd.DataFrame) -> list[Block]:
    config = stored["config"]
    summaries = {suite: summarize(accuracy[suite].to_numpy()) for suite in accuracy.columns}
    pairs = list(itertools.combinations(accuracy.columns, 2))
    correlations = [
        correlate(a, accuracy[a].to_numpy(), b, accuracy[b].to_numpy()) for a, b in pairs
    ]
    write_json(
        run / "stats.json",
        {
            "summary": {suite: s.to_dict() for suite, s in summaries.items()},
            "correlations": [c.to_dict() for c in correlations],
        },
    )
    figures = [
        Figure(
            plots.suite_distributions(accuracy, run / "figures" / "suites.png").relative_to(run),
            "Accuracy per suite; one dot per seed (cf. Weber et al. 2018, Figure 1).",
        )
    ]
    for x, y in SCATTER_PAIRS:
        if x in accuracy and y in accuracy:
            path = plots.suite_scatter(accuracy, x, y, run / "figures" / f"scatter_{x}_{y}.png")
            figures.append(Figure(path.relative_to(run), f"{y} against {x}, one dot per seed."))

    train = config["train"]
    return [
        Heading("Seed sensitivity of generalization", 1),
        Text(
            f"{len(accuracy)} seeds of one LSTM seq2seq with bilinear attention "
            f"(embedding {config['emb']}, hidden {config['hidden']}, dropout {config['dropout']}, "
            f"SGD lr {train['lr']}, batch {train['batch_size']}, "
            f"gradient norm {train['max_grad_norm']}), "
            f"trained on {config['train_size']:,} symbol-rewriting examples with early stopping on "
            f"{config['validation_size']:,} validation examples. Accuracy = share of outputs that "
            f"satisfy the validity rule. Config hash `{stored['hash']}`, "
            f"data seed {config['data_seed']}."
        ),
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
        *figures,
    ]


def _pct(x: float) -> str:
    return "nan" if np.isnan(x) else f"{100 * x:.2f}"


def _summary_table(summaries: dict) -> Table:
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


def _per_seed_table(accuracy: pd.DataFrame, training: dict) -> Table:
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
    return Table(frame, frozenset(bold))


def _correlation_table(correlations: list) -> Table:
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


# -- rendering ----------------------------------------------------------------------------


def _markdown(blocks: list[Block]) -> str:
    out = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Text):
            out.append(block.text)
        elif isinstance(block, Table):
            out.append(_markdown_table(block))
        else:
            out.append(f"![{block.caption}]({block.path.as_posix()})\n\n*{block.caption}*")
    return "\n\n".join(out) + "\n"


def _markdown_table(table: Table) -> str:
    columns = list(table.frame.columns)
    lines = ["| " + " | ".join(map(str, columns)) + " |", "|" + "---|" * len(columns)]
    for i, row in enumerate(table.frame.itertuples(index=False)):
        cells = [
            f"**{v}**" if (i, c) in table.bold else str(v)
            for c, v in zip(columns, row, strict=True)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _html(blocks: list[Block], run: Path) -> str:
    body = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Text):
            text = _CODE.sub(r"<code>\1</code>", html.escape(block.text))
            body.append(f"<p>{text}</p>")
        elif isinstance(block, Table):
            body.append(_html_table(block))
        else:
            data = base64.b64encode((run / block.path).read_bytes()).decode()
            caption = html.escape(block.caption)
            body.append(
                f'<figure><img alt="{caption}" src="data:image/png;base64,{data}">'
                f"<figcaption>{caption}</figcaption></figure>"
            )
    return _PAGE.format(body="\n".join(body))


def _html_table(table: Table) -> str:
    columns = list(table.frame.columns)
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    rows = []
    for i, row in enumerate(table.frame.itertuples(index=False)):
        cells = "".join(
            f"<td><b>{html.escape(str(v))}</b></td>"
            if (i, c) in table.bold
            else f"<td>{html.escape(str(v))}</td>"
            for c, v in zip(columns, row, strict=True)
        )
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>genprobe report</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }}
table {{ border-collapse: collapse; margin: 1rem 0; font-variant-numeric: tabular-nums; }}
th, td {{ border: 1px solid #ccc; padding: .25rem .6rem; text-align: right; }}
th {{ background: #f3f3f3; }}
figure {{ margin: 1.5rem 0; }} img {{ max-width: 100%; }}
</style></head><body>
{body}
</body></html>
"""
