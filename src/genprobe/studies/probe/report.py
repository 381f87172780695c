"""The report of a probe run, from its result files only: per suite the accuracy of every
member (and Fail@k), the drop from the inputs a perturbation started from, how many members
fail each input (failures every seed shares against seed-specific ones), consistency under
the task's metamorphic relations, Fail@k on perturbations and compositions of the inputs each
member solves, search against model errors, and whether in-distribution
accuracy predicts probe accuracy across members."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis import large_search
from genprobe.analysis.correlations import correlation_section
from genprobe.analysis.plots import length_curves, suite_distributions
from genprobe.analysis.render import Figure, Heading, Table, Text, clip
from genprobe.analysis.render import write_report as render
from genprobe.analysis.stats import THRESHOLD, Share, shares_at_least, summarize
from genprobe.options import as_pairs
from genprobe.studies.large_search import BEAM
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.decode import FEATURE
from genprobe.studies.probe.results import (
    read_large_search,
    read_probe,
    read_results,
    read_suites,
)
from genprobe.studies.probe.summary import (
    PromptVariance,
    accuracy,
    accuracy_by_length,
    compositions_of_solved,
    consistency,
    drop_by,
    errors,
    fail_at,
    fail_by_set,
    failure_sharing,
    large_search_fixes,
    paired_drop,
    predicts,
    prompt_variance,
    reported,
    robustness_of_solved,
    unresolved,
)
from genprobe.tasks.probing import Breakdown
from genprobe.tasks.registry import task_probes
from genprobe.tasks.task import Task
from genprobe.tasks.tokens import encode_inputs, encode_outputs

EXAMPLES = 5  # inputs every member fails, shown per suite
LENGTH_ROWS = 30  # most rows of the per-length table: more lengths are binned
WIDTH = 90  # characters of an input or output shown (the export tables hold them whole)


def write_report(run: str | Path, threshold: float = THRESHOLD) -> tuple[Path, Path]:
    """report.md and report.html of a probe run; returns their paths. `threshold`: the
    accuracy (in [0, 1]) at which a member counts as generalizing to a suite.

    Raises:
        ConfigError: a threshold outside [0, 1].
        RunDirError: not a probe run, or nothing decoded yet.
    """
    run = Path(run)
    config = read_probe(run)
    task = config.load_task()
    results = read_results(run)
    suites = read_suites(run).set_index("suite")
    untaken = _untaken(results)
    if untaken is not None:  # every statistic below is over the inputs the model can take
        results = results[results["readable"]]
    scores = accuracy(results)
    scores = scores[[suite for suite in suites.index if suite in scores]]  # the run's order
    shares = shares_at_least(scores, threshold)
    members = len(scores)
    figure = suite_distributions(scores, run / "figures" / "accuracy.png", "members")
    figure = figure.relative_to(run)
    options = ", ".join(as_pairs(dict(config.task_options)))
    first = (
        "greedy"
        if config.model.prompts.samples == 0
        else "sampling at temperature 1 (each member's seed)"
    )
    decoding = first if config.k == 1 else f"{first}, and {_candidates(config)}"
    if _answered(config) != "greedy":  # no greedy decode: the answer is the first candidate
        first = _answered(config)
        decoding = f"{_candidates(config)}, each member's answer its first candidate"
    draws = (
        "" if config.draws == 1 else f", {config.draws} per input and family (the distinct kept)"
    )
    blocks = [
        Text(
            f"Model `{config.model.spec}`: {members} member{'s' * (members != 1)}. "
            f"Task `{config.task}` ({options}). "
            f"Base: {config.size:,} inputs of split `{config.base(task)}` (data seed "
            f"{config.data_seed}); perturbations drawn with seed {config.seed}{draws}. Decoding: "
            f"{decoding}; every output judged by the task's verifier."
        ),
        Figure(figure, "Accuracy per suite, one dot per member"),
        Heading("Accuracy per suite across members"),
        Text(
            f"Accuracy ({first}) over the members: median, min–max and IQM with its 95 % bootstrap "
            f"interval. ≥ {100 * threshold:g} %: the members at that accuracy or above, with a "
            "95 % Wilson interval of their share (`--threshold`). Drop: accuracy on the base "
            "inputs a suite was made from minus accuracy "
            "on the suite, median over members (a perturbed input against the input it was made "
            "from). Every / one: inputs that every member "
            "fails (the task's hard region) and inputs that exactly one member fails "
            "(seed-specific). Refused: perturbed inputs the task does not accept, never "
            f"decoded.{_SEEN if 'seen' in results else ''}{_UNTAKEN if untaken is not None else ''}"
        ),
        Table(_suite_table(results, scores, shares, suites, config.k, untaken)),
    ]
    blocks += _prompt_variance(results, list(scores.columns))
    blocks += _by_length(run, accuracy_by_length(results), results, _answered(config))
    breakdown = task_probes(task).breakdown()
    if breakdown is not None and FEATURE + breakdown.feature in results:
        blocks += _drops_by(results, breakdown)
    relations = consistency(results, task)
    if len(relations):
        blocks += [
            Heading("Consistency under metamorphic relations"),
            Text(
                "Per relation, the share of pairs (a base input and its partner) whose two "
                "outputs keep the relation, and the share where both are right: median "
                "(min–max) over members. A member can be consistent and wrong."
            ),
            Table(_relation_table(relations)),
        ]
    top = "its greedy top candidate"
    if config.k > 1:
        sampled = config.temperature is not None
        top = "its most probable sample" if sampled else "its beam search top candidate"
    blocks += _of_solved(
        robustness_of_solved(results, config.k),
        "Perturbations of the inputs each member solves",
        f"Per family, the perturbed inputs whose original the member answers right ({top}), "
        "and how often it fails them: the brittleness study's robustness measure (Welleck et "
        "al. 2022, Table 2, bottom), median (min–max) over members.",
        "solved originals",
        config.k,
    )
    blocks += _of_solved(
        compositions_of_solved(results, config.k),
        "Compositions of inputs each member solves",
        f"Per composition, the composites whose every part the member answers right ({top}), "
        "and how often it fails them: the brittleness study's compositionality (Welleck et "
        "al. 2022, Table 8), median (min–max) over members. Its accuracy on every composite "
        "is in the first table.",
        "composites of solved parts",
        config.k,
    )
    blocks += _by_set(fail_by_set(results, config.k))
    split = errors(results)
    if split.values.sum():
        blocks += [
            Heading("Search errors and model errors"),
            Text(
                "Failures whose right output the model scores above what it answered "
                "(search: a wider search could find it) against those it scores below "
                "(model: the model prefers a wrong output), summed over members."
            ),
            Table(_error_table(split)),
            Text(
                "Unresolved@k, as the brittleness study and Welleck et al. (2022, Table 12) "
                "count it: of the failures at k whose right output was scored, the share "
                "where it scores below the k-th candidate (the top one at k = 1), over every "
                "member: failures a perfect search over the model's own probabilities would "
                "leave unresolved."
            ),
            Table(_unresolved_table(unresolved(results, config.k))),
        ]
    blocks += _large_search(run, config, results)
    blocks += correlation_section(run, scores, "members")
    correlations = predicts(scores)
    if correlations:
        blocks += [
            Heading("Does in-distribution accuracy predict probe accuracy?"),
            Text("Spearman correlation across members of base accuracy with each suite's."),
            Table(_correlation_table(correlations)),
        ]
    blocks += _shared_failures(reported(results), task)
    return render(run, "Probe study", blocks)


def _answered(config: ProbeConfig) -> str:
    """What each member's one answer is, as the report names it."""
    return "first candidate" if config.answer == "first" and config.k > 1 else "greedy"


