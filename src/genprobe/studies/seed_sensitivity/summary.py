"""What a seed sweep's result files add up to, computed once for `stats.json` and the report.

Per suite, accuracy across seeds (mean, spread, IQM and bootstrap intervals, the share of seeds
that generalize at a threshold) and pooled over suites; the seeds that stalled below
`STALL_THRESHOLD` validation accuracy, were ended by the epoch cap or whose training loss
diverged (went NaN or inf), and the statistics without the stalled ones; correlations between
suites across seeds; accuracy per example length; per-token accuracy where the task scores it;
and for a grid of seeds, the split of each suite's variance between initialization and data
order. `write_stats` writes it to `stats.json`; the report (`report.py`) only renders it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.analysis.stats import (
    THRESHOLD,
    Correlation,
    PooledIQM,
    Share,
    Summary,
    correlate,
    pooled_iqm,
    shares_at_least,
    summarize,
)
from genprobe.analysis.variance import VarianceDecomposition, decompose_variance
from genprobe.runs.atomic import write_json
from genprobe.studies.seed_sensitivity.config import SweepConfig, over_time
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.studies.seed_sensitivity.results import (
    TOKEN_ACCURACY,
    accuracy_by,
    token_accuracy_by,
)
from genprobe.training.trainer import TrainConfig

STALL_THRESHOLD = 0.95  # a seed whose best validation accuracy is below this stopped learning
MAX_SUITES = 12  # suites taken one by one (correlated pairwise, and shown so by the report)
EARLY_STOPPING = "early stopping"
EPOCH_CAP = "epoch cap"
DIVERGENCE = "divergence"  # the training loss went NaN or inf
STATS = "stats.json"


@dataclass(frozen=True)
class SweepSummary:
    threshold: float  # the accuracy at which a seed counts as generalizing to a suite
    accuracy: pd.DataFrame  # one row per seed, one column per suite, in [0, 1]
    summaries: dict[str, Summary]  # per suite, across seeds
    shares: dict[str, Share]  # per suite, the seeds at `threshold` or above
    pooled: PooledIQM  # IQM over all suites, its 95 % interval
    stalled: list[str]  # seeds (as strings) stopped below STALL_THRESHOLD validation accuracy
    capped: list[str]  # seeds the epoch cap ended
    diverged: list[str]  # seeds whose training loss went NaN or inf
    healthy: pd.DataFrame  # `accuracy` without the stalled seeds
    # `summaries` without the stalled seeds; None where none stalled or all did
    without_stalled: dict[str, Summary] | None
    correlations: list[Correlation]  # every pair of the first MAX_SUITES, the paper's pairs
    by_length: pd.DataFrame  # one row per seed, one column per example length
    per_length: dict[str, Any]  # per length: examples, quartiles over seeds
    tokens: pd.DataFrame | None  # as `accuracy`, per-token scores; None where not scored
    token_summaries: dict[str, Summary]
    token_shares: dict[str, Share]
    token_by_length: pd.DataFrame | None
    variance: dict[str, VarianceDecomposition]  # per suite, for a grid of seeds

    def to_dict(self) -> dict[str, Any]:
        """The content of `stats.json`."""
        return {
            "summary": _dicts(self.summaries),
            "generalize": _dicts(self.shares),
            "pooled_iqm": self.pooled.to_dict(),
            "per_length": self.per_length,
            "stalled_seeds": self.stalled,
            "capped_seeds": self.capped,
            "diverged_seeds": self.diverged,
            "summary_without_stalled": None
            if self.without_stalled is None
            else _dicts(self.without_stalled),
            "correlations": [c.to_dict() for c in self.correlations],
            "token_summary": _dicts(self.token_summaries),
            "variance": _dicts(self.variance),
        }


def summarize_sweep(
    config: SweepConfig | LanguageModelConfig,
    predictions: pd.DataFrame,
    training: dict[str, Any],
    threshold: float = THRESHOLD,
) -> SweepSummary:
    """The statistics of a sweep (or a language model's run: no training) from its recorded
    predictions and training summaries (as `results.read_predictions` and
    `results.read_training` give them).

    Raises:
        ConfigError: a threshold outside [0, 1].
    """
    published = config.task.published()
    accuracy = accuracy_by(predictions, "suite", config.task.suites())
    shares = shares_at_least(accuracy, threshold)
    # Trained over time, no seed stops: what a low validation accuracy means is the grokking
    # section's (`over_time_report`), not a stall.
    stalled = [] if over_time(config) else stalled_seeds(training)
    healthy = accuracy.drop(index=[int(seed) for seed in stalled], errors="ignore")
    pairs = list(itertools.combinations(accuracy.columns[:MAX_SUITES], 2))
    pairs += [p for p in (published.pairs if published else {}) if p not in pairs]
    by_length = accuracy_by(predictions, "length")
    tokens = None
    if TOKEN_ACCURACY in predictions:
        tokens = token_accuracy_by(predictions, "suite", config.task.suites())
    return SweepSummary(
        threshold=threshold,
        accuracy=accuracy,
        summaries=suite_summaries(accuracy),
        shares=shares,
        pooled=pooled_iqm([accuracy[suite].dropna().to_numpy() for suite in accuracy]),
        stalled=stalled,
        capped=[]
        if over_time(config)
        else [seed for seed, t in training.items() if stopped_by(t, config.train) == EPOCH_CAP],
        diverged=diverged_seeds(training),
        healthy=healthy,
        without_stalled=suite_summaries(healthy) if stalled and len(healthy) > 0 else None,
        correlations=[
            correlated(accuracy, a, b) for a, b in pairs if a in accuracy and b in accuracy
        ],
        by_length=by_length,
        per_length=_per_length(by_length, predictions),
        tokens=tokens,
        token_summaries={} if tokens is None else suite_summaries(tokens),
        token_shares={} if tokens is None else shares_at_least(tokens, threshold),
        token_by_length=None if tokens is None else token_accuracy_by(predictions, "length"),
        variance=variance_by_suite(config, accuracy) if config.grid else {},
    )


def write_stats(run: str | Path, summary: SweepSummary) -> Path:
    """`stats.json` of the run: `summary` as JSON."""
    path = Path(run) / STATS
    write_json(path, summary.to_dict())
    return path


def stalled_seeds(training: dict[str, Any]) -> list[str]:
    """Seeds (as strings, in run order) whose best validation accuracy is below the threshold."""
    return [seed for seed, t in training.items() if t["best_accuracy"] < STALL_THRESHOLD]


def diverged_seeds(training: dict[str, Any]) -> list[str]:
    """Seeds (as strings, in run order) whose training loss went NaN or inf."""
    return [seed for seed, t in training.items() if t.get("diverged")]  # older records lack it


def learned(training: dict[str, Any]) -> bool:
    """Whether some seed's validation accuracy ever rose above 0 % (True with no records)."""
    return not training or any(max(t["validation"]) > 0 for t in training.values())


def stopped_by(record: dict[str, Any], train: TrainConfig) -> str:
    """What ended a seed's training (`read_training`'s record), by the trainer's rule: a
    training loss that went NaN or inf; else early stopping after `patience` epochs without
    improvement, except for a seed still at 0 %, which only the epoch cap ends."""
    if record.get("diverged"):
        return DIVERGENCE
    last = record.get("last_improvement", record["best_epoch"])  # older records lack it
    waiting = record["epochs"] - last < train.patience or record["validation"][-1] == 0
    return EPOCH_CAP if waiting else EARLY_STOPPING


def suite_summaries(accuracy: pd.DataFrame) -> dict[str, Summary]:
    """Per suite, the summary across seeds of `results.accuracy_by`'s column."""
    return {suite: summarize(accuracy[suite].dropna().to_numpy()) for suite in accuracy.columns}


def correlated(accuracy: pd.DataFrame, a: str, b: str) -> Correlation:
    """The correlation of suites `a` and `b` over the seeds evaluated on both."""
    both = accuracy[[a, b]].dropna()
    return correlate(a, both[a].to_numpy(), b, both[b].to_numpy())


def variance_by_suite(
    config: SweepConfig, accuracy: pd.DataFrame
) -> dict[str, VarianceDecomposition]:
    """Per suite, the split of the members' variance into init seed, order seed and residual."""
    assert config.grid is not None
    shape = tuple(len(seeds) for seeds in config.grid)
    members = accuracy.reindex(list(config.seeds))
    return {
        suite: decompose_variance(members[suite].to_numpy().reshape(shape))
        for suite in accuracy.columns
        if members[suite].notna().all()
    }


def _per_length(by_length: pd.DataFrame, predictions: pd.DataFrame) -> dict[str, Any]:
    examples = predictions.groupby("length")["index"].size() // predictions["seed"].nunique()
    with np.errstate(all="ignore"):
        low, median, high = np.nanpercentile(by_length.to_numpy(float), [25, 50, 75], axis=0)
    return {
        str(length): {"examples": int(examples[length]), "q25": q25, "median": m, "q75": q75}
        for length, q25, m, q75 in zip(by_length.columns, low, median, high, strict=True)
    }


def _dicts(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value.to_dict() for key, value in values.items()}
