"""Several sweeps side by side: which settings move the seed distributions, and how far.

The first run is the reference. Per suite: each run's distribution over seeds (table and
box/strip figure), the difference of its mean from the reference's with a bootstrap interval
over seeds and a Mann-Whitney U test, the probability that a seed of the run beats a seed of
the reference (with its interval); on the same items, the paired comparison
(`paired_report.py`: the multi-bootstrap over seeds and items, McNemar per pair of members,
adjusted p-values, TOST in distribution); and per run the correlations between suites that the
task's paper discusses. When every run is on a task with a paper's numbers (the same ones),
they are printed beside the runs. Everything is read from the runs' result files; the
comparison goes to its own directory (`report.md`, `report.html`, `compare.json`, `figures/`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis import plots
from genprobe.analysis.grokking import THRESHOLD as GROKKING
from genprobe.analysis.paired import performance_profile
from genprobe.analysis.render import Block, Figure, Heading, Table, Text, interval
from genprobe.analysis.render import write_report as render
from genprobe.analysis.stats import (
    compare_groups,
    probability_of_improvement,
    summarize,
)
from genprobe.errors import ConfigError
from genprobe.runs.atomic import write_json
from genprobe.studies.seed_sensitivity.config import SweepConfig, over_time
from genprobe.studies.seed_sensitivity.curves import read_curves
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.studies.seed_sensitivity.over_time_report import compare_blocks
from genprobe.studies.seed_sensitivity.paired_report import paired_blocks
from genprobe.studies.seed_sensitivity.report import model_description, task_description
from genprobe.studies.seed_sensitivity.results import accuracy_by, read_members, read_predictions
from genprobe.studies.seed_sensitivity.summary import correlated
from genprobe.tasks.published import Published
from genprobe.tasks.registry import task_name

TITLE = "Seed distributions side by side"


@dataclass(frozen=True)
class Run:
    name: str
    config: SweepConfig | LanguageModelConfig
    accuracy: pd.DataFrame  # one row per seed, one column per suite, in [0, 1]; NaN: not evaluated
    path: Path
    predictions: pd.DataFrame | None = None  # its judged outputs (None: no paired section)

    def seeds(self, suite: str) -> np.ndarray:
        """The accuracies on `suite` of the seeds evaluated on it."""
        return self.accuracy[suite].dropna().to_numpy()


def load_runs(paths: Sequence[str | Path], names: Sequence[str] | None = None) -> list[Run]:
    """Read each sweep's accuracy per seed and suite; names default to the directory names.

    Raises:
        ConfigError: fewer than two runs, or names that do not match the runs one to one.
        RunDirError: a path that is not a sweep's run directory, or one without predictions.
    """
    if len(paths) < 2:
        raise ConfigError("runs", "at least two run directories", [str(p) for p in paths])
    names = list(names) if names else [Path(p).name for p in paths]
    if len(names) != len(paths) or len(set(names)) != len(names):
        raise ConfigError("names", f"{len(paths)} distinct names, one per run", names)
    runs = []
    for name, path in zip(names, paths, strict=True):
        config = read_members(path)
        predictions = read_predictions(path, config)
        accuracy = accuracy_by(predictions, "suite", config.task.suites())
        runs.append(Run(name, config, accuracy, Path(path), predictions))
    return runs


def shared_published(runs: Sequence[Run]) -> Published | None:
    """The paper's numbers, when every run's task has the same ones."""
    published = [run.config.task.published() for run in runs]
    return published[0] if published[0] and all(p == published[0] for p in published) else None


def write_comparison(runs: Sequence[Run], out: str | Path) -> tuple[Path, Path]:
    """Write the comparison of `runs` (the first is the reference) into `out`.

    Raises:
        ConfigError: runs of different tasks, or runs that share no evaluated suite.
    """
    out = Path(out)
    tasks = {task_name(run.config.task) for run in runs}
    if len(tasks) > 1:
        raise ConfigError("runs", "runs of one task", " and ".join(sorted(tasks)))
    suites = [s for s in runs[0].accuracy.columns if all(s in r.accuracy for r in runs)]
    if not suites:
        raise ConfigError("runs", "runs that share at least one evaluated suite", "none shared")
    reference = runs[0]
    published = shared_published(runs)
    pairs = list(published.pairs) if published else []
    differences = {
        (run.name, suite): (
            compare_groups(reference.seeds(suite), run.seeds(suite)),
            probability_of_improvement(reference.seeds(suite), run.seeds(suite)),
        )
        for run in runs[1:]
        for suite in suites
    }
    correlations = {
        (run.name, a, b): correlated(run.accuracy, a, b)
        for run in runs
        for a, b in pairs
        if a in run.accuracy and b in run.accuracy
    }
    long = pd.concat(
        [
            run.accuracy[suites]
            .reset_index()
            .melt(id_vars="seed", var_name="suite", value_name="accuracy")
            .dropna()
            .assign(run=run.name)
            for run in runs
        ]
    )
    figure = plots.runs_side_by_side(long, out / "figures" / "runs.png")
    thresholds = np.linspace(0, 1, 101)
    profiles = {
        run.name: performance_profile(run.accuracy[suites].dropna().to_numpy(), thresholds)
        for run in runs
    }
    profile = plots.performance_profiles(profiles, out / "figures" / "profiles.png")
    paired, paired_rows = paired_blocks(runs, suites)
    write_json(
        out / "compare.json",
        {
            "runs": {run.name: run.config.identity() for run in runs},
            "summary": {
                run.name: {s: summarize(run.seeds(s)).to_dict() for s in suites} for run in runs
            },
            "differences": [
                {
                    "run": name,
                    "reference": reference.name,
                    "suite": suite,
                    **d.to_dict(),
                    "improvement": p.to_dict(),
                }
                for (name, suite), (d, p) in differences.items()
            ],
            "correlations": [
                {"run": name, **c.to_dict()} for (name, _, _), c in correlations.items()
            ],
            "paired": paired_rows,
        },
    )
    blocks: list[Block] = [
        Text(
            f"{len(runs)} runs; the reference is `{reference.name}`. Accuracy = share of outputs "
            "the task's verifier accepts, in %."
            + (
                " A language model's seeds are its members, the ways of asking it (prompt "
                "format × few-shot draw × sampling seed)."
                if any(isinstance(run.config, LanguageModelConfig) for run in runs)
                else ""
            )
        ),
        Heading("The runs"),
        _settings_table(runs),
        Heading("Accuracy across seeds (%)"),
        Text(
            "Mean, sample standard deviation, median and range over each run's seeds "
            "(`seeds`: those evaluated on the suite)"
            + (
                f"; after each suite, {published.source} ({published.seeds} seeds; "
                f"{published.note})."
                if published
                else "."
            )
        ),
        _summary_table(runs, suites, published),
        Figure(figure.relative_to(out), "Accuracy per suite, one box and one dot per seed."),
        Figure(
            profile.relative_to(out),
            "Performance profiles (Agarwal et al. 2021): the share of each run's seeds × "
            "suites at or above each accuracy, with a 95 % band from resampling the seeds "
            "within each suite.",
        ),
        Heading(f"Difference from `{reference.name}`"),
        Text(
            "Mean of the run minus mean of the reference, in points, with a 95 % percentile "
            "bootstrap interval (seeds resampled within each run); the probability of "
            "improvement, P(a seed of the run beats a seed of the reference) + ½ P(tie) "
            "(0.5: neither is better; rliable's statistic) with its 95 % bootstrap interval; "
            "and the p of the two-sided Mann-Whitney U test over the two runs' seeds, "
            "whose U is P times the pairs of seeds: exact, ties included (every split of "
            "the seeds into the two runs counted)."
        ),
        _difference_table(differences),
        *_no_interval(differences),
        *paired,
    ]
    if correlations:
        reported = [f"{a}-{b} {v:+.2f}" for (a, b), v in published.pairs.items() if v is not None]
        blocks += [
            Heading("Correlation between suites, per run"),
            Text(
                "Pearson r across each run's seeds with a 95 % bootstrap interval, for the "
                "pairs the paper discusses"
                + (f" ({published.source}: {', '.join(reported)})." if reported else ".")
            ),
            _correlation_table(runs, pairs, correlations),
        ]
    if all(over_time(run.config) for run in runs):
        blocks += _grokking_blocks(runs, out)
    return render(out, TITLE, blocks)


def _grokking_blocks(runs: Sequence[Run], out: Path) -> list[Block]:
    """When every run was trained over time: their grokking steps against the reference's."""
    held_out = runs[0].config.task.suites()[0]
    curves = [(run.name, read_curves(run.path), run.config.train.steps) for run in runs]
    return compare_blocks(out, curves, GROKKING, held_out)


