"""The statistics of a probe run, from its result rows: per member and suite, accuracy and
Fail@k; per input, how many members fail it; per relation, how often a member's two outputs
keep it; across members, whether in-distribution accuracy predicts probe accuracy; the paired
drop per value of a categorical feature; and where the members are a language model's prompt
grid, the split of their variance between format, few-shot draw and sampling."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from genprobe.analysis import large_search, rates
from genprobe.analysis.judged import from_probe
from genprobe.analysis.rates import correct
from genprobe.analysis.stats import CONFIDENCE, N_RESAMPLES, Correlation, correlate
from genprobe.analysis.variance import VarianceDecomposition, decompose_variance
from genprobe.studies.brittleness.tables import fail_table
from genprobe.studies.probe.decode import FEATURE
from genprobe.studies.probe.suites import BASE
from genprobe.tasks.probing import Breakdown
from genprobe.tasks.registry import task_probes
from genprobe.tasks.task import Task
from genprobe.tasks.tokens import encode_outputs
from genprobe.tasks.verdict import Outcome


def reported(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of the suites a report shows (not the originals decoded only for pairing)."""
    return results[results["kind"] != "origin"]


def originals(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of every decoded pool input: the base suite and the originals' suite."""
    return results[results["kind"].isin(["base", "origin"])]


def accuracy(results: pd.DataFrame) -> pd.DataFrame:
    """Greedy accuracy (`analysis.rates.accuracy`): one row per member, one column per suite
    (in the order results list them), members in their order; the originals decoded only for
    pairing left out."""
    results = reported(results)
    return _by_member(rates.accuracy(from_probe(results), ["member", "suite"]), results)


def accuracy_by_length(results: pd.DataFrame, width: int = 1) -> pd.DataFrame | None:
    """Greedy accuracy per member (rows, in their order) and input length (columns, ascending)
    over the inputs of every suite a report shows; with `width` above 1, per bin of that many
    lengths (1..width, width+1..2 width, ...; the column is the bin's first length). None where
    the task's features give no length."""
    results = reported(results)
    if FEATURE + "length" not in results:
        return None
    length = results[FEATURE + "length"].astype(int)
    table = results.assign(correct=correct(results), bin=(length - 1) // width * width + 1)
    table = table.pivot_table(index="member", columns="bin", values="correct", aggfunc="mean")
    table.columns = table.columns.astype(int)
    return table.loc[results["member"].unique()]


def fail_at(results: pd.DataFrame, k: int) -> pd.DataFrame:
    """Fail@k per member and suite (`analysis.rates.fail_at`): the share of inputs none of
    whose first k candidates is right; as `accuracy`."""
    results = reported(results)
    table = rates.fail_at(from_probe(results), [k], ["member", "suite"])
    return _by_member(table.set_index(["member", "suite"])[f"Fail@{k}"], results)


def fail_by_set(results: pd.DataFrame, k: int) -> pd.DataFrame:
    """The brittleness study's tables of Fail@k per set (Welleck et al. 2022, Tables 2, 8, 9:
    `brittleness.tables.fail_table`) of the suites whose inputs have sets (`Suite.columns`),
    over the member x input pairs the model can read: suite, set, template (where a suite
    knows it), n, Fail@1 and Fail@k (%), the suites in the run's order, their sets and
    templates in alphabetical order; no rows where no suite has sets."""
    rows = reported(results)
    if "set" not in rows:
        return pd.DataFrame()
    rows = rows[rows["set"].notna()]
    by = ["suite", "set", *(["template"] if "template" in rows else [])]
    table = fail_table(from_probe(rows), by, sorted({1, k}))
    order = {suite: i for i, suite in enumerate(rows["suite"].unique())}
    at = table["suite"].map(order).rename("at")
    table = table.join(at).sort_values(["at", *by[1:]], kind="stable")
    return table.drop(columns="at").reset_index(drop=True)


def _by_member(values: pd.Series, results: pd.DataFrame) -> pd.DataFrame:
    """`values` per member and suite as a table: one row per member, one column per suite,
    both in the order `results` list them."""
    if values.empty:
        return pd.DataFrame(index=pd.Index([], name="member"), columns=pd.Index([], name="suite"))
    return values.unstack("suite").loc[results["member"].unique(), results["suite"].unique()]


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


def pairs(results: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """One row per member and perturbed input (families, relations, derived suites made of one
    input each): its result row with
    `drop`, 1 - 0 whether the member gets the original right and the perturbed input not (-1
    the other way round), and with `by`, the original's value of feature `by` as `value`."""
    base = originals(results).assign(base_correct=correct)
    kept = ["member", "origin", "base_correct"]
    if by is not None:
        base = base.assign(value=base[FEATURE + by])
        kept.append("value")
    moved = results[results["kind"].isin(["family", "relation"]) | _one_made(results)]
    moved = moved.assign(moved_correct=correct)
    paired = moved.merge(base[kept], on=["member", "origin"], suffixes=("", "_base"))
    return paired.assign(drop=paired["base_correct"].astype(float) - paired["moved_correct"])


def paired_drop(results: pd.DataFrame) -> pd.DataFrame:
    """Per member and perturbed suite: accuracy on the base inputs the suite was made from,
    minus accuracy on the suite (positive: the perturbation hurts)."""
    return pairs(results).pivot_table(
        index="member", columns="suite", values="drop", aggfunc="mean", sort=False
    )


def robustness_of_solved(results: pd.DataFrame, k: int) -> pd.DataFrame:
    """Welleck et al.'s robustness (Table 2, bottom: perturbations of problems the model
    solves) for every family: per family suite and member, how many of its perturbed inputs
    come from an original the member solved (its top candidate right: the beam's first for
    k > 1, else greedy; the brittleness study's `paper` criterion), and the share of those
    with no right candidate among the first 1 (`fail_1`) and the first k (`fail_k`); and so for
    every derived suite made of one input each (made of solved ones only)."""
    moved = results[(results["kind"] == "family") | _one_made(results)]
    paired = moved.merge(_solved(results), on=["member", "origin"])
    return _fails(paired[paired["solved"]], k)


def compositions_of_solved(results: pd.DataFrame, k: int) -> pd.DataFrame:
    """Welleck et al.'s compositionality (Table 8: sums of problems the model solves) for every
    composition: per composition suite and member, how many composites join only inputs the
    member solved (`robustness_of_solved`'s criterion), and `fail_1` and `fail_k` among them;
    and so for every derived suite of composites (made of solved ones only)."""
    joined = results["parts"].notna() if "parts" in results else False
    composed = results[results["kind"].isin(["composition", "derived"]) & joined]
    composed = composed.reset_index(drop=True)
    if composed.empty:
        return _fails(composed, k)
    parts = composed[["member", "parts"]].explode("parts").astype({"parts": "int64"})
    parts = parts[parts["parts"] >= 0]  # a derived suite's composites of fewer parts
    solved = parts.merge(
        _solved(results), left_on=["member", "parts"], right_on=["member", "origin"], how="left"
    )
    # one row per part, in the order of `parts`, whose index is the composite's row; a derived
    # composite of a split's inputs has no base part, and was made of solved inputs only
    every = solved["solved"].eq(True).groupby(parts.index.to_numpy()).all()
    every = every.reindex(range(len(composed)), fill_value=True)
    return _fails(composed[every.to_numpy()], k)


def _one_made(results: pd.DataFrame) -> pd.Series:
    """Which rows are of a derived suite's inputs made of one base input each."""
    return (results["kind"] == "derived") & (results["origin"] >= 0)


def _solved(results: pd.DataFrame) -> pd.DataFrame:
    """member, origin (a pool row decoded), solved: whether its top candidate is right."""
    base = originals(results)
    solved = base["first_correct"].astype("float64") == 1
    return base[["member", "origin"]].assign(solved=solved.to_numpy())


def _fails(rows: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per suite and member: the rows (`solved`), and the share of them with no right
    candidate among the first 1 (`fail_1`) and the first k (`fail_k`); where the results mark
    training inputs, how many of the rows are not (`new`) and `fail_k` among those (`fail_k_new`,
    NaN for none)."""
    first = rows["first_correct"].astype("float64")
    rows = rows.assign(fail_1=rates.failed(first, 1), fail_k=rates.failed(first, k))
    columns = {"solved": ("suite", "size"), "fail_1": ("fail_1", "mean"),
               "fail_k": ("fail_k", "mean")}  # fmt: skip
    if "seen" in rows:
        new = ~rows["seen"].astype(bool)
        rows = rows.assign(new=new, fail_k_new=rows["fail_k"].where(new).astype("float64"))
        columns |= {"new": ("new", "sum"), "fail_k_new": ("fail_k_new", "mean")}
    return rows.groupby(["suite", "member"], sort=False).agg(**columns).reset_index()


def drop_by(
    results: pd.DataFrame,
    by: Breakdown,
    confidence: float = CONFIDENCE,
    resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Per perturbed suite and value of the feature `by` names (the original's value): pairs
    (perturbed inputs), drop (the median over members of a member's mean drop on those pairs)
    and its percentile bootstrap interval over pairs (ci_low, ci_high; NaN where every
    resample gives the same drop). The same resampled pairs are used for every member: the
    interval says how much the drop could move with other problems of that value, the
    members being the model's own.

    Raises:
        KeyError: the results carry no feature `by.feature`.
    """
    paired = pairs(results, by.feature)
    rows = []
    for (suite, value), group in paired.groupby(["suite", "value"], sort=False):
        drops = group.pivot_table(index="member", columns="index", values="drop", sort=False)
        drops = drops.to_numpy()  # (members, pairs)
        rng = np.random.default_rng(seed)
        boot = np.median(_resampled_means(drops, resamples, rng), axis=1)
        low, high = _percentiles(boot, confidence)
        rows.append(
            {"suite": suite, "value": by.name(int(value)), "pairs": drops.shape[1],
             "drop": float(np.median(drops.mean(axis=1))), "ci_low": low, "ci_high": high}
        )  # fmt: skip
    return pd.DataFrame(rows, columns=["suite", "value", "pairs", "drop", "ci_low", "ci_high"])


def consistency(results: pd.DataFrame, task: Task) -> pd.DataFrame:
    """Per relation suite and member: pairs, the share whose outputs keep the relation, and the
    share where both outputs are right."""
    relations = task_probes(task).relations()
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


def unresolved(results: pd.DataFrame, k: int) -> pd.DataFrame:
    """Welleck et al.'s Table 12 per suite for 1 and `k`, counted over every member
    (`analysis.rates.unresolved`): suite, k, failures scored, unresolved. Runs decoded before
    `candidate_logprobs` give 1 only."""
    ks = sorted({1, k}) if "candidate_logprobs" in results else [1]
    return rates.unresolved(from_probe(reported(results)), ks, ["suite"])


def large_search_fixes(results: pd.DataFrame, rows: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per suite and decoding of the large search (`rows`): `analysis.large_search.fixes`
    against the ordinary search's first right rank among its k candidates (`results`); its
    count of inputs is `inputs` (member x input)."""
    keys = ["member", "suite", "index"]
    first = results.set_index(keys)["first_correct"]
    table = large_search.per_input(rows, keys)
    parts = [
        large_search.fixes(group, first, k, keys).assign(suite=suite)
        for suite, group in table.groupby("suite", sort=False)
    ]
    if not parts:
        return pd.DataFrame()
    fixed = pd.concat(parts, ignore_index=True).rename(columns={"problems": "inputs"})
    return fixed[["suite", *fixed.columns.drop("suite")]]


def predicts(accuracy: pd.DataFrame) -> list[Correlation]:
    """For every other suite, the correlation across members of base accuracy with it."""
    if BASE not in accuracy:
        return []
    return [
        correlate(BASE, accuracy[BASE].to_numpy(), suite, accuracy[suite].to_numpy())
        for suite in accuracy.columns
        if suite != BASE
    ]


_CHUNK = 1000  # bootstrap resamples drawn at once

# How a language model's member reads (`under_test/adapters/prompted.py`, `Member.label`).
PROMPT_MEMBER = re.compile(r"format=(\d+) draw=(\d+)(?: sample=(\d+))?")
FACTORS = ("format", "draw", "sample")


@dataclass(frozen=True)
class Spread:
    """Accuracy of the best prompt format minus the worst, each averaged over its members."""

    best: int  # the format with the highest mean accuracy
    worst: int
    spread: float
    ci: tuple[float, float] | None  # percentile bootstrap; None where every resample agrees


@dataclass(frozen=True)
class PromptVariance:
    """Where a suite's spread of accuracy over a prompt grid comes from.

    `prompts` is the seed study's decomposition with format as the init seed and few-shot
    draw as the order seed, of accuracy averaged over sampling seeds (its residual: the
    format × draw interaction, plus sampling noise over the number of samples). `sampling`
    is the same decomposition with the prompts (format, draw) as rows and sampling seeds as
    columns: its `init` share is the prompt's, the rest (a shared effect of a seed, which
    should be 0, and the residual) is sampling's.
    """

    prompts: VarianceDecomposition | None  # None: one format and one draw
    sampling: VarianceDecomposition | None  # None: greedy, or one sampling seed
    spread: Spread | None  # None: one format

    def sampling_share(self) -> tuple[float | None, tuple[float, float] | None]:
        """The share of a member's variance that is sampling, with its interval."""
        if self.sampling is None:
            return None, None
        if self.sampling.init.share is None:  # one prompt: sampling is all there is
            return self.sampling.order.share, self.sampling.order.share_ci
        ci = self.sampling.init.share_ci
        return 1 - self.sampling.init.share, None if ci is None else (1 - ci[1], 1 - ci[0])


def prompt_grid(members: list[str]) -> pd.DataFrame | None:
    """Per member, its format, draw and sample (0 when greedy), if the members are a complete
    grid of a language model's prompts; None otherwise (a sweep's seeds)."""
    matches = [PROMPT_MEMBER.fullmatch(member) for member in members]
    if not members or not all(matches):
        return None
    cells = pd.DataFrame(
        [[int(g or 0) for g in match.groups()] for match in matches],  # type: ignore[union-attr]
        index=members,
        columns=list(FACTORS),
    )
    levels = cells.nunique()
    complete = not cells.duplicated().any() and len(cells) == levels.prod()
    return cells if complete else None


def prompt_variance(
    results: pd.DataFrame, confidence: float = CONFIDENCE, seed: int = 0
) -> dict[str, PromptVariance]:
    """Per reported suite, the split of its accuracy's variance over the prompt grid and the
    best-minus-worst format spread; {} where the members are not a prompt grid or a single
    member."""
    members = list(reported(results)["member"].unique())
    cells = prompt_grid(members)
    if cells is None or len(cells) < 2:
        return {}
    cells = cells.sort_values(list(FACTORS))
    shape = tuple(cells[factor].nunique() for factor in FACTORS)  # (F, D, S)
    scores = accuracy(results).loc[cells.index]
    right = reported(results).assign(correct=correct(results))
    out = {}
    for suite in scores.columns:
        grid = scores[suite].to_numpy().reshape(shape)
        table = right[right["suite"] == suite].pivot_table(
            index="member", columns="index", values="correct", sort=False
        )
        per_input = table.loc[cells.index].to_numpy(float).reshape(*shape[:1], -1, table.shape[1])
        out[suite] = PromptVariance(
            prompts=decompose_variance(grid.mean(axis=2), confidence, seed=seed)
            if shape[0] * shape[1] > 1
            else None,
            sampling=decompose_variance(grid.reshape(-1, shape[2]), confidence, seed=seed)
            if shape[2] > 1
            else None,
            spread=format_spread(per_input, confidence, seed=seed) if shape[0] > 1 else None,
        )
    return out


def format_spread(
    right: np.ndarray,
    confidence: float = CONFIDENCE,
    resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> Spread:
    """The best-minus-worst format spread of right (F, M, N): per format, per member of that
    format (draws × samples), per input, 1 for a right answer. Its interval resamples the
    inputs (the same ones for every member) and the members of each format (the same draws
    and samples for every format) independently, with replacement."""
    formats, members, inputs = right.shape
    means = right.mean(axis=(1, 2))
    rng = np.random.default_rng(seed)
    # per resample: the accuracy of each format's members on resampled inputs, then their
    # mean over resampled members
    boot = _resampled_means(right.reshape(-1, inputs), resamples, rng)
    boot = boot.reshape(resamples, formats, members)
    chosen = rng.integers(members, size=(resamples, 1, members))
    boot = np.take_along_axis(boot, np.broadcast_to(chosen, boot.shape), axis=2).mean(axis=2)
    spreads = boot.max(axis=1) - boot.min(axis=1)
    low, high = _percentiles(spreads, confidence)
    return Spread(
        best=int(means.argmax()),
        worst=int(means.argmin()),
        spread=float(means.max() - means.min()),
        ci=None if np.isnan(low) else (low, high),
    )


def _resampled_means(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(resamples, rows): each row's mean over columns of `values` (rows, n) resampled with
    replacement, the same columns for every row."""
    n = values.shape[1]
    means = []
    for start in range(0, resamples, _CHUNK):  # a fixed chunk: the same draws on any machine
        size = min(_CHUNK, resamples - start)
        drawn = rng.integers(n, size=(size, n)) + n * np.arange(size)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=size * n).reshape(size, n)
        means.append(counts @ values.T / n)
    return np.concatenate(means)


def _percentiles(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of bootstrap values; NaN, NaN where they are all the same."""
    tail = 50 * (1 - confidence)
    low, high = np.percentile(values, [tail, 100 - tail])
    if np.isclose(low, high, rtol=0, atol=1e-12):
        return float("nan"), float("nan")
    return float(low), float(high)
