"""The comparison's section on the same items (`analysis.paired`): every run's members answered
the reference's inputs, so the items pair, and the seeds too where the runs share them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from genprobe.analysis.judged import ANSWER
from genprobe.analysis.paired import adjusted, equivalence, mcnemar, multi_bootstrap
from genprobe.analysis.rates import correct
from genprobe.analysis.render import Block, Heading, Table, Text, interval
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.results import read_training

if TYPE_CHECKING:
    from genprobe.studies.seed_sensitivity.compare import Run

MARGIN = 0.01  # in distribution, two runs within one point of each other are equally good
LEVEL = 0.05


def rightness(predictions: pd.DataFrame, suite: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A suite's seeds (S,), inputs by index (M,) and (S, M) whether each answer is right."""
    rows = predictions[(predictions["role"] == ANSWER) & (predictions["suite"] == suite)]
    table = rows.assign(right=correct(rows)).pivot(index="seed", columns="index", values="right")
    inputs = rows.drop_duplicates("index").set_index("index")["input"].reindex(table.columns)
    return table.index.to_numpy(), inputs.to_numpy(), table.fillna(False).to_numpy(dtype=bool)


def paired_blocks(runs: Sequence[Run], suites: Sequence[str]) -> tuple[list[Block], list[dict]]:
    """The section's blocks and its rows for compare.json: each run against the first, per
    suite whose items they share."""
    if any(run.predictions is None for run in runs):
        return [], []
    reference, rows, differ = runs[0], [], []
    for run in runs[1:]:
        for suite in suites:
            seeds_r, inputs_r, right_r = rightness(reference.predictions, suite)
            seeds, inputs, right = rightness(run.predictions, suite)
            if len(inputs) != len(inputs_r) or (inputs != inputs_r).any():
                differ.append(f"{run.name} on {suite}")
                continue
            d = multi_bootstrap(right, right_r, seeds, seeds_r)
            pairs = mcnemar(right, right_r, seeds, seeds_r)
            significant = pairs[pairs["p_value"] < LEVEL]
            rows.append({
                "run": run.name, "suite": suite, "items": len(inputs),
                "difference": d.difference, "low": d.low, "high": d.high,
                "p_better": d.p_better, "p_value": d.p_value, "paired_seeds": d.paired_seeds,
                "reason": d.reason, "pairs": len(pairs),
                "favour_run": int((significant["favours"] == "A").sum()),
                "favour_reference": int((significant["favours"] == "B").sum()),
            })  # fmt: skip
    if not rows:
        return [Heading("On the same items"), Text(_differ(differ))] if differ else [], []
    table = pd.DataFrame(rows)
    table = pd.concat([table, adjusted(table["p_value"].to_numpy()).drop(columns="p_value")],
                      axis=1)  # fmt: skip
    blocks: list[Block] = [
        Heading("On the same items"),
        Text(
            "Each run's members answered the reference's inputs, so the comparison pairs "
            "them. The difference of mean accuracy (run − reference, points) with its 95 % "
            "interval from the multi-bootstrap (Sellam et al. 2022: each of 2,000 resamples "
            "draws the seeds, the same draw for both runs where they share their seeds, and "
            "the items, always the same draw for both), P(run ahead) over the resamples, its "
            "two-sided p-value and that p adjusted over every row: Holm's (family-wise) and "
            "Benjamini-Hochberg's (false discovery rate). McNemar: for each matched pair of "
            "members (by seed; the k-th of each where the runs share none), the exact test of "
            f"the items only one of them got right; the pairs significant at {LEVEL:g} that "
            "favour each side."
        ),
        _table(table),
        *_no_interval(table),
        *([Text(_differ(differ))] if differ else []),
        *_in_distribution(runs),
    ]
    return blocks, table.replace({np.nan: None}).to_dict("records")


def _table(table: pd.DataFrame) -> Table:
    favour = zip(table["favour_run"], table["favour_reference"], table["pairs"], strict=True)
    bounds = zip(100 * table["low"], 100 * table["high"], strict=True)
    return Table(
        pd.DataFrame(
            {
                "run": table["run"],
                "suite": table["suite"],
                "items": table["items"].map("{:,}".format),
                "seeds": np.where(table["paired_seeds"], "paired", "unpaired"),
                "difference": (100 * table["difference"]).map("{:+.2f}".format),
                "95% CI": [interval(lo, hi, "{:+.2f}".format) for lo, hi in bounds],
                "P(run ahead)": table["p_better"].map(_number),
                "p": table["p_value"].map(_number),
                "Holm": table["holm"].map(_number),
                "BH": table["benjamini_hochberg"].map(_number),
                "McNemar: for run / for reference": [f"{a} / {b} of {n}" for a, b, n in favour],
            }
        )
    )


def _no_interval(table: pd.DataFrame) -> list[Block]:
    """Why an interval is missing (–), one line per run and reason."""
    missing = table[table["reason"].notna()].groupby(["run", "reason"], sort=False)["suite"]
    return [
        Text(f"No interval (–) for {run} on {', '.join(suites)}: {reason}.")
        for (run, reason), suites in missing
    ]


def _in_distribution(runs: Sequence[Run]) -> list[Block]:
    """TOST that each run's members are as good in distribution (their validation accuracy)
    as the reference's, within `MARGIN`: a difference out of distribution is then not one of
    in-distribution skill."""
    if not all(isinstance(run.config, SweepConfig) for run in runs):
        return []
    validation = [_validation(run) for run in runs]
    rows = []
    for run, values in zip(runs[1:], validation[1:], strict=True):
        test = equivalence(values, validation[0], MARGIN)
        rows.append({
            "run": run.name,
            "validation, run − reference": f"{100 * test.difference:+.2f}",
            "TOST p": _number(test.p_value),
            f"equivalent within {100 * MARGIN:g} point": "yes" if test.equivalent else "no",
            "note": test.reason or "",
        })  # fmt: skip
    return [
        Text(
            "In distribution first: two one-sided tests (TOST, Welch's) that the members' "
            f"validation accuracy is the reference's within ±{100 * MARGIN:g} point. Where it "
            "is not, a difference out of distribution may be one of skill in distribution."
        ),
        Table(pd.DataFrame(rows)),
    ]


def _validation(run: Run) -> np.ndarray:
    records: dict[str, Any] = read_training(run.path)
    return np.array([r["best_accuracy"] for r in records.values()], dtype=np.float64)


def _differ(differ: list[str]) -> str:
    return (
        "Not paired where the items differ (another data seed or suite size): "
        + ", ".join(differ)
        + "."
    )


def _number(x: float | None) -> str:
    return "–" if x is None or np.isnan(x) else f"{x:.3g}"
