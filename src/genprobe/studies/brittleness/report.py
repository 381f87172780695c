"""The brittleness report: the paper's tables and figures for our model, Lample & Charton's
numbers beside them (labelled as the paper's), from the run's result files only.

The numbers come from `summary.py`, which writes `summary.json` and `examples.parquet`; this
module renders them as `figures/*.png`, `report.md` and a self-contained `report.html`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.analysis import large_search, rates
from genprobe.analysis.render import Figure, Heading, Table, Text, clip
from genprobe.analysis.render import write_report as render
from genprobe.errors import GenprobeError
from genprobe.studies.brittleness import compare, paper, plots, tables
from genprobe.studies.brittleness.compare import Beside
from genprobe.studies.brittleness.config import recorded_setting
from genprobe.studies.brittleness.results import (
    read_budget,
    read_examples,
    read_model_deadlines,
    read_recorded,
    read_training,
)
from genprobe.studies.brittleness.summary import SOLVES, summarize_run, write_summary
from genprobe.studies.large_search import BEAM
from genprobe.tasks.integration.expression import to_sympy
from genprobe.tasks.integration.prefix import from_prefix
from genprobe.tasks.integration.suites.operators import OFFSETS, PAPER_MAX_OPS, paper_rows

EXAMPLES_SHOWN = 4
SMALL_ROW = 100  # problems: a row beside the paper's with fewer gets a warning
PAPER_KS = (50, 10, 1)  # the order of the k in `paper`'s tuples
INTEGRAND_WIDTH = 120  # characters of an expression shown in a table


def write_report(run: str | Path) -> tuple[Path, Path]:
    """Summarize the run's result files (`summary.json`, `examples.parquet`), draw figures,
    write report.md and report.html of a brittleness run."""
    run = Path(run)
    stored = read_recorded(run)
    config = stored["config"]
    examples = read_examples(run)
    budget_rows = read_budget(run)
    training = read_training(run)
    summary = summarize_run(config, examples, budget_rows, read_model_deadlines(run), training)
    write_summary(run, examples, summary)
    blocks = _blocks(run, stored, examples, summary, budget_rows, config["policy"], training)
    return render(run, "Symbolic brittleness", blocks)


# -- blocks ------------------------------------------------------------------------------------


def _pct(value: Any) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.1f}"


def _blocks(
    run: Path,
    stored: dict,
    examples: pd.DataFrame,
    summary: dict,
    budget_rows: pd.DataFrame | None,
    policy: str,
    training: dict[str, Any],
) -> list:
    config = stored["config"]
    ks = config["ks"]
    problems = tables.judged(examples, config)  # the fail tables' rows: problem × candidate
    beside = Beside.of(config)
    rule = {
        "strict": "a verifier timeout fails",
        "generous": "a verifier timeout passes, as the paper counted it",
    }[policy]
    paper_rule = (
        "the paper's numbers sit beside ours under its own rule, `generous Fail@k` (a timeout "
        "passes), "
        if policy != compare.PAPER_POLICY
        else "the paper's numbers sit beside ours "
    )
    blocks: list = [
        Text(
            f"Model `{config['model']['spec']}` ({beside.search}; candidates "
            f"verified by differentiation, CPU-time deadline {config['deadline']:g} s per "
            "candidate). Fail@k: the share of problems with no correct candidate among the "
            f"first k. Policy `{policy}` in the tables ({rule}; both policies are in "
            "summary.json and the last table). Paper numbers are Welleck et al. (2022) for "
            "Lample & Charton's FWD+BWD+IBP model, from a beam of 10 (Fail@1, Fail@10) or 50 "
            f"(Fail@50), a timeout counted as correct: {paper_rule}for the k this run computed, "
            f"and a paper cell from another beam than ours is marked {compare.MARK}. "
            f"Config hash `{stored['hash']}`."
        ),
        *[Text(f"Warning: {warning}") for warning in summary["deadline_warnings"]],
        *_overview(summary, policy, ks),
    ]
    if summary["left_out"]:
        blocks.append(
            Text(
                "Left out: "
                + "; ".join(f"`{suite}`: {why}" for suite, why in summary["left_out"].items())
                + "."
            )
        )
    suites = set(examples["suite"])
    if "robustness-simple" in suites:
        blocks += _robustness_simple(problems, beside)
    if suites & {"robustness-simple", "integer-extrapolation"}:
        integers = summary.get("training_integers")
        blocks += _integer_extrapolation(run, problems, ks, policy, training, integers)
    solved_by = recorded_setting(config, "solved_by")
    if "robustness-validation" in suites:
        blocks += _robustness_validation(problems, beside, solved_by)
    if "compositionality" in suites:
        blocks += _compositionality(problems, beside, solved_by)
    if "operator-extrapolation" in suites:
        blocks += _operator_extrapolation(problems, beside, config, training)
    if "in-distribution" in suites:
        blocks += [
            Heading("In distribution"),
            Text(
                "Problems from the test or validation file "
                f"`{(config['validation'] or {}).get('path')}`. Lample & Charton report Fail@10 "
                "of 4.4 / 0.5 / 0.4 % on their FWD / BWD / IBP test sets (beam 10)."
            ),
            _fail_frame(problems[problems["suite"] == "in-distribution"], ["set"], ks, policy),
        ]
    blocks += _search_or_model(run, summary, examples, budget_rows, config, beside)
    blocks += _failures(examples)
    blocks += _outcomes(summary, ks)
    return blocks


def _fail_frame(problems: pd.DataFrame, by: list[str], ks: Sequence[int], policy: str) -> Table:
    """Fail@k per group, formatted."""
    frame = tables.fail_table(problems, by, ks, policy)
    out = frame[by].astype(str).copy()
    out["n"] = frame["n"].astype(str)
    for column in tables.fail_columns(ks):
        out[column] = frame[column].map(_pct)
    return Table(out.reset_index(drop=True))


def _beside_paper(
    problems: pd.DataFrame,
    by: list[str],
    beside: Beside,
    numbers: Mapping[Any, Sequence[float]],
    paper_ks: Sequence[int] = PAPER_KS,
    paper_n: int | None = None,
) -> list:
    """Fail@k per group with the paper's beside ours, like with like (`compare.py`), a warning
    where our rows are small (`paper_n`: the paper's problems per row, where it says), and the
    notes on what is left out or marked."""
    table = _fail_frame(problems, by, beside.ks, beside.policy)
    columns, marked = compare.paper_columns(problems, by, beside, numbers, paper_ks)
    for name in columns:
        mark = compare.MARK if name in marked else ""
        table.frame[name] = [_pct(v) + (mark if pd.notna(v) else "") for v in columns[name]]
    notes = compare.notes(beside, paper_ks)
    return [table, *_small_rows(table.frame["n"].astype(int), paper_n), *map(Text, notes)]


def _small_rows(n: pd.Series, paper_n: int | None) -> list[Text]:
    """A warning where rows of fewer than SMALL_ROW problems sit beside the paper's numbers."""
    small = n < SMALL_ROW
    if not small.any():
        return []
    theirs = f"the paper's {paper_n:,} per row" if paper_n else "the paper's numbers"
    return [
        Text(
            f"Warning: {small.sum()} of {len(n)} rows hold fewer than {SMALL_ROW} problems (as "
            f"few as {n.min()}) beside {theirs}: one problem moves such a row's Fail@k by "
            f"{100 / n.min():.0f} points, too coarse to set beside the paper's. `--preset "
            "paper` runs the paper's sizes."
        )
    ]


def _overview(summary: dict, policy: str, ks: Sequence[int]) -> list:
    frame = pd.DataFrame(summary["fail"][policy])
    out = frame[["suite", "n"]].astype(str)
    for column in tables.fail_columns(ks):
        out[column] = frame[column].map(_pct)
    return [Heading("Overview"), Table(out)]


def _robustness_simple(problems: pd.DataFrame, beside: Beside) -> list:
    simple = problems[problems["suite"] == "robustness-simple"]
    coeff1 = simple[simple["set"] == "simple_coeff1"]
    others = simple[simple["set"] != "simple_coeff1"]
    return [
        Heading("Robustness: simple primitives (Table 2, top)"),
        Text(
            "`simple_coeff1`: coefficients k1, k2 drawn from [1, 100). The paper's sample was "
            "1,000 pairs per primitive; SAGGA's code, which we follow, draws 500."
        ),
        *_beside_paper(
            coeff1, ["template"], beside, paper.TABLE2_SIMPLE, paper_n=paper.TABLE2_SIMPLE_N
        ),
        Text(
            "The other sets of the suite (not in the paper's table): coefficients from "
            "[100, 11,000) (`simple_coeff1_range`, Figure 2), 32·cos(k·x) with k in "
            "[512, 1024), and x^n, x^(1/n) with n in [1, 1000] and [10,000, 11,000)."
        ),
        _fail_frame(others, ["set", "template"], beside.ks, beside.policy),
    ]


def _integer_extrapolation(
    run: Path,
    problems: pd.DataFrame,
    ks: Sequence[int],
    policy: str,
    training: dict,
    integers: dict | None,
) -> list:
    rows = problems[problems["set"] == "simple_coeff1_range"]
    if rows.empty:
        return []
    frame = tables.fail_table(rows, ["template", "coeff_range"], ks, policy)
    shown_k = [k for k in (1, 10) if k in ks] or [min(ks)]
    shares = integers["share"] if integers else None
    path = plots.failure_by_range(
        frame, shown_k, run / "figures" / "integer_extrapolation.png", shares
    )
    table = frame.pivot(index="template", columns="coeff_range", values=f"Fail@{shown_k[-1]}")
    table = table[sorted(table.columns, key=_range_start)]
    formatted = table.map(_pct).reset_index()
    caption = "Failure rate against the coefficient range, one line per primitive"
    if shares:
        caption += ", and the share of training integers in each range (dashed, right axis)"
    return [
        Heading("Integer extrapolation (Figure 2)"),
        Text(
            f"Fail@{shown_k[-1]} (%) per primitive and coefficient range. The paper shows this "
            "as a figure only: x and ln stay robust, exp, sin, cos and tan approach 100 % "
            "failure on large coefficients."
        ),
        Table(formatted),
        *_training_integers(rows, shown_k[-1], policy, training, integers),
        Figure(path.relative_to(run), f"{caption} (cf. Welleck et al. 2022, Figure 2)."),
    ]


def _range_start(label: str) -> int:
    return int(label.split("-")[0])


def _training_integers(
    rows: pd.DataFrame, k: int, policy: str, training: dict, shares: dict | None
) -> list:
    """Figure 2's statistic: how often each range's integers occur in the model's training
    data (`shares`: the summary's `training_integers`), beside the failure rate on that range."""
    source = training.get("sources", {}).get("data", "the run did not record it")
    if shares is None:
        return [
            Text(
                f"The model's training data is not known ({source}): `--train-data FILE` adds "
                "the share of its integers in each range."
            )
        ]
    frame = tables.fail_table(rows, ["coeff_range"], [k], policy)
    frame = frame.iloc[frame["coeff_range"].map(_range_start).argsort()]
    out = frame[["coeff_range", "n"]].astype(str)
    out[f"Fail@{k}, all primitives"] = frame[f"Fail@{k}"].map(_pct)
    out["training integers (%)"] = frame["coeff_range"].map(
        lambda label: _share(shares["share"].get(label))
    )
    out["paper: L&C's training (%)"] = frame["coeff_range"].map(
        lambda label: _share(paper.FIGURE2_INTEGERS.get(label))
    )
    return [
        Text(
            f"How often such integers occur in training: the share of the {shares['total']:,} "
            f"positive integers of the training data `{shares['data']}` ({source}; every `INT+` "
            "literal of the train split's problems and antiderivatives) in each range, beside "
            f"Fail@{k} on the range over all six primitives. The paper counted the positive "
            "integers of 200,000 sequences of Lample & Charton's training data and gives three "
            "ranges (section 5)."
        ),
        Table(out.reset_index(drop=True)),
    ]


def _share(value: float | None) -> str:
    """A share in percent, small ones to three significant digits (0.096)."""
    return "–" if value is None else f"{value:.3g}"


def _robustness_validation(problems: pd.DataFrame, beside: Beside, solved_by: str) -> list:
    rows = problems[problems["suite"] == "robustness-validation"]
    return [
        Heading("Robustness: perturbed validation problems (Table 2, bottom)"),
        Text(
            f"Validation problems the model {SOLVES[solved_by]}, multiplied or divided by k "
            "from [2, 100), or with exp(x) or ln(x) added."
        ),
        *_beside_paper(rows, ["set"], beside, paper.TABLE2_VALIDATION),
    ]


def _compositionality(problems: pd.DataFrame, beside: Beside, solved_by: str) -> list:
    rows = problems[problems["suite"] == "compositionality"].copy()
    rows["k"] = rows["k"].astype(int)
    numbers = {
        (family, k): fails for family, by_k in paper.TABLE8.items() for k, fails in by_k.items()
    }
    return [
        Heading("Compositionality (Table 8)"),
        Text(
            f"Sums of k primitives the model {SOLVES[solved_by]}: `comp_coeff` from "
            "`simple_coeff1`, `comp_exp` from x^n and x^(1/n), `comp_valid` from validation "
            "problems of at most 20 tokens. "
            + (
                "k = 1 is 0 % by construction."
                if solved_by == "paper"
                else "k = 1, the primitives themselves (0 % in the paper by construction), is not "
                "run again; under this criterion some of them fail at rank 1."
            )
        ),
        *_beside_paper(rows, ["set", "k"], beside, numbers, paper_n=paper.TABLE8_N),
    ]


def _operator_extrapolation(
    problems: pd.DataFrame, beside: Beside, config: dict, training: dict
) -> list:
    rows = problems[problems["suite"] == "operator-extrapolation"]
    known = recorded_setting(config, "train_max_ops")
    m = PAPER_MAX_OPS if known is None else known
    source = training.get("sources", {}).get("max_ops", "the run did not record it")
    if known is None:
        said = (
            f"The model's training max_ops is not known ({source}): Lample & Charton's "
            f"{PAPER_MAX_OPS} is assumed (`--train-max-ops M` sets it)."
        )
    else:
        said = f"M = {m}, the model's training max_ops ({source})."
    exact = ", ".join(str(m + offset) for offset in OFFSETS)
    rows_of = paper_rows(m)
    blocks = [
        Heading("Operator extrapolation (Table 9)"),
        Text(
            f"Problems generated by Lample & Charton's process ({config['method'].upper()}) "
            f"with 1-{m} operators (the model's training range, M = {m}) and exactly {exact} "
            f"operators in the random tree drawn (the final expression can differ by a few). {said}"
        ),
    ]
    numbers = {ours: paper.TABLE9[theirs] for ours, theirs in rows_of.items()}
    table, *notes = _beside_paper(rows, ["set"], beside, numbers, paper_ks=(10, 1))
    if m != PAPER_MAX_OPS:
        table.frame.insert(1, "paper row", [rows_of.get(name, "–") for name in table.frame["set"]])
        blocks.append(
            Text(
                f"The paper's model was trained on 1-{PAPER_MAX_OPS} operators: its Table 9 rows "
                "are set beside ours by their offset from the training max_ops ("
                + ", ".join(f"`{ours}` ↔ `{theirs}`" for ours, theirs in rows_of.items())
                + ")."
            )
        )
    return [*blocks, table, *notes]


def _search_or_model(
    run: Path,
    summary: dict,
    examples: pd.DataFrame,
    budget_rows: pd.DataFrame | None,
    config: dict,
    beside: Beside,
) -> list:
    blocks: list = [Heading("Is it a search problem? (section 6)")]
    unresolved = pd.DataFrame(summary["unresolved"])
    if unresolved.empty:
        return [
            *blocks,
            Text(
                f"`{config['model']['spec']}` gives no log-probabilities (or no failure had a "
                "known reference), so the search-vs-model analysis is absent."
            ),
        ]
    table = unresolved.copy()
    table["Unresolved@k"] = table["Unresolved@k"].map(_pct)
    shown = (table["suite"] == "in-distribution") & table["k"].astype(int).isin(list(paper.TABLE12))
    marked = sorted({int(k) for k in table["k"][shown] if beside.marked(int(k))})
    table["paper (FWD validation)"] = [
        _pct(paper.TABLE12[int(k)]) + (compare.MARK if int(k) in marked else "") if on else "–"
        for on, k in zip(shown, table["k"], strict=True)
    ]
    blocks += [
        Text(
            "Failures at k whose reference antiderivative (in the prefix form the model reads, "
            "L&C's canonical shape) the model scores below its k-th beam candidate (the top one "
            "for k = 1): a perfect search over the model's own probabilities would not fix "
            "them (Table 12). Our failures are those of the strict rule (a verifier timeout "
            "fails); the paper's, of its own (a timeout passes)."
        ),
        Table(table.astype(str)),
    ]
    if marked:
        blocks.append(
            Text(
                f"{compare.MARK} The paper's Unresolved@1 and @10 come from a beam of "
                f"{paper.BEAMS[1]}; ours from {beside.search}."
            )
        )
    if budget_rows is None:
        return [*blocks, Text("No large search was run (`--search-budget B` runs one).")]
    budget = pd.DataFrame(summary["budget"])
    path = large_search.top_vs_correct(
        budget_rows, run / "figures" / "search_probabilities.png", BEAM
    )
    shown = budget.copy()
    for column in shown.columns:
        if column.startswith(("fixed %", "median")):
            shown[column] = shown[column].map(_pct)
        elif column.startswith("mean"):
            shown[column] = shown[column].map(lambda v: "–" if v is None else f"{v:.3g}")
    return [
        *blocks,
        Text(
            f"A search of {config['search_budget']} candidates (beam, and samples at each "
            "temperature) on k1·{exp, sin, cos, tan}(k2·x), every distinct candidate verified. "
            f"The paper: the top beam candidate has probability ≈ {paper.FIGURE3['top']} on "
            f"average (≈ {paper.FIGURE3['top_when_none_correct']} when none of 500 is correct), "
            f"the 500th ≈ {paper.FIGURE3['bottom']:g}, and correct candidates sit near the "
            "bottom: model errors, not search errors."
        ),
        Table(shown.astype(str)),
        Figure(
            path.relative_to(run),
            "Probability of the top candidate (max) and of every correct candidate (correct) "
            "in the large beam (cf. Welleck et al. 2022, Figure 3).",
        ),
    ]


def _failures(examples: pd.DataFrame) -> list:
    blocks: list = [
        Heading("Failures, as the paper shows them (Tables 3 and 7)"),
        Text(f"Up to {EXAMPLES_SHOWN} failures at rank 1 per suite: the model's top answer."),
    ]
    rows = []
    for suite, group in examples.groupby("suite", sort=False):
        failures = group[group["readable"] & rates.failed(group["first_correct_rank"], 1)]
        for _, example in failures.head(EXAMPLES_SHOWN).iterrows():
            top = example["candidates"][0] if len(example["candidates"]) else None
            rows.append(
                {
                    "suite": suite,
                    "input": _infix(example["problem"]),
                    "reference": _infix(example["reference"]),
                    "top answer": "–" if top is None else _infix(top["answer"], top["parsed"]),
                    "verdict": "no answer" if top is None else str(top["outcome"]),
                }
            )
    if not rows:
        return [*blocks, Text("No failure at rank 1.")]
    return [*blocks, Table(pd.DataFrame(rows))]


def _infix(prefix: Any, parsed: bool = True) -> str:
    if prefix is None or (isinstance(prefix, float) and np.isnan(prefix)):
        return "–"
    if not parsed:
        return clip(f"(unparseable) {prefix}", INTEGRAND_WIDTH)
    try:
        return clip(str(to_sympy(from_prefix(prefix.split()))), INTEGRAND_WIDTH)
    except GenprobeError:  # a power too large for SymPy to build: show the tokens
        return clip(prefix, INTEGRAND_WIDTH)


def _outcomes(summary: dict, ks: Sequence[int]) -> list:
    counts = pd.DataFrame(summary["outcomes"]).astype(str)
    generous = pd.DataFrame(
        summary["fail"]["generous"], columns=["suite", "n", *tables.fail_columns(ks)]
    )
    return [
        Heading("Verification"),
        Text(
            "Candidates verified per suite (in rank order, stopping after the window with the "
            "first correct one) and their outcomes; `unparseable`: the output is not an "
            "expression; `no candidate`: the model returned none."
        ),
        Table(counts),
        Text("Fail@k under the `generous` policy (timeouts pass, as in the paper's code):"),
        Table(generous.map(lambda v: _pct(v) if isinstance(v, float) else str(v))),
    ]
