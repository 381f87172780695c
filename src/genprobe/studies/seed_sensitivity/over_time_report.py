"""The report blocks of a sweep trained over time (grokking): curves per seed with their IQM,
the distribution of grokking steps with censoring, the memorization-to-grokking delay, the
weight norm, a table per seed; and the blocks comparing runs' median grokking steps. The
numbers are `analysis.grokking`'s, the figures `analysis.grokking_plots`'; figures go to the
directory's `figures/`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis import grokking_plots as plots
from genprobe.analysis.grokking import (
    TRAIN,
    Grokking,
    KaplanMeier,
    compare_grokking,
    grokking,
    iqm_curves,
)
from genprobe.analysis.render import Block, Figure, Heading, Table, Text, interval
from genprobe.analysis.stats import BAND_RESAMPLES, N_RESAMPLES


def over_time_blocks(
    run_dir: Path, curves: pd.DataFrame, budget: int, threshold: float, held_out_role: str
) -> list[Block]:
    """The blocks of one run's grokking section; writes its four figures to
    `run_dir/figures/`.

    Raises:
        ConfigError, RunDirError: as `analysis.grokking.members`.
    """
    result = grokking(curves, budget, held_out_role, threshold)
    # with subsets, `train` is each member's own subset and `train_unseen` the rest
    roles = [r for r in (TRAIN, f"{TRAIN}_unseen", held_out_role) if r in set(curves["role"])]
    figures = Path(run_dir) / "figures"
    bands = iqm_curves(curves, budget, roles)
    paths = [
        plots.accuracy_over_time(curves, bands, roles, threshold, figures / "over_time.png"),
        plots.grokking_cdf({"this run": result.kaplan_meier}, figures / "grokking_steps.png"),
        plots.delay_distribution(result.members, figures / "grokking_delay.png"),
        plots.weight_norm_against_accuracy(curves, held_out_role, figures / "weight_norm.png"),
    ]
    km = result.kaplan_meier
    pct = f"{100 * threshold:g} %"
    shown = [path.relative_to(run_dir) for path in paths]
    return [
        Heading("Grokking over training time"),
        Text(
            f"Every seed trained for {budget:,} steps, evaluated on `{TRAIN}` and "
            f"`{held_out_role}` along the way"
            + (
                f" (with subset seeds, `{TRAIN}` is each seed's own subset of the training "
                f"split and `{TRAIN}_unseen` the rest of it). "
                if len(roles) == 3
                else ". "
            )
            + f"A seed memorized at the first evaluation where "
            f"its training accuracy reached {pct}, and grokked at the first evaluation where "
            f"its {held_out_role} accuracy reached {pct} and stayed there at every later one "
            "(a seed that passes and drops again has not grokked there). A seed that did not "
            f"grok within the {budget:,} steps is censored at the budget: its own outcome, "
            "counted in every share, never dropped."
        ),
        _summary_table(result),
        Text(_summary_notes(result)),
        Figure(
            shown[0],
            f"Accuracy per seed (thin lines) over training steps (symmetric-log axis: 0, then "
            f"logarithmic), the interquartile mean (IQM) over seeds and its 95 % percentile-"
            f"bootstrap band ({BAND_RESAMPLES:,} resamples of the seeds); dotted: {pct}.",
        ),
        Figure(
            shown[1],
            "Share of seeds grokked by each step: Kaplan-Meier estimate with its 95 % "
            "(log-log) band; + marks the seeds censored at the budget; dotted: half the seeds"
            + ("." if np.isnan(km.median) else f", reached at step {km.median:,.0f}."),
        ),
        Figure(shown[2], "Steps from memorization to grokking over the seeds that grokked."),
        Figure(
            shown[3],
            f"{held_out_role} accuracy against the weight norm, one line per seed through its "
            "evaluations, each dot coloured by its step.",
        ),
        Heading("Grokking per seed", level=3),
        Text(
            "Steps of memorization and grokking (– where it did not happen within the budget) "
            "and the delay between them."
        ),
        per_seed_table(result.members),
    ]


def _summary_table(result: Grokking) -> Table:
    km, table = result.kaplan_meier, result.members
    share = km.share
    return Table(
        pd.DataFrame(
            [
                {
                    "seeds": str(share.n),
                    "memorized": str(int(table["memorized_step"].notna().sum())),
                    "grokked": f"{share.k} ({100 * share.share:.0f} %)",
                    "95% CI of share": interval(share.ci_low, share.ci_high, _percent),
                    "median grokking step": _step(km.median),
                    "median delay": _step(result.median_delay),
                }
            ]
        )
    )


def _summary_notes(result: Grokking) -> str:
    km = result.kaplan_meier
    notes = [
        f"Share grokked within the budget with its 95 % Wilson interval; median grokking step: "
        f"the first step by which half of all {km.share.n} seeds grokked (the Kaplan-Meier "
        "median); median delay over the seeds that grokked."
    ]
    notes += [f"No median grokking step (–): {km.median_reason}."] if km.median_reason else []
    notes += [f"No median delay (–): {result.delay_reason}."] if result.delay_reason else []
    return " ".join(notes)


def per_seed_table(members: pd.DataFrame) -> Table:
    """Seed, memorized, grokked, delay (steps; – where missing) and outcome, as strings."""
    frame = pd.DataFrame(
        {
            "seed": members["seed"].astype(str),
            "memorized": members["memorized_step"].map(_step),
            "grokked": members["grokked_step"].map(_step),
            "delay": members["delay"].map(_step),
            "outcome": members["outcome"],
        }
    )
    return Table(frame)


def compare_blocks(
    out: Path,
    runs: Sequence[tuple[str, pd.DataFrame, int]],
    threshold: float,
    held_out_role: str,
    seed: int = 0,
) -> list[Block]:
    """Runs trained over time against the first (the reference): their Kaplan-Meier curves
    in one figure (`out/figures/grokking_steps.png`), and per run the difference of its median
    grokking step and of its share that grokked from the reference's, with 95 % bootstrap
    intervals (seeds resampled within each run). `runs`: (name, curves, budget) each.

    Raises:
        ConfigError, RunDirError: as `analysis.grokking.members`, for each run.
    """
    results = {name: grokking(c, budget, held_out_role, threshold) for name, c, budget in runs}
    estimates: dict[str, KaplanMeier] = {n: r.kaplan_meier for n, r in results.items()}
    figure = plots.grokking_cdf(estimates, Path(out) / "figures" / "grokking_steps.png")
    (reference, first), *others = results.items()
    rows, reasons = [], []
    for name, result in others:
        c = compare_grokking(first.members, result.members, seed)
        m, s = c.median, c.share
        rows.append(
            {
                "run": name,
                "median step": _step(m.median_b),
                f"median step ({reference})": _step(m.median_a),
                "difference": _step(m.difference, signed=True),
                "95% CI": interval(m.ci_low, m.ci_high, lambda v: _step(v, signed=True)),
                "grokked": _share(result.kaplan_meier),
                f"grokked ({reference})": _share(first.kaplan_meier),
                "difference (points)": f"{100 * s.difference:+.0f}",
                "95% CI (points)": interval(s.ci_low, s.ci_high, lambda v: f"{100 * v:+.0f}"),
                "p (Mann-Whitney)": f"{s.mann_whitney_p:.2g}",
            }
        )
        reasons += [f"{name}: {r}." for r in (m.reason, m.ci_reason, s.ci_reason) if r]
    budgets = {budget for _, _, budget in runs}
    return [
        Heading("Grokking steps side by side"),
        Text(
            f"Per run against {reference}: the median grokking step (the first step by which "
            f"half the seeds kept {held_out_role} accuracy at {100 * threshold:g} % or more) "
            "and the share of seeds that grokked within the budget, each the run minus "
            f"{reference} with a 95 % percentile-bootstrap interval ({N_RESAMPLES:,} "
            "resamples of the seeds within each run); ±∞: in more than 2.5 % of resamples a "
            "median lies beyond the budget."
            + (
                f" The budgets differ ({', '.join(f'{b:,}' for b in sorted(budgets))} steps): "
                "the shares are not over the same time."
                if len(budgets) > 1
                else ""
            )
            + (f" Left out (–): {' '.join(reasons)}" if reasons else "")
        ),
        Table(pd.DataFrame(rows)),
        Figure(
            figure.relative_to(out),
            "Share of seeds grokked by each step, per run (Kaplan-Meier, 95 % band; + the "
            "seeds censored at the budget).",
        ),
    ]


def _step(value: object, signed: bool = False) -> str:
    if value is pd.NA or np.isnan(float(value)):  # type: ignore[arg-type]
        return "–"
    value = float(value)  # type: ignore[arg-type]
    if np.isinf(value):
        return "+∞" if value > 0 else "-∞"
    return f"{value:+,.0f}" if signed else f"{value:,.0f}"


def _share(km: KaplanMeier) -> str:
    return f"{km.share.k} of {km.share.n}"


def _percent(value: float) -> str:
    return f"{100 * value:.0f} %"
