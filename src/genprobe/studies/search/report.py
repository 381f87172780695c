"""The failure search's report: the search's effort (invalid mutants per operator among it),
the archive's clusters with examples and the share of seeds failing each, and the failure
slices (of a language model: of its members, the prompt formats x draws x samples), read
from the run's result files only (`results.py`): it runs no model. With
`--against`, the shares are per run (A: the run searched, B: the one it is compared with).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from genprobe.analysis.plots import progress
from genprobe.analysis.render import Figure, Heading, Table, Text, write_report
from genprobe.options import as_pairs
from genprobe.studies.search.analysis import shares
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.results import (
    CLUSTERS,
    SEARCH,
    TRAINED_ON,
    positions,
    read_evaluated,
    read_json,
    read_slices,
    stored_config,
)
from genprobe.studies.search.slices import Literal
from genprobe.tasks.probing import FAILURE_KINDS
from genprobe.tasks.verdict import Outcome

SLICES_SHOWN = 12
MIN_SLICE = 10  # inputs a slice needs to be shown (or 2% of those evaluated, if more)
TARGETS = {
    "most": "the share of {who}s that fail it",
    "any": "1 if any {who} fails it",
}


def write_search_report(run: str | Path) -> tuple[Path, Path]:
    """Write report.md and report.html of a failure search's run directory (SAGGA's report,
    `sagga/report.py`, of a search with SAGGA's breeder)."""
    run = Path(run)
    config = stored_config(run)
    if config.breeder == "sagga":
        from genprobe.studies.search.sagga.report import write_sagga_report

        return write_sagga_report(run)
    state = read_json(run, SEARCH)
    found = read_json(run, CLUSTERS)
    evaluated = read_evaluated(run, state["generations"])
    runs = positions(state)
    who = _who(config)
    blocks = [
        *_summary(config, state, evaluated),
        *_effort(run, state, evaluated, who),
        *_clusters(found["clusters"], state["members"], who, _scored_zero(config)),
        *_slices(read_slices(run), evaluated, runs, who),
    ]
    options = "".join(f" {pair}" for pair in as_pairs(state["task_options"]))
    members = len(state["members"])
    title = f"Failure search: {state['task']}{options}, {members} {who}{'s' * (members != 1)}"
    if len(runs) > 1:
        seeds = " and ".join(f"{name} {len(where)} seeds" for name, where in runs.items())
        title = f"Where two runs disagree: {state['task']}{options}, {seeds}"
    return write_report(run, title, blocks)


def _who(config: SearchConfig) -> str:
    """What a member is: a sweep's seed, or a language model's way of asking."""
    return "seed" if config.of_run else "member"


def _target(config: SearchConfig, members: Sequence[str]) -> str:
    if config.target in TARGETS:
        return TARGETS[config.target].format(who=_who(config))
    if config.target == "disagree":
        return "the share of A's seeds right less the share of B's seeds right (0 if negative)"
    a, b = config.target.partition(":")[2].split(",")
    if config.against is not None:
        return f"1 if A's seed {a} is right and B's seed {b} is not"
    if not config.of_run:
        return (
            f"1 if member {a} (`{members[int(a)]}`) is right and member {b} "
            f"(`{members[int(b)]}`) is not"
        )
    return f"1 if seed {a} is right and seed {b} is not"


def _scored_zero(config: SearchConfig) -> str:
    """What an input the target scores 0 is, as the report says it."""
    if config.target in TARGETS:
        return f"every {_who(config)} gets right"
    return "the target scores 0 (where the runs or members do not disagree)"


def _weight(config: SearchConfig) -> str:
    """What the target's score is multiplied by (`fitness.py`), as the summary says it."""
    weights = {
        "any_failure": "",
        "length_penalty": ", times 1 / the length of its text (short failures first)",
        "trig_length_penalty": (
            ", times 1 / the length of its text where it holds sin, cos or tan, else 0"
        ),
        "target_length": f", times 1 / (|the length of its text − {config.target_length}| + 1)",
        "target_problems": (
            ", times the greatest cosine similarity of its text's character n-grams to those of "
            f"the inputs of `{config.targets_file}`"
        ),
    }
    return weights[config.fitness]


def _parents(config: SearchConfig) -> str:
    if config.selection == "tournament":
        return f"{config.population} parents, chosen by tournaments of two by fitness"
    how = {
        "kmeans": f"the fittest of {config.clusters} k-means clusters of their text",
        "fitness": "the fittest",
    }
    chosen = how[config.selection]
    return (
        f"up to {config.population} of the inputs the generation before it archived ({chosen}, "
        "SAGGA's selection), and every base input again"
    )


