"""The numbers of the brittleness report, computed from the examples table (one row per problem,
see `results.read_examples`) as judged outputs (`judged`: one row per problem and candidate,
`analysis.judged`) and the large-search rows: plain DataFrames, no formatting; and the run's
results as tidy tables (`run_tables`, which `genprobe.studies.tables` reads).

Fail@k of a group is the share of its problems with no passing candidate among the first k
(`analysis.rates.fail_at`): under the strict policy the first *correct* rank counts, under the
generous one (SAGGA's) the first correct-or-timed-out rank. Problems the model cannot read at
all (longer than its position table) are neither failures nor successes: they are left out of
Fail@k and counted apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.analysis import rates
from genprobe.analysis.judged import from_brittleness
from genprobe.studies.brittleness.results import (
    CANDIDATE,
    read_budget,
    read_examples,
    read_recorded,
)

POLICIES = tuple(rates.PASSING)  # strict, generous


def judged(examples: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
    """The examples as judged outputs of the run's model (its recorded `config`'s)."""
    return from_brittleness(examples, config["model"]["spec"])


def fail_columns(ks: Sequence[int]) -> list[str]:
    """The Fail@k column names in the order every table shows them: ascending k."""
    return [f"Fail@{k}" for k in sorted(set(ks))]


def fail_table(
    problems: pd.DataFrame, by: Sequence[str], ks: Sequence[int], policy: str = "strict"
) -> pd.DataFrame:
    """One row per group of `by` (in the table's order) of the problems the model can read
    (`problems`: examples as `judged` gives them): how many (`n`) and Fail@k (%) for every k
    (ascending k)."""
    fails = fail_columns(ks)
    readable = problems[problems["readable"]]
    frame = rates.fail_at(readable, ks, by, rates.PASSING[policy]).rename(columns={"inputs": "n"})
    frame[fails] = 100.0 * frame[fails]
    return frame[[*by, "n", *fails]]


def outcome_counts(examples: pd.DataFrame) -> pd.DataFrame:
    """Per suite: problems, candidates returned and verified, and each verifier outcome."""
    rows = []
    for suite, group in examples.groupby("suite", sort=False):
        outcomes = Counter(
            c["outcome"] for cands in group["candidates"] for c in cands if c["outcome"] is not None
        )
        rows.append(
            {
                "suite": suite,
                "problems": len(group),
                "candidates": int(group["n_candidates"].sum()),
                "verified": sum(outcomes.values()),
                **{name: outcomes.get(name, 0) for name in OUTCOMES},
                "no candidate": int((group["n_candidates"] == 0).sum()),
                "unreadable": int((~group["readable"]).sum()),
            }
        )
    return pd.DataFrame(rows)


OUTCOMES = ("correct", "incorrect", "timeout", "unparseable", "unsupported")


def unresolved(problems: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """Welleck et al.'s Table 12, per suite (`analysis.rates.unresolved`): among the failures
    at k whose reference was scored, the percentage where the reference's log-probability is
    below the k-th candidate's (the top one for k = 1, the bottom of the k for larger k):
    failures that a perfect search over the model's own probabilities would leave unresolved."""
    table = rates.unresolved(problems, ks, ["suite"])
    return table.assign(unresolved=100 * table["unresolved"]).rename(
        columns={"unresolved": "Unresolved@k"}
    )


# -- the run's tables ---------------------------------------------------------------------------


def run_tables(run: str | Path) -> dict[str, pd.DataFrame]:
    """The run's tables by name:

        examples    one row per problem (the model × suite × its row): the problem, its
                    reference, its suite's metadata (set, template, coefficients, …), how many
                    candidates the model gave, the first rank that passes under each policy
        candidates  one row per problem × candidate, in rank order, with its verdict
        scores      one row per suite × policy: problems the model could read, Fail@k (%)
        budget      (a run with `--search-budget`) one row per candidate of the large search
        judged      one row per problem and candidate: the schema of judged outputs
                    (`analysis.judged`, docs/results-schema.md), the model as its `member`

    Raises:
        RunDirError: not a brittleness run, or nothing solved yet.
    """
    config = read_recorded(run)["config"]
    model = config["model"]["spec"]
    examples = read_examples(run)
    problems = judged(examples, config)
    candidates = pd.DataFrame(
        [
            {"suite": suite, "row": row, **candidate}
            for suite, row, ranked in zip(
                examples["suite"], examples["row"], examples["candidates"], strict=True
            )
            for candidate in ranked
        ],
        columns=["suite", "row", *CANDIDATE.names],
    ).astype({"rank": "int64", "score": "float64", "logprob": "float64", "seconds": "float64"})
    scores = pd.concat(
        [
            fail_table(problems, ["suite"], config["ks"], policy).assign(policy=policy)
            for policy in POLICIES
        ],
        ignore_index=True,
    )
    tables = {
        "examples": examples.drop(columns="candidates"),
        "candidates": candidates,
        "scores": scores[["suite", "policy", "n", *fail_columns(config["ks"])]],
    }
    budget = read_budget(run)
    if budget is not None:
        tables["budget"] = budget
    for table in tables.values():
        table.insert(0, "model", model)
    return {**tables, "judged": problems}
