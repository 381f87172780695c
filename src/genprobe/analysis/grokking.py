"""When and whether seeds grok, from a sweep's curves over training time.

The curves are one row per member (`seed`) × evaluation `step` × `role` ("train", then the
task's suites) with `accuracy` and `weight_norm` (the table `read_curves(run)` returns). Per
member, with accuracy threshold θ (Power et al. 2022 use 99 %):

    memorized_step  the first evaluation step where training accuracy ≥ θ
    grokked_step    the first evaluation step where held-out accuracy ≥ θ and stays ≥ θ at
                    every later evaluation (a seed that passes θ and drops again has not
                    grokked there)
    delay           grokked_step - memorized_step
    outcome         "grokked", or "did not grok within the budget": censored at the budget
                    (the last evaluation step), its own outcome, never dropped

Across seeds: the distribution of grokking steps as a Kaplan-Meier estimate of its CDF
(`scipy.stats.ecdf` of right-censored data) with a 95 % log-log band, its median (undefined
when fewer than half the seeds grok), the share that grokked within the budget with its Wilson
interval, and the median delay over the seeds that grokked. Every seed is followed to the
budget, so every censoring is at or after every grokking step: the Kaplan-Meier CDF is the
share of all seeds grokked by each step, and its median is `stats.censored_median`, which the
comparison of two runs bootstraps.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from genprobe.analysis.stats import (
    CONFIDENCE,
    Band,
    Difference,
    MedianDifference,
    Share,
    censored_median_difference,
    compare_groups,
    iqm_band,
    share_at_least,
)
from genprobe.errors import ConfigError, RunDirError

THRESHOLD = 0.99  # Power et al. (2022): "99 % validation accuracy"
TRAIN = "train"
GROKKED, CENSORED = "grokked", "did not grok within the budget"
COLUMNS = ["seed", "step", "role", "accuracy", "loss", "weight_norm"]
MEMBER_COLUMNS = ["seed", "memorized_step", "grokked_step", "delay", "grokked", "outcome"]


@dataclass(frozen=True)
class KaplanMeier:
    """The CDF of grokking steps over seeds, a step function: at `steps[i]` it rises to
    `cdf[i]`, with its 95 % band (log-log; NaN where undefined, at a CDF of 0 or 1)."""

    steps: np.ndarray
    cdf: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    budget: int
    share: Share  # the seeds that grokked within the budget, with a Wilson interval
    median: float  # the first step by which half the seeds grokked; NaN where none is
    median_reason: str | None  # why there is no median, if there is none


@dataclass(frozen=True)
class Grokking:
    """A run's grokking outcome across its seeds."""

    members: pd.DataFrame  # `MEMBER_COLUMNS`, one row per seed
    kaplan_meier: KaplanMeier
    median_delay: float  # over the seeds that grokked and memorized; NaN where none did
    delay_reason: str | None


@dataclass(frozen=True)
class GrokkingComparison:
    """Run b against run a: the difference of their median grokking steps and of the shares of
    seeds that grokked within the budget (b minus a)."""

    median: MedianDifference
    share: Difference  # difference of shares, bootstrap interval and Mann-Whitney p


def check_threshold(threshold: float) -> float:
    """`threshold` as a float in (0, 1].

    Raises:
        ConfigError: a threshold outside (0, 1].
    """
    if not 0 < threshold <= 1:
        raise ConfigError("grokking_threshold", "an accuracy in (0, 1]", threshold)
    return float(threshold)


def members(
    curves: pd.DataFrame, budget: int, held_out_role: str, threshold: float = THRESHOLD
) -> pd.DataFrame:
    """Per seed: memorization step, grokking step, delay, whether it grokked and its outcome
    (`MEMBER_COLUMNS`; steps are nullable integers, missing where the event did not happen).

    Raises:
        ConfigError: a threshold outside (0, 1], or a held-out role the curves lack.
        RunDirError: curves that lack a column or the training role, a member without every
            evaluation, an evaluation after the budget, or members that stop before it.
    """
    threshold = check_threshold(threshold)
    train = accuracy_matrix(curves, TRAIN, budget)
    held_out = accuracy_matrix(curves, held_out_role, budget)
    steps = held_out.columns.to_numpy()
    memorized = _first_step(train.to_numpy() >= threshold, steps)
    above = held_out.to_numpy() >= threshold
    stays = np.flip(np.cumprod(np.flip(above, axis=1), axis=1), axis=1).astype(bool)
    grokked_step = _first_step(stays, steps)
    frame = pd.DataFrame(
        {
            "seed": held_out.index.to_numpy(dtype=np.int64),
            "memorized_step": memorized,
            "grokked_step": grokked_step,
            "delay": grokked_step - memorized,
            "grokked": grokked_step.notna().to_numpy(),
        }
    )
    frame["outcome"] = np.where(frame["grokked"], GROKKED, CENSORED)
    return frame