def _models(config: SearchConfig, state: dict[str, Any]) -> str:
    runs = state.get("runs", {})
    if len(runs) < 2:
        return f"Model `{config.model.spec}` ({', '.join(state['members'])})"
    return ". ".join(
        f"Run {name}: `{run['run']}` ({', '.join(run['members'])})" for name, run in runs.items()
    )


def _summary(config: SearchConfig, state: dict[str, Any], evaluated: pd.DataFrame) -> list:
    failing = int((evaluated["failed"] > 0).sum())
    recipe = (
        f"{_models(config, state)}. Target `{config.target}`: "
        f"an input's fitness is {_target(config, state['members'])}{_weight(config)}; inputs "
        f"of fitness at least {config.archive_tau} are archived. Generation 0 is "
        f"{config.base_size:,} inputs of split `{state['base_split']}`; each later one mutates "
        f"{_parents(config)}, {config.mutants} times each (seed {config.seed}). {_judged(config)}"
    )
    rows = [
        ("generations after the base", f"{state['generations']:,}"),
        ("inputs evaluated", f"{len(evaluated):,}"),
        (f"failed by at least one {_who(config)}", f"{failing:,}"),
        ("archived", f"{state['stats'][-1]['archive_size']:,}" if state["stats"] else "0"),
        *_trained_on(state),
        ("stopped by", _stop(state["stop"])),
    ]
    return [Text(recipe), Heading("Search"), Table(pd.DataFrame(rows, columns=["", "value"]))]


def _trained_on(state: dict[str, Any]) -> list[tuple[str, str]]:
    """Per run, how many inputs evaluated and archived its seeds were trained on, where the
    search knows (not for a language model, nor a search made before it counted)."""
    stats = state["stats"]
    rows = []
    for mark in _marked(len(state.get("runs", {})) > 1, stats):
        rows += [
            (f"evaluated inputs {mark.whose} trained on",
             f"{sum(s[mark.column] for s in stats):,}"),
            (f"archived inputs {mark.whose} trained on",
             f"{sum(s['archived_' + mark.column] for s in stats):,}"),
        ]  # fmt: skip
    return rows


class _Mark(NamedTuple):
    column: str  # of `results.TRAINED_ON`
    whose: str  # "the seeds", "run B's seeds"
    header: str  # of a table's column: "trained on", "B trained on"


def _marked(two_runs: bool, counted: Sequence[dict[str, Any]]) -> list[_Mark]:
    """The runs whose training inputs every one of `counted` (stats, clusters) counts."""
    if two_runs:
        marks = [_Mark(TRAINED_ON[r], f"run {r}'s seeds", f"{r} trained on") for r in "AB"]
    else:
        marks = [_Mark(TRAINED_ON["A"], "the seeds", "trained on")]
    return [m for m in marks if counted and all(m.column in c for c in counted)]


def _judged(config: SearchConfig) -> str:
    if config.k == 1:
        return f"Each {_who(config)} decodes greedily and fails an input its output gets wrong."
    how = f"by beam search of width {config.k}"
    if config.temperature is not None:
        how = (
            f"{config.k} samples at temperature {config.temperature:g} (seed {config.seed}), "
            "the distinct ones most probable first,"
        )
    return (
        f"Each {_who(config)} decodes {how} and fails an input when none of its top "
        f"{config.k} candidates is right; its answer shown is the first right one, else its "
        "top one."
    )


def _stop(stop: str) -> str:
    return {
        "generations": "the generation limit (--generations)",
        "archive size": "the archive size (--archive-size)",
        "time budget": "the CPU-time budget (--minutes): rerun with a larger one to search on",
        "running": "nothing yet: the search was interrupted (rerun it)",
    }[stop]


def _effort(run: Path, state: dict[str, Any], evaluated: pd.DataFrame, who: str) -> list:
    counts: dict[str, dict[str, int]] = {}
    for stats in state["stats"]:
        for name, made in stats.get("operators", {}).items():
            for key, n in made.items():
                counts.setdefault(name, {}).setdefault(key, 0)
                counts[name][key] += n
    blocks: list = [Heading("Mutants by operator")]
    untaken = sum(stats.get("unreadable", 0) for stats in state["stats"])
    if untaken:
        blocks.append(
            Text(
                f"{untaken:,} input{'s' * (untaken != 1)} (base inputs and mutants) never scored: "
                "the model cannot take them (longer than its table of positions, or than its "
                "fixed-length input)."
            )
        )
    if not counts:
        return [*blocks, Text("No generation after the base ran.")]
    mutants = evaluated[evaluated["operator"] != "base"]
    made_here = mutants["operator"].value_counts()
    failing = mutants.loc[mutants["failed"] > 0, "operator"].value_counts()
    rows = [
        {
            "operator": name,
            "asked": f"{made['asked']:,}",
            "not applicable": f"{made['not applicable']:,}",
            "invalid (never scored)": f"{made['invalid']:,}",
            "met before": f"{made['duplicate']:,}",
            "evaluated": f"{made_here.get(name, 0):,}",
            f"failed by a {who}": f"{failing.get(name, 0):,}",
        }
        for name, made in counts.items()
    ]
    blocks.append(
        Text(
            "Mutants the task's `valid_inputs` refuses are counted here and never decoded or "
            'scored; "not applicable": the operator does not apply to the parent.'
        )
    )
    blocks.append(Table(pd.DataFrame(rows)))
    stats = pd.DataFrame(state["stats"])
    path = progress(stats, run / "figures" / "progress.png")
    blocks.append(Figure(path.relative_to(run), "Archived inputs per generation (0: the base)"))
    return blocks