def _candidates(config: ProbeConfig) -> str:
    """How the k candidates of Fail@k were found."""
    if config.temperature is None:
        return f"beam search of width {config.k}"
    return (
        f"the distinct outputs among {config.k} samples at temperature {config.temperature:g} "
        f"(seed {config.seed}), most probable first"
    )


def _large_search(run: Path, config: ProbeConfig, results: pd.DataFrame) -> list:
    rows = read_large_search(run)
    if rows is None:
        return []
    budget = config.search_budget
    fixed = large_search_fixes(results, rows, config.k)
    for column in fixed.columns:
        if column in ("fixed %", "median rank fixed"):
            fixed[column] = fixed[column].map(lambda v: "–" if v != v else f"{v:.1f}")
        elif column.startswith("mean"):
            fixed[column] = fixed[column].map(lambda v: "–" if v != v else f"{v:.3g}")
    temperatures = config.search_temperatures
    listed = ", ".join(f"{t:g}" for t in temperatures)
    sampled = (
        f", and the distinct outputs among {budget} samples at temperature"
        f"{'s' * (len(temperatures) > 1)} {listed} (seed {config.seed})"
        if temperatures
        else ""
    )
    suites = ", ".join(config.search_suites) or "every suite above"
    if config.search_where:  # only the inputs of these columns' values
        where = (f"{c} {v.replace('|', ' or ')}" for c, v in config.search_where)
        suites += f" ({'; '.join(where)})"
    ordinary = "greedy" if config.k == 1 else _candidates(config)
    figure = []
    if rows["logprob"].notna().any():  # an endpoint's candidates have none
        path = large_search.top_vs_correct(rows, run / "figures" / "search_probabilities.png", BEAM)
        caption = (
            "Probability of the top beam candidate (max) and of every correct one (correct), "
            "every member and input (cf. Welleck et al. 2022, Figure 3)."
        )
        figure = [Figure(path.relative_to(run), caption)]
    return [
        Heading("Is it a search problem? A larger search"),
        Text(
            f"Every member searched each input of {suites} with a beam of {budget}{sampled}, "
            "every distinct answer judged. Per suite and decoding, over member × input pairs: "
            f"the failures of the ordinary search at k = {config.k} ({ordinary}), how many the "
            "larger search fixes (a right output among its candidates: a search error) and at "
            "which median rank, the mean probability of the top candidate (and where none is "
            "right), of the last one, and the mass all candidates cover. Few fixes, or right "
            "outputs far below the top candidate, make the failures the model's (Welleck et al. "
            "2022, §6.1)."
        ),
        Table(fixed.astype(str)),
        *figure,
    ]