def accuracy_matrix(
    curves: pd.DataFrame, role: str, budget: int, value: str = "accuracy"
) -> pd.DataFrame:
    """One role's `value` as one row per seed and one column per evaluation step, checked to
    be complete and to end at the budget.

    Raises:
        ConfigError, RunDirError: as `members`.
    """
    missing = [c for c in ("seed", "step", "role", value) if c not in curves.columns]
    if missing:
        raise RunDirError(f"the curves lack the column(s) {', '.join(missing)}")
    roles = list(dict.fromkeys(curves["role"]))
    if role not in roles:
        if role == TRAIN:
            raise RunDirError(f"the curves have no {TRAIN!r} role (roles: {', '.join(roles)})")
        raise ConfigError("held_out_role", f"one of the curves' roles {roles}", role)
    rows = curves[curves["role"] == role]
    if rows.duplicated(["seed", "step"]).any():
        raise RunDirError(f"the curves hold a (seed, step) twice for role {role!r}")
    matrix = rows.pivot(index="seed", columns="step", values=value).sort_index(axis=1)
    if matrix.isna().to_numpy().any():
        seeds = matrix.index[matrix.isna().any(axis=1)].tolist()
        raise RunDirError(f"seeds {seeds} lack an evaluation of {role!r} that other seeds have")
    last = int(matrix.columns[-1])
    if last != budget:
        when = "after" if last > budget else "before"
        raise RunDirError(
            f"the curves' last evaluation is at step {last}, {when} the budget of {budget} "
            "steps" + (": the run is not finished" if last < budget else "")
        )
    return matrix


def _first_step(hits: np.ndarray, steps: np.ndarray) -> pd.Series:
    """Per row, the step of the first True, missing (<NA>) where there is none."""
    first = steps[hits.argmax(axis=1)]
    return pd.Series(first, dtype="Int64").where(hits.any(axis=1))


def kaplan_meier(members: pd.DataFrame, budget: int) -> KaplanMeier:
    """The Kaplan-Meier CDF of grokking steps (seeds that did not grok censored at `budget`),
    its 95 % band, median, and the share that grokked with its Wilson interval."""
    grokked = members["grokked"].to_numpy(dtype=bool)
    n, k = len(members), int(grokked.sum())
    steps = members.loc[grokked, "grokked_step"].to_numpy(dtype=float)
    data = scipy_stats.CensoredData(uncensored=steps, right=np.full(n - k, float(budget)))
    cdf = scipy_stats.ecdf(data).cdf
    with warnings.catch_warnings():  # undefined where the CDF is 0 or 1: NaN, as documented
        warnings.simplefilter("ignore", RuntimeWarning)
        band = cdf.confidence_interval(CONFIDENCE, method="log-log")
    share = share_at_least(grokked.astype(float), 1.0)
    reached = cdf.probabilities >= 0.5
    median, reason = float("nan"), None
    if reached.any():
        median = float(cdf.quantiles[reached.argmax()])
    else:
        reason = (
            f"only {k} of {n} seeds grokked within the budget of {budget:,} steps: "
            "the median is later than the budget"
        )
    return KaplanMeier(
        steps=cdf.quantiles,
        cdf=cdf.probabilities,
        ci_low=band.low.probabilities,
        ci_high=band.high.probabilities,
        budget=budget,
        share=share,
        median=median,
        median_reason=reason,
    )


def grokking(
    curves: pd.DataFrame, budget: int, held_out_role: str, threshold: float = THRESHOLD
) -> Grokking:
    """Per seed and across seeds: see the module's docstring.

    Raises:
        ConfigError, RunDirError: as `members`.
    """
    table = members(curves, budget, held_out_role, threshold)
    delays = table["delay"].dropna().to_numpy(dtype=float)
    reason = None if len(delays) else "no seed both memorized and grokked within the budget"
    median_delay = float(np.median(delays)) if len(delays) else float("nan")
    return Grokking(table, kaplan_meier(table, budget), median_delay, reason)


def compare_grokking(a: pd.DataFrame, b: pd.DataFrame, seed: int = 0) -> GrokkingComparison:
    """Run b's seeds (`members` table) against run a's: median grokking step and share that
    grokked, each b minus a with a 95 % bootstrap interval, seeds resampled within each run."""

    def steps(table: pd.DataFrame) -> np.ndarray:  # a seed that did not grok: +inf, censored
        return table["grokked_step"].astype("Float64").fillna(np.inf).to_numpy(dtype=float)

    def share(table: pd.DataFrame) -> np.ndarray:
        return table["grokked"].to_numpy(dtype=float)

    return GrokkingComparison(
        median=censored_median_difference(steps(a), steps(b), seed),
        share=compare_groups(share(a), share(b), seed),
    )


def iqm_curves(
    curves: pd.DataFrame, budget: int, roles: list[str], value: str = "accuracy", seed: int = 0
) -> pd.DataFrame:
    """Per role and evaluation step: the IQM of `value` over seeds with its 95 % bootstrap band
    (seeds resampled together at every step). Columns: role, step, iqm, ci_low, ci_high,
    ci_reason.

    Raises:
        ConfigError, RunDirError: as `members`, for each role.
    """
    frames = []
    for role in roles:
        matrix = accuracy_matrix(curves, role, budget, value)
        band: Band = iqm_band(matrix.to_numpy(dtype=float).T, seed)
        frames.append(
            pd.DataFrame(
                {
                    "role": role,
                    "step": matrix.columns.to_numpy(dtype=np.int64),
                    "iqm": band.iqm,
                    "ci_low": band.ci_low,
                    "ci_high": band.ci_high,
                    "ci_reason": band.ci_reason,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