def _value(v: float) -> str:
    """A feature value: an integer in full (`17565600000000`, not `1.75656e+13`)."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _range(low: float, high: float) -> str:
    return _value(low) if low == high else f"{_value(low)}–{_value(high)}"


def _apart(cluster: dict[str, Any]) -> str:
    parts = [
        # a feature that is 0 or 1 (has sin, x in an exponent) reads as a share of inputs
        f"{a['feature']}: {a['mean']:.0%} of its inputs (all: {a['all_mean']:.0%})"
        if {a["all_low"], a["all_high"]} == {0, 1}
        else f"{a['feature']} {_range(a['low'], a['high'])}, mean {a['mean']:.3g} "
        f"(all: {_range(a['all_low'], a['all_high'])}, mean {a['all_mean']:.3g})"
        for a in cluster["apart"]
    ]
    return "; ".join(parts) or "nothing stands out"


def _answers(example: dict[str, Any], members: Sequence[str]) -> str:
    by: dict[str, list[str]] = {}
    for member, answer, outcome in zip(
        members, example["answers"], example["outcomes"], strict=True
    ):
        right = " (right)" if outcome == Outcome.CORRECT.value else ""
        by.setdefault(f"`{answer or '(empty)'}`{right}", []).append(member)
    return "; ".join(f"{answer}: {', '.join(who)}" for answer, who in by.items())


def _clusters(
    found: list[dict[str, Any]], members: Sequence[str], who: str, scored_zero: str
) -> list:
    blocks: list = [Heading("Clusters of the archive")]
    if not found:
        return [*blocks, Text("Nothing was archived: no cluster to show.")]
    per_run = " (per run: A, then B)" if "by_run" in found[0] else ""
    marked = _marked(bool(per_run), found)
    trained = "".join(
        f" {m.header.capitalize()}: how many of its inputs {m.whose} were trained on."
        for m in marked
    )
    blocks.append(
        Text(
            "The archived inputs clustered by the task's features (k-means over standardized "
            f"features). {who.capitalize()}s failing: the mean share of {who}s that fail the "
            f"cluster's inputs; all {who}s: how many of its inputs every {who} fails (shared "
            f"failures, against {who}-specific ones){per_run}.{trained} Slice: the conditions "
            "on the features (at most two) that hold for most of the cluster's inputs and for "
            f"fewest of the evaluated inputs {scored_zero} (SAGGA's slices); covers: the share "
            "of the cluster they hold; precision: the cluster's share of all the inputs they "
            f"hold.{_kinds(found)}"
        )
    )
    rows = [
        {
            "cluster": str(i + 1),
            "inputs": f"{c['size']:,}",
            "what sets it apart": _apart(c),
            **_slice(c),
            **_failing(c, who),
            **{m.header: f"{c[m.column]:,}" for m in marked},
            **_tagged(c),
        }
        for i, c in enumerate(found)
    ]
    blocks.append(Table(pd.DataFrame(rows)))
    for i, c in enumerate(found):
        blocks.append(Heading(f"Cluster {i + 1}: examples nearest its centre", level=3))
        examples = [
            {
                "input": f"`{e['text']}`",
                "right output": "–" if e["gold"] is None else f"`{e['gold']}`",
                "answers": _answers(e, members),
                **({"kind": f"{e['tag']['kind']}: {e['tag']['detail']}"} if "tag" in e else {}),
            }
            for e in c["examples"]
        ]
        blocks.append(Table(pd.DataFrame(examples)))
        if "nearby" in c:
            blocks.append(Text(_nearby(c["nearby"], scored_zero)))
    return blocks


def _slice(cluster: dict[str, Any]) -> dict[str, str]:
    """The cluster's slice cell (clusters.json of a search before slices has none)."""
    if "slice" not in cluster:
        return {}
    found = cluster["slice"]
    if not found["text"]:
        return {"slice": "–"}
    return {
        "slice": f"{found['text']} (covers {found['coverage']:.0%}, "
        f"precision {found['precision']:.0%})"
    }