def _settings_table(runs: Sequence[Run]) -> Table:
    rows = []
    for run in runs:
        c = run.config
        trained = isinstance(c, SweepConfig)  # a language model's run has no training
        rows.append(
            {
                "run": run.name,
                "seeds": str(len(run.accuracy)),
                "task": task_description(c),
                "model": model_description(c),
                "optimizer": c.train.optimizer if trained else "–",
                "lr": str(c.train.lr) if trained else "–",
                "patience": str(c.train.patience) if trained else "–",
                "train": f"{c.train_size:,}" if trained else "–",
            }
        )
    return Table(pd.DataFrame(rows))


def _summary_table(
    runs: Sequence[Run], suites: Sequence[str], published: Published | None
) -> Table:
    rows = []
    for suite in suites:
        for run in runs:
            s = summarize(run.seeds(suite))
            values = [100 * v for v in (s.mean, s.std, s.median, s.min, s.max)]
            rows.append(_summary_row(suite, run.name, str(s.n), values))
        if published and suite in published.suites:
            theirs = published.suites[suite]
            values = [theirs.get(k, np.nan) for k in ("mean", "std", "median", "min", "max")]
            rows.append(_summary_row(suite, published.source, str(published.seeds), values))
    return Table(pd.DataFrame(rows))


def _summary_row(suite: str, run: str, seeds: str, values: Sequence[float]) -> dict[str, str]:
    names = ("mean", "std", "median", "min", "max")
    cells = {n: "" if np.isnan(v) else f"{v:.2f}" for n, v in zip(names, values, strict=True)}
    return {"suite": suite, "run": run, "seeds": seeds, **cells}