def _by_length(run: Path, table: pd.DataFrame | None, results: pd.DataFrame, answered: str) -> list:
    if table is None or len(table.columns) < 2:
        return []
    path = length_curves(table, run / "figures" / "per_length.png", who="members")
    width = -(-(table.columns.max() - table.columns.min() + 1) // LENGTH_ROWS)  # ceiling
    binned = accuracy_by_length(results, width)
    shown = pd.DataFrame({"median": binned.median(), "min": binned.min(), "max": binned.max()})
    shown = (100 * shown).round(1)
    rows = reported(results)
    bins = (rows[FEATURE + "length"].astype(int) - 1) // width * width + 1
    shown.insert(0, "inputs", rows.groupby(["member", bins]).size().groupby(level=1).max())
    lengths = [f"{a}–{a + width - 1}" if width > 1 else str(a) for a in shown.index]
    grouped = f", in bins of {width} lengths (at most {LENGTH_ROWS} rows)" if width > 1 else ""
    return [
        Heading("Accuracy per length"),
        Text(
            "Every input of the suites above, grouped by its length as the task measures it "
            "(`Task.length`: input tokens, unless the task says otherwise; SCAN counts "
            f"actions){grouped}: {answered} accuracy (%) per member, its median and min–max "
            "over the members; inputs: how many are in the row. The figure has every length."
        ),
        Figure(path.relative_to(run), "Accuracy per length, one line per member."),
        Table(shown.assign(length=lengths)[["length", "inputs", "median", "min", "max"]]),
    ]


def _suite_table(
    results: pd.DataFrame,
    scores: pd.DataFrame,
    shares: dict[str, Share],
    suites: pd.DataFrame,
    k: int,
    untaken: pd.Series | None = None,
) -> pd.DataFrame:
    sharing = failure_sharing(results)
    drop = paired_drop(results)
    failed = fail_at(results, k) if k > 1 else None
    # accuracy on the inputs the model was not trained on, where it is known which
    unseen = accuracy(results[~results["seen"]]) if "seen" in results else None
    rows = []
    for suite in scores.columns:
        values = scores[suite].to_numpy()
        summary = summarize(values)
        interval = (
            f" [{100 * summary.iqm_ci_low:.1f}, {100 * summary.iqm_ci_high:.1f}]"
            if summary.iqm_ci_reason is None and len(values) > 1
            else ""
        )
        row = {
            "suite": suite,
            "kind": suites.loc[suite, "kind"],
            "inputs": f"{int(suites.loc[suite, 'inputs']):,}",
            "refused": f"{int(suites.loc[suite, 'invalid']):,}",
            **({} if untaken is None else {"cannot take": f"{int(untaken.get(suite, 0)):,}"}),
            **({} if unseen is None else _unseen(suite, suites, unseen)),
            "median": f"{100 * summary.median:.1f}",
            "min–max": f"{100 * summary.min:.1f}–{100 * summary.max:.1f}",
            "IQM": f"{100 * summary.iqm:.1f}{interval}",
            shares[suite].header: str(shares[suite]),
            "drop": f"{100 * drop[suite].median():+.1f}" if suite in drop else "",
            "every": f"{int(sharing.loc[suite, 'every']):,}",
            "one": f"{int(sharing.loc[suite, 'one']):,}",
        }
        if failed is not None:
            row[f"Fail@{k}"] = f"{100 * failed[suite].median():.1f}"
        rows.append(row)
    table = pd.DataFrame(rows)
    if untaken is None or not (none := [s for s in untaken.index if s not in scores]):
        return table
    # a suite of which the model can take no input: its counts, no statistics
    empty = pd.DataFrame(
        {"suite": none, "kind": suites.loc[none, "kind"].to_list(),
         "inputs": [f"{int(n):,}" for n in suites.loc[none, "inputs"]],
         "refused": [f"{int(n):,}" for n in suites.loc[none, "invalid"]],
         "cannot take": [f"{int(untaken[s]):,}" for s in none]}
    )  # fmt: skip
    table = pd.concat([table, empty], ignore_index=True).fillna("–")
    order = {suite: i for i, suite in enumerate(suites.index)}
    return table.sort_values("suite", key=lambda names: names.map(order), ignore_index=True)


_SEEN = (
    " Trained on: inputs of the suite that the model was trained on (a sweep's training "
    "data), which test what it was shown, not the rule; new: the median accuracy on the "
    "others."
)


_UNTAKEN = (
    " Cannot take: inputs the model cannot read at all (longer than its table of positions, "
    "or than its fixed-length input); they get no answer and are left out of every number "
    "in this report."
)


def _untaken(results: pd.DataFrame) -> pd.Series | None:
    """Per suite shown, how many of its inputs the model cannot take; None where it takes
    every input (or the run predates the `readable` column)."""
    if "readable" not in results or results["readable"].all():
        return None
    shown = reported(results)
    return shown[~shown["readable"]].groupby("suite", sort=False)["index"].nunique()


def _unseen(suite: str, suites: pd.DataFrame, unseen: pd.DataFrame) -> dict[str, str]:
    new = f"{100 * unseen[suite].median():.1f}" if suite in unseen else "–"
    return {"trained on": f"{int(suites.loc[suite, 'seen']):,}", "new": new}


def _prompt_variance(results: pd.DataFrame, order: list[str]) -> list:
    """The prompt variance section of a language model's prompt grid ([] for other members)."""
    split = prompt_variance(results)
    if not split:
        return []
    text = (
        "Members are prompts: format × few-shot draw × sampling seed. Format, draw, "
        "format × draw: the seed study's split of the variance of accuracy over the grid "
        "(format as the init seed, draw as the order seed; with one member per cell, the "
        "interaction holds what neither explains), of accuracy averaged over sampling seeds. "
        "Sampling: the share of a member's variance that the sampling seed adds (the split "
        "with prompts as rows and seeds as columns). Intervals: 95 % pigeonhole bootstrap; – "
        "where the grid cannot estimate a share. Spread: accuracy of the best format minus the "
        "worst, each averaged over its draws and samples, with a 95 % bootstrap interval over "
        "inputs and draws × samples (with noise alone the spread is above 0: read the interval "
        "against the table's other formats)."
    )
    rows = [_variance_row(suite, split[suite]) for suite in order if suite in split]
    return [Heading("Prompt variance"), Text(text), Table(pd.DataFrame(rows))]


def _variance_row(suite: str, split: PromptVariance) -> dict[str, str]:
    prompts = split.prompts
    row = {"suite": suite}
    for name, part in (("format", "init"), ("draw", "order"), ("format × draw", "residual")):
        component = None if prompts is None else getattr(prompts, part)
        row[name] = _share(component.share, component.share_ci) if component else "–"
    row["sampling"] = _share(*split.sampling_share())
    spread = split.spread
    row["spread"], row["best − worst"] = "–", "–"
    if spread is not None:
        low, high = spread.ci or (None, None)
        interval = "" if low is None else f" [{100 * low:.1f}, {100 * high:.1f}]"
        row["spread"] = f"{100 * spread.spread:.1f}{interval}"
        row["best − worst"] = (
            f"format {spread.best} − format {spread.worst}" if spread.spread else "all equal"
        )
    return row


def _share(share: float | None, ci: tuple[float, float] | None) -> str:
    if share is None:
        return "–"
    interval = "" if ci is None else f" [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]"
    return f"{100 * share:.0f} %{interval}"


def _drops_by(results: pd.DataFrame, breakdown: Breakdown) -> list:
    drops = drop_by(results, breakdown)
    if not len(drops):
        return []
    rows = [
        {"suite": r.suite, breakdown.feature: r.value, "pairs": f"{r.pairs:,}",
         "drop": f"{100 * r.drop:+.1f}"
         + ("" if np.isnan(r.ci_low) else f" [{100 * r.ci_low:+.1f}, {100 * r.ci_high:+.1f}]")}
        for r in drops.itertuples()
    ]  # fmt: skip
    return [
        Heading(f"Paired drop per {breakdown.feature}"),
        Text(
            f"Each perturbed input against the input it was made from, per {breakdown.feature} of "
            "the original: accuracy on the originals minus accuracy on the perturbed inputs, "
            "median over members, with a 95 % bootstrap interval over the pairs (the same "
            "resampled pairs for every member)."
        ),
        Table(pd.DataFrame(rows)),
    ]


def _relation_table(relations: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for suite, group in relations.groupby("suite", sort=False):
        rows.append(
            {
                "relation": suite,
                "pairs": f"{int(group['pairs'].max()):,}",
                "consistent": _median_range(100 * group["consistent"], "{:.1f}"),
                "both right": _median_range(100 * group["both_right"], "{:.1f}"),
            }
        )
    return pd.DataFrame(rows)


def _error_table(split: pd.DataFrame) -> pd.DataFrame:
    total = split.sum(axis=1)
    return pd.DataFrame(
        {
            "suite": split.index,
            "failures scored": [f"{int(n):,}" for n in total],
            "search": [f"{int(n):,}" for n in split["search"]],
            "model": [f"{int(n):,}" for n in split["model"]],
            "search share": [
                f"{100 * s / n:.1f}" if n else "–"
                for s, n in zip(split["search"], total, strict=True)
            ],
        }
    )


def _by_set(table: pd.DataFrame) -> list:
    """The section of Fail@k per set (none where no suite has sets)."""
    if not len(table):
        return []
    templates = "template" in table  # none known: a column of NaN, of float
    shown = table.astype({"n": int, **({"template": object} if templates else {})})
    shown = shown.fillna({"template": "–"} if templates else {})
    for column in (c for c in table if c.startswith("Fail@")):
        shown[column] = table[column].map("{:.1f}".format)
    return [
        Heading("Fail@k per set"),
        Text(
            "The brittleness study's tables (Welleck et al. 2022: Table 2 for robustness, "
            "Table 8 for compositionality, Table 9 for operator extrapolation) of the suites "
            "whose inputs come in sets: per set (and template), the member × input pairs the "
            "model can read and the percentage with no right candidate among the first k."
        ),
        Table(shown),
    ]


def _of_solved(solved: pd.DataFrame, heading: str, what: str, counted: str, k: int) -> list:
    """A section on Fail@k among inputs made of inputs each member solves (none without)."""
    if not len(solved):
        return []
    if "new" in solved:
        what += (
            f" New: how many of them the model was not trained on, and Fail@{k} among those "
            "(median over the members with any)."
        )
    return [Heading(heading), Text(what), Table(_solved_table(solved, counted, k))]


def _solved_table(solved: pd.DataFrame, counted: str, k: int) -> pd.DataFrame:
    rows = []
    for suite, group in solved.groupby("suite", sort=False):
        row = {"suite": suite, counted: _median_range(group["solved"], "{:,.0f}")}
        for column, at in (("fail_1", 1), ("fail_k", k)) if k > 1 else (("fail_1", 1),):
            row[f"Fail@{at}"] = _median_range(100 * group[column], "{:.1f}")
        if "new" in group:
            row["new"] = _median_range(group["new"], "{:,.0f}")
            new = group["fail_k_new"].dropna()  # members with new ones
            row[f"Fail@{k} new"] = _median_range(100 * new, "{:.1f}") if len(new) else "–"
        rows.append(row)
    return pd.DataFrame(rows)


def _median_range(values: pd.Series, number: str) -> str:
    if len(values) == 1:
        return number.format(values.iloc[0])
    low, mid, high = (number.format(v) for v in (values.min(), values.median(), values.max()))
    return f"{mid} ({low}–{high})"


def _unresolved_table(table: pd.DataFrame) -> pd.DataFrame:
    shares = [f"{100 * share:.1f}" if share == share else "–" for share in table["unresolved"]]
    return table.drop(columns="unresolved").assign(**{"Unresolved@k": shares})


def _correlation_table(correlations: list) -> pd.DataFrame:
    rows = []
    for c in correlations:
        if c.reason:
            rows.append({"suite": c.b, "Spearman ρ": "–", "95 % CI": c.reason, "p": "–"})
            continue
        low, high = c.spearman_ci
        interval = c.spearman_ci_reason or f"[{low:.2f}, {high:.2f}]"
        rows.append(
            {"suite": c.b, "Spearman ρ": f"{c.spearman:.2f}", "95 % CI": interval,
             "p": f"{c.spearman_p:.3f}"}
        )  # fmt: skip
    return pd.DataFrame(rows)


def _shared_failures(results: pd.DataFrame, task: Task) -> list:
    members = results["member"].nunique()
    wrong = results[results["outcome"] != "correct"]
    counts = wrong.groupby(["suite", "index"], sort=False)["member"].transform("size")
    every = wrong[counts == members]
    if not len(every):
        return []
    blocks = [
        Heading("Inputs every member fails"),
        Text(f"Up to {EXAMPLES} per suite: the input, the right output (of a task with many, "
             "the one the suite knows, if any), and the most common wrong answer with how "
             "many members gave it, as the task writes them (long outputs are cut: their "
             "length in tokens and the first token where the answer differs from the one right "
             "output say where it goes wrong)."),
    ]  # fmt: skip
    shown = []  # as the results hold them: token text
    for (suite, _index), group in every.groupby(["suite", "index"], sort=False):
        if sum(row["suite"] == suite for row in shown) >= EXAMPLES:
            continue
        answers = group["output"].value_counts()
        gold, answer = group["gold"].iloc[0], answers.index[0]
        right = group["reference"].iloc[0] if gold is None and "reference" in group else gold
        right = None if pd.isna(right) else right  # NaN: a suite whose file has no references
        said = f"{_tokens(answer)}{_differs(gold, answer)}; {answers.iloc[0]} of {members}"
        shown.append({"suite": suite, "input": group["input"].iloc[0], "right": right,
                      "answer": answer, "said": said})  # fmt: skip
    frame = pd.DataFrame(shown, dtype=object)  # a missing right output stays None, not NaN
    texts = zip(
        _input_text(task, frame["input"]), _output_text(task, frame["right"]),
        _output_text(task, frame["answer"]), strict=True,
    )  # fmt: skip
    rows = [
        {"suite": row.suite, "input": clip(text, WIDTH),
         "right": "–" if row.right is None else f"{clip(right, WIDTH)} ({_tokens(row.right)})",
         "most common answer": f"{clip(answer, WIDTH)} ({row.said})"}
        for row, (text, right, answer) in zip(frame.itertuples(), texts, strict=True)
    ]  # fmt: skip
    return [*blocks, Table(pd.DataFrame(rows))]


def _input_text(task: Task, lines: Iterable[str]) -> list[str]:
    """Inputs as the results hold them (tokens) → as the task writes them."""
    src = encode_inputs(task.source_vocab, [(None, line.split()) for line in lines], "results")
    return task_probes(task).input_text(src)


def _output_text(task: Task, lines: Iterable[str | None]) -> list[str]:
    """Outputs as the results hold them (tokens; None: none) → as the task writes them."""
    out, _ = encode_outputs(task.target_vocab, [(line or "").split() for line in lines])
    return task_probes(task).output_text(out)


def _tokens(text: str) -> str:
    n = len(text.split())
    return f"{n} token{'s' * (n != 1)}"


def _differs(right: str | None, answer: str) -> str:
    """Where `answer` first differs from `right`, token by token ("" without a right output)."""
    if right is None:
        return ""
    right_tokens, answer_tokens = right.split(), answer.split()
    pairs = zip(right_tokens, answer_tokens, strict=False)
    shorter = min(len(right_tokens), len(answer_tokens))
    at = next((i for i, (a, b) in enumerate(pairs) if a != b), shorter)
    return f", differs from token {at + 1}"