def _nearby(found: dict[str, Any] | None, scored_zero: str) -> str:
    if found is None:
        return f"Nearby success: the search evaluated no mutant of its inputs that {scored_zero}."
    answer = found["answers"][0] if found["answers"] else ""
    return (
        f"Nearby success: `{found['text']}` (answer `{answer}`), made by `{found['operator']}` "
        f"from `{found['parent']}`: of the {found['mutants']:,} mutants of its inputs that "
        f"{scored_zero}, the most like the input it was made from (cosine similarity "
        f"{found['similarity']:.2f} of their texts' character n-grams)."
    )


def _kinds(found: list[dict[str, Any]]) -> str:
    """What the kind columns say, where the task tagged the inputs nearest the centres."""
    kinds: Counter[str] = Counter()
    for cluster in found:
        kinds.update(cluster.get("tagged", {}))
    if not kinds:
        return ""
    counted = ", ".join(f"{kinds[k]:,} {k}" for k in FAILURE_KINDS)
    return (
        " Kind: whether an input has a right output in the model's language at all "
        "(robustness: it has, the failure is the model's; exploit: it has none; unknown: the "
        f"task could not tell), of the {sum(kinds.values()):,} archived inputs nearest the "
        f"clusters' centres (`--tag-limit`): {counted}."
    )


def _tagged(cluster: dict[str, Any]) -> dict[str, str]:
    """The cluster's "robustness / exploit / unknown" cell, where its inputs were tagged."""
    if "tagged" not in cluster:
        return {}
    counts = " / ".join(str(cluster["tagged"][kind]) for kind in FAILURE_KINDS)
    return {" / ".join(FAILURE_KINDS): counts}


def _failing(cluster: dict[str, Any], who: str) -> dict[str, str]:
    """The cluster's "seeds failing" and "all seeds fail" cells: per run with --against."""
    runs = cluster.get("by_run", {"": cluster})
    return {
        f"{who}s failing": ", ".join(
            f"{n} {r['seeds_failing']:.0%}".strip() for n, r in runs.items()
        ),
        f"all {who}s fail": ", ".join(
            f"{n} {r['all_seeds_fail']:,}".strip() for n, r in runs.items()
        )
        + f" of {cluster['size']:,}",
    }


def _feature_slice(row: Any) -> str:
    """A row of slices.parquet as a condition: `has abs` (a boolean feature; slices of a
    search before booleans have no such column), `depth = 6`, `3 ≤ x degree ≤ 96`."""
    if getattr(row, "boolean", False):
        return Literal(row.feature, "==", bool(row.low)).text
    if row.low == row.high:
        return f"{row.feature} = {_value(row.low)}"
    return f"{_value(row.low)} ≤ {row.feature} ≤ {_value(row.high)}"


def _slices(slices: pd.DataFrame, evaluated: pd.DataFrame, runs: dict[str, Any], who: str) -> list:
    support = max(MIN_SLICE, int(0.02 * len(evaluated)))
    overall = {column: float(share.mean()) for column, share in shares(evaluated, runs).items()}
    columns = list(overall)
    if len(runs) == 1:
        order = slices["failure"]
        said = f"the mean share of {who}s failing is {overall['failure']:.0%}"
        heading, highest = f"Where the {who}s fail", "where it is highest"
    else:
        order = slices["failure B"] - slices["failure A"]
        said = " and ".join(
            f"{overall[f'failure {name}']:.0%} of {name}'s seeds fail" for name in runs
        )
        heading, highest = (
            "Where the runs disagree",
            "where B's share failing exceeds A's the most",
        )
    shown = slices.assign(order=order)[slices["inputs"] >= support].sort_values(
        ["order", "inputs"], ascending=False, kind="stable"
    )[:SLICES_SHOWN]
    blocks: list = [
        Heading(heading),
        Text(
            f"Over every input evaluated, {said}. The slices of a feature's values {highest} "
            f"(at least {support:,} inputs each; a search's inputs are where it looked, not a "
            "natural distribution)."
        ),
    ]
    if shown.empty:
        return [*blocks, Text("No slice holds enough inputs.")]
    rows = pd.DataFrame(
        {
            "slice": [_feature_slice(r) for r in shown.itertuples()],
            "inputs": [f"{n:,}" for n in shown["inputs"]],
            **{
                column.replace("failure", f"{who}s failing"): [f"{f:.0%}" for f in shown[column]]
                for column in columns
            },
        }
    )  # fmt: skip
    return [*blocks, Table(rows)]
