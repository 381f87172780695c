"""The numbers of the brittleness report, computed from the examples table (one row per problem,
see `results.read_examples`) and the large-search rows: plain DataFrames, no formatting; and
the run's results as tidy tables (`run_tables`, which `genprobe.analysis.tables` reads).

Fail@k of a group is the share of its problems with no passing candidate among the first k:
under the strict policy the first *correct* rank counts, under the generous one (SAGGA's) the
first correct-or-timed-out rank. Problems the model cannot read at all (longer than its position
table) are neither failures nor successes: they are left out of Fail@k and counted apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis import search_errors
from genprobe.studies.brittleness.results import read_budget, read_examples, read_recorded
from genprobe.studies.brittleness.solve import CANDIDATE

RANK_COLUMN = {"strict": "first_correct_rank", "generous": "first_generous_rank"}
POLICIES = tuple(RANK_COLUMN)


def failed(ranks: pd.Series, k: int) -> pd.Series:
    """Which problems have no passing candidate among the first k (rank missing or beyond)."""
    return ranks.isna() | (ranks > k)


def fail_at(ranks: pd.Series, k: int) -> float:
    """Percentage of problems whose first passing rank is missing or beyond k."""
    if len(ranks) == 0:
        return float("nan")
    return 100.0 * float(failed(ranks, k).mean())


def fail_columns(ks: Sequence[int]) -> list[str]:
    """The Fail@k column names in the order every table shows them: ascending k."""
    return [f"Fail@{k}" for k in sorted(set(ks))]


def fail_table(
    examples: pd.DataFrame, by: Sequence[str], ks: Sequence[int], policy: str = "strict"
) -> pd.DataFrame:
    """One row per group of `by`: its size and Fail@k for every k (ascending k)."""
    column = RANK_COLUMN[policy]
    rows = []
    readable = examples[examples["readable"]]
    for key, group in readable.groupby(list(by), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key, strict=True))
        row["n"] = len(group)
        row.update({f"Fail@{k}": fail_at(group[column], k) for k in sorted(set(ks))})
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, "n", *fail_columns(ks)])


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


def unresolved(examples: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """Welleck et al.'s Table 12, per suite: among the failures at k whose reference was
    scored, the percentage where the reference's log-probability is below the k-th candidate's
    (the top one for k = 1, the bottom of the k for larger k): failures that a perfect search
    over the model's own probabilities would leave unresolved (`analysis.search_errors`)."""
    rows = []
    scored = examples[examples["reference_logprob"].notna()]
    for suite, group in scored.groupby("suite", sort=False):
        first = group["first_correct_rank"].astype("float64").to_numpy()
        logprobs = _logprobs(group["candidates"], max(ks))
        reference = group["reference_logprob"].astype("float64").to_numpy()
        for k in sorted(ks):
            n, share = search_errors.unresolved(first, logprobs, reference, k)
            rows.append({"suite": suite, "k": k, "failures scored": n, "Unresolved@k": 100 * share})
    return pd.DataFrame(rows, columns=["suite", "k", "failures scored", "Unresolved@k"])


def _logprobs(candidates: pd.Series, k: int) -> np.ndarray:
    """(n, k) the first k candidates' log-probabilities of each problem (NaN: none)."""
    table = np.full((len(candidates), k), np.nan)
    for row, ranked in enumerate(candidates):
        for rank, candidate in enumerate(list(ranked)[:k]):
            if candidate["logprob"] is not None:
                table[row, rank] = candidate["logprob"]
    return table


# -- the run's tables ---------------------------------------------------------------------------


def run_tables(run: str | Path) -> dict[str, pd.DataFrame]:
    """The run's tables by name:

        examples    one row per problem (the model × suite × its row): the problem, its
                    reference, its suite's metadata (set, template, coefficients, …), how many
                    candidates the model gave, the first rank that passes under each policy
        candidates  one row per problem × candidate, in rank order, with its verdict
        scores      one row per suite × policy: problems the model could read, Fail@k (%)
        budget      (a run with `--search-budget`) one row per candidate of the large search

    Raises:
        RunDirError: not a brittleness run, or nothing solved yet.
    """
    config = read_recorded(run)["config"]
    model = config["model"]["spec"]
    examples = read_examples(run)
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
            fail_table(examples, ["suite"], config["ks"], policy).assign(policy=policy)
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
    return tables
