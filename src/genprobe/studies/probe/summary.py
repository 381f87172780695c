"""The statistics of a probe run, from its result rows: per member and suite, accuracy and
Fail@k; per input, how many members fail it; per relation, how often a member's two outputs
keep it; across members, whether in-distribution accuracy predicts probe accuracy."""

from __future__ import annotations

import numpy as np
import pandas as pd

from genprobe.analysis.stats import Correlation, correlate
from genprobe.studies.probe.suites import BASE
from genprobe.tasks.task import Task
from genprobe.tasks.tokens import encode_outputs
from genprobe.verification.verdict import Outcome


def correct(results: pd.DataFrame) -> pd.Series:
    return results["outcome"] == Outcome.CORRECT.value


def reported(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of the suites a report shows (not the originals decoded only for pairing)."""
    return results[results["kind"] != "origin"]


def originals(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of every decoded pool input: the base suite and the originals' suite."""
    return results[results["kind"].isin(["base", "origin"])]


def accuracy(results: pd.DataFrame) -> pd.DataFrame:
    """Greedy accuracy: one row per member, one column per suite (in the order results list
    them), members in their order; the originals decoded only for pairing left out."""
    results = reported(results)
    table = results.assign(correct=correct(results)).pivot_table(
        index="member", columns="suite", values="correct", aggfunc="mean", sort=False
    )
    return table.loc[results["member"].unique(), results["suite"].unique()]


def fail_at(results: pd.DataFrame, k: int) -> pd.DataFrame:
    """Fail@k per member and suite: the share of inputs none of whose first k candidates is
    right."""
    results = reported(results)
    failed = results["first_correct"].isna() | (results["first_correct"] > k)
    table = results.assign(failed=failed).pivot_table(
        index="member", columns="suite", values="failed", aggfunc="mean", sort=False
    )
    return table.loc[results["member"].unique(), results["suite"].unique()]


def members_failing(results: pd.DataFrame) -> pd.DataFrame:
    """One row per suite and input: suite, index, failing (how many members fail it, greedy),
    members."""
    results = reported(results)
    grouped = results.assign(failing=~correct(results)).groupby(["suite", "index"], sort=False)
    return grouped.agg(failing=("failing", "sum"), members=("failing", "size")).reset_index()


def failure_sharing(results: pd.DataFrame) -> pd.DataFrame:
    """Per suite: inputs failed by every member, by some but not all, by exactly one, by none."""
    per_input = members_failing(results)
    every = per_input["failing"] == per_input["members"]
    rows = per_input.assign(
        every=every,
        some=(per_input["failing"] > 0) & ~every,
        one=per_input["failing"] == 1,
        none=per_input["failing"] == 0,
    )
    return rows.groupby("suite", sort=False)[["every", "some", "one", "none"]].sum()


def paired_drop(results: pd.DataFrame) -> pd.DataFrame:
    """Per member and perturbed suite: accuracy on the base inputs the suite was made from,
    minus accuracy on the suite (positive: the perturbation hurts)."""
    base = originals(results).assign(base_correct=correct)
    moved = results[results["kind"].isin(["family", "relation"])].assign(moved_correct=correct)
    paired = moved.merge(
        base[["member", "origin", "base_correct"]], on=["member", "origin"], suffixes=("", "_base")
    )
    paired["drop"] = paired["base_correct"].astype(float) - paired["moved_correct"]
    return paired.pivot_table(
        index="member", columns="suite", values="drop", aggfunc="mean", sort=False
    )


def consistency(results: pd.DataFrame, task: Task) -> pd.DataFrame:
    """Per relation suite and member: pairs, the share whose outputs keep the relation, and the
    share where both outputs are right."""
    relations = task.relations()
    base = originals(results)
    rows = []
    for suite, partner in results[results["kind"] == "relation"].groupby("suite", sort=False):
        pairs = partner.merge(
            base[["member", "origin", "output", "outcome"]],
            on=["member", "origin"],
            suffixes=("", "_base"),
        )
        vocab = task.target_vocab
        out_a, len_a = encode_outputs(vocab, [s.split() for s in pairs["output_base"]])
        out_b, len_b = encode_outputs(vocab, [s.split() for s in pairs["output"]])
        agree = relations[partner["name"].iloc[0]].agree(out_a, len_a, out_b, len_b)
        both = (pairs["outcome"] == Outcome.CORRECT.value) & (
            pairs["outcome_base"] == Outcome.CORRECT.value
        )
        for member, at in pairs.groupby("member", sort=False).indices.items():
            rows.append(
                {"suite": suite, "member": member, "pairs": len(at),
                 "consistent": float(np.mean(agree[at])), "both_right": float(both.iloc[at].mean())}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=["suite", "member", "pairs", "consistent", "both_right"])


def errors(results: pd.DataFrame) -> pd.DataFrame:
    """Per suite: failures the model was scored on, split into search and model errors."""
    scored = reported(results)
    scored = scored[scored["error"].notna()]
    table = scored.groupby(["suite", "error"], sort=False).size().unstack(fill_value=0)
    return table.reindex(columns=["search", "model"], fill_value=0)


def predicts(accuracy: pd.DataFrame) -> list[Correlation]:
    """For every other suite, the correlation across members of base accuracy with it."""
    if BASE not in accuracy:
        return []
    return [
        correlate(BASE, accuracy[BASE].to_numpy(), suite, accuracy[suite].to_numpy())
        for suite in accuracy.columns
        if suite != BASE
    ]
