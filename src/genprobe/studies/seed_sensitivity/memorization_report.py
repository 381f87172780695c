"""The report's section on a sweep with subset seeds: what each member memorized, per example
(`memorization.py` makes the tables)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis.memorization import MIN_MEMBERS
from genprobe.analysis.plots import example_histograms
from genprobe.analysis.render import Block, Figure, Heading, Table, Text, clip, interval
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.memorization import (
    FEATURE,
    NEAR,
    TRAIN_SUITE,
    memorization_tables,
)

SHOWN = 10  # the most memorized training examples shown
LEAST = 3  # the least consistent inputs shown per suite
WIDTH = 60  # characters of an input or target shown
MAX_LENGTHS = 20  # rows of the consistency-by-length table


def memorization_blocks(run: Path, config: SweepConfig, judged: pd.DataFrame) -> list[Block]:
    tables = memorization_tables(run, judged)
    memorized, consistent = tables["memorization"], tables["consistency"]
    members = len(config.seeds)
    share = config.train.subset_fraction
    figure = example_histograms(
        {
            "memorization (training target)": (memorized["memorization"].to_numpy(), -1),
            **{
                f"consistency: {suite}": (group["consistency"].to_numpy(), 0)
                for suite, group in consistent.groupby("suite", sort=False)
            },
        },
        run / "figures" / "memorization.png",
    )
    return [
        Heading("What each member memorized, per example"),
        Text(
            f"Each of the {members} members trained on its own random {_pct(share, 0)} % of the "
            f"{len(memorized):,} training examples (`--subsets`) and answered every training "
            "and suite example. A training example's *memorization* is how often the members "
            "that trained on it reproduce its training target, less how often those that did "
            "not (Feldman & Zhang 2020); *by rule* counts answers the task's verifier accepts "
            "instead, which differ where a training target is not what the rule makes of its "
            "input. An example's *consistency* is how often the members that never trained on "
            "it answer it right (Jiang et al. 2021, at this fraction). A group of fewer than "
            f"{MIN_MEMBERS} members leaves an estimate undetermined; intervals are 95 % "
            "(Wilson; Newcombe's for a difference)."
        ),
        _training_table(memorized),
        _consistency_table(consistent),
        Heading("The most memorized training examples", level=3),
        _most_memorized(memorized),
        Heading("The least consistent inputs", level=3),
        _least_consistent(consistent),
        Heading("Consistency by length (%)", level=3),
        _by_length(consistent),
        *_by_feature(consistent),
        Heading("The largest influences", level=3),
        Text(
            "For each suite input, its nearest training input (of all, by edit distance over "
            "tokens unless the task declares its own distance) and that training example's "
            "influence on it: accuracy on the input among "
            "the members that trained on the training example, less among those that did not "
            "(Feldman & Zhang's estimator). A large influence is an input solved by having seen "
            "its neighbour rather than by the rule."
        ),
        _largest_influences(tables["influence"]),
        Heading("Copying the nearest training example", level=3),
        Text(
            "For each wrong answer to a suite's input: the training example nearest to the "
            "input among those the member trained on (by the same distance), and "
            "whether the answer is that example's target (*copied*) or within "
            f"{NEAR} edit of it; *chance*: the same against the target of a training example "
            "the member trained on, drawn at random. Copying well above chance is a model "
            "answering with the closest case it saw rather than by a rule."
        ),
        _copy_table(tables["copies"]),
        *_structure_blocks(tables.get("structures")),
        Figure(
            figure.relative_to(run),
            "Memorization of each training example, and consistency of each example per suite",
        ),
    ]


def _training_table(memorized: pd.DataFrame) -> Table:
    rows = []
    for what, prefix in (("training target", ""), ("by rule", "rule_")):
        known = memorized[memorized[f"{prefix}determined"]]
        rows.append({
            "reproduced": what,
            "examples": f"{len(memorized):,}",
            "determined": f"{len(known):,}",
            "trained on it (%)": _mean(known[f"{prefix}trained_rate"]),
            "not trained on it (%)": _mean(known[f"{prefix}untrained_rate"]),
            "memorization (mean, points)": _mean(known[f"{prefix}memorization"]),
            "memorized (interval above 0)": _count(known[f"{prefix}memorization_low"] > 0),
        })  # fmt: skip
    return Table(pd.DataFrame(rows))


def _consistency_table(consistent: pd.DataFrame) -> Table:
    rows = []
    for suite, group in consistent.groupby("suite", sort=False):
        known = group[group["determined"]]
        rows.append({
            "suite": suite,
            "examples": f"{len(group):,}",
            "members counted": _members(group["members"]),
            "consistency (mean %)": _mean(known["consistency"]),
            "no member right": _count(known["consistency"] == 0),
            "every member right": _count(known["consistency"] == 1),
        })  # fmt: skip
    return Table(pd.DataFrame(rows))


def _most_memorized(memorized: pd.DataFrame) -> Table | Text:
    known = memorized[memorized["determined"]]
    if known.empty:
        return Text(f"None determined: fewer than {MIN_MEMBERS} members in a group everywhere.")
    top = known.sort_values(["memorization", "index"], ascending=[False, True]).head(SHOWN)
    return Table(pd.DataFrame({
        "example": top["index"].astype(str),
        "input": [clip(text, WIDTH) for text in top["input"]],
        "target": [clip(text, WIDTH) for text in top["target"]],
        "trained on it (%)": top["trained_rate"].map(lambda x: _pct(x, 0)),
        "not (%)": top["untrained_rate"].map(lambda x: _pct(x, 0)),
        "memorization (points)": _with_intervals(top, "memorization"),
    }))  # fmt: skip


def _least_consistent(consistent: pd.DataFrame) -> Table:
    shown = [
        group[group["determined"]].sort_values(["consistency", "index"]).head(LEAST)
        for suite, group in consistent.groupby("suite", sort=False)
        if suite != TRAIN_SUITE
    ]
    rows = pd.concat(shown) if shown else consistent.head(0)
    return Table(pd.DataFrame({
        "suite": rows["suite"],
        "example": rows["index"].astype(str),
        "input": [clip(text, WIDTH) for text in rows["input"]],
        "consistency (%)": _with_intervals(rows, "consistency"),
    }))  # fmt: skip


def _by_length(consistent: pd.DataFrame) -> Table:
    """Mean consistency per suite (columns) and input length (rows), the examples counted in
    brackets; lengths beyond `MAX_LENGTHS` rows grouped into equal bins."""
    known = consistent[consistent["determined"]]
    lengths = known["length"]
    if lengths.nunique() > MAX_LENGTHS:
        lengths = pd.cut(lengths, MAX_LENGTHS, precision=0).astype(str)
    grouped = known.assign(length=lengths).groupby(["length", "suite"], sort=True)["consistency"]
    cells = grouped.agg(lambda v: f"{_pct(v.mean(), 0)} ({len(v)})").unstack("suite")
    order = [s for s in consistent["suite"].unique() if s in cells.columns]
    return Table(cells[order].fillna("").reset_index().astype(str))


def _by_feature(consistent: pd.DataFrame) -> list[Block]:
    """Spearman's ρ of consistency with each of the task's named input features, per suite
    (– where either is constant over the suite's determined examples)."""
    from scipy.stats import spearmanr

    features = [c for c in consistent.columns if c.startswith(FEATURE)]
    if not features:
        return []
    rows = []
    for suite, group in consistent[consistent["determined"]].groupby("suite", sort=False):
        row = {"suite": suite, "examples": f"{len(group):,}"}
        for column in ["length", *features]:
            flat = group[column].nunique() < 2 or group["consistency"].nunique() < 2
            rho = np.nan if flat else spearmanr(group[column], group["consistency"]).statistic
            row[column.removeprefix(FEATURE)] = "–" if np.isnan(rho) else f"{rho:+.2f}"
        rows.append(row)
    return [
        Heading("Consistency against input features", level=3),
        Text(
            "Spearman's ρ of an input's consistency with its length and with each feature the "
            "task names, over each suite's determined inputs (– where either is constant)."
        ),
        Table(pd.DataFrame(rows)),
    ]


def _largest_influences(influence: pd.DataFrame) -> Table | Text:
    known = influence[influence["determined"]] if len(influence) else influence
    if known.empty:
        return Text(f"None determined: fewer than {MIN_MEMBERS} members in a group everywhere.")
    top = known.sort_values(["influence", "suite", "index"], ascending=[False, True, True])
    top = top.head(SHOWN)
    return Table(pd.DataFrame({
        "suite": top["suite"],
        "input": [clip(text, WIDTH) for text in top["input"]],
        "nearest training input": [clip(text, WIDTH) for text in top["nearest_input"]],
        "edits": top["input_distance"].astype(str),
        "influence (points)": _with_intervals(top, "influence"),
    }))  # fmt: skip


def _copy_table(copies: pd.DataFrame) -> Table | Text:
    if copies.empty:
        return Text("No member answered a suite's input wrong.")
    rows = [
        {
            "suite": suite,
            "wrong answers": f"{len(group):,}",
            "input distance (mean)": f"{group['input_distance'].mean():.1f}",
            "copied (%)": _pct(group["copied"].mean()),
            "copied by chance (%)": _pct(group["chance_copied"].mean()),
            f"within {NEAR} edit (%)": _pct(group["near"].mean()),
            "within by chance (%)": _pct(group["chance_near"].mean()),
        }
        for suite, group in copies.groupby("suite", sort=False)
    ]
    return Table(pd.DataFrame(rows))


def _structure_blocks(structures: pd.DataFrame | None) -> list[Block]:
    if structures is None:
        return []
    rows = []
    for suite, group in structures.groupby("suite", sort=False):
        auc = group["auc"].dropna()
        rows.append({
            "suite": suite,
            "inputs with an unseen structure (%)": _pct(
                group["with_unseen"].sum() / max(group["examples"].sum(), 1)
            ),
            "failure with (%)": _pct(group["failure_with"].mean()),
            "failure without (%)": _pct(group["failure_without"].mean()),
            "AUC, median (min-max)": (
                f"{auc.median():.2f} ({auc.min():.2f}-{auc.max():.2f})" if len(auc) else "–"
            ),
            "members with an AUC": f"{len(auc)} of {len(group)}",
        })  # fmt: skip
    return [
        Heading("Unseen local structures", level=3),
        Text(
            "The task names each input's local structures (its small parts, e.g. a primitive "
            "with its modifier). For each member, an input holds an *unseen* structure when "
            "none of the member's training inputs held it (of the training split, only the "
            "examples the member did not train on count). Failure with and without one is the "
            "mean over members; the AUC is, per member, how well the number of unseen "
            "structures ranks its failures above its successes (0.5: chance; Bogin et al. "
            "2022). A member that failed all or none of a suite has no AUC."
        ),
        Table(pd.DataFrame(rows)),
    ]


def _with_intervals(table: pd.DataFrame, name: str) -> list[str]:
    """Column `name` in percent (points) with its interval (`name_low`, `name_high`)."""
    columns = table[[name, f"{name}_low", f"{name}_high"]].itertuples(index=False)
    return [f"{_pct(x, 0)} {interval(lo, hi, lambda v: _pct(v, 0))}" for x, lo, hi in columns]


def _pct(x: float, digits: int = 1) -> str:
    return "–" if np.isnan(x) else f"{100 * x:.{digits}f}"


def _mean(values: pd.Series) -> str:
    return _pct(values.mean()) if len(values) else "–"


def _count(flags: pd.Series) -> str:
    return f"{int(flags.sum()):,} ({_pct(flags.mean(), 0)} %)" if len(flags) else "–"


def _members(counts: pd.Series) -> str:
    low, high = int(counts.min()), int(counts.max())
    return f"{low}" if low == high else f"{low}-{high}"