def _signed(x: float) -> str:
    return "–" if np.isnan(x) else f"{x:+.2f}"


def _difference_table(differences: dict) -> Table:
    rows = [
        {
            "run": name,
            "suite": suite,
            "difference": _signed(100 * d.difference),
            "95% CI": interval(100 * d.ci_low, 100 * d.ci_high, _signed),
            "P(improvement)": _probability(p.probability),
            "95% CI of P": interval(p.ci_low, p.ci_high, _probability),
            "Mann-Whitney p": "–" if np.isnan(d.mann_whitney_p) else f"{d.mann_whitney_p:.3g}",
            "seeds": f"{d.n_b} vs {d.n_a}",
        }
        for (name, suite), (d, p) in differences.items()
    ]
    return Table(pd.DataFrame(rows))


def _no_interval(differences: dict) -> list[Block]:
    """What a `–` in the difference table's intervals stands for, per column and reason."""
    suites = list(dict.fromkeys(suite for _, suite in differences))
    missing: dict[tuple[str, str], dict[str, list[str]]] = {}
    for (name, suite), (d, p) in differences.items():
        for column, reason in (("95% CI", d.ci_reason), ("95% CI of P", p.ci_reason)):
            if reason:
                missing.setdefault((column, reason), {}).setdefault(name, []).append(suite)
    return [
        Text(
            f"No interval (–) in `{column}` for "
            + "; ".join(
                f"{name} on {'every suite' if on == suites and len(on) > 1 else ', '.join(on)}"
                for name, on in runs.items()
            )
            + f": {reason}."
        )
        for (column, reason), runs in missing.items()
    ]


def _probability(x: float) -> str:
    return "–" if np.isnan(x) else f"{x:.2f}"


def _correlation_table(
    runs: Sequence[Run], pairs: Sequence[tuple[str, str]], correlations: dict
) -> Table:
    rows = []
    for run in runs:
        row = {"run": run.name}
        for a, b in pairs:
            c = correlations.get((run.name, a, b))
            if c is None:
                row[f"{a}-{b}"] = ""
            elif np.isnan(c.pearson):
                row[f"{a}-{b}"] = f"undefined ({c.reason})" if c.reason else "–"
            else:
                ci = interval(*c.pearson_ci, _signed)
                missing = f" (no interval: {c.pearson_ci_reason})" if c.pearson_ci_reason else ""
                row[f"{a}-{b}"] = _signed(c.pearson) + ("" if ci == "–" else f" {ci}") + missing
        rows.append(row)
    return Table(pd.DataFrame(rows))
