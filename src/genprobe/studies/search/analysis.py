"""What a failure search found, made readable: clusters of the archive and failure slices.

Clusters: the one cluster analysis (`clusters.py`, SAGGA's too) over the archive's task
features (`Probes.features`; its `TASK_FEATURES`: standardized, k-means with k =
round(sqrt(n / 2)) clusters, at least 1 and at most `MAX_CLUSTERS`, seeded, none merged), each
cluster a record of its schema: its size, its rows nearest its centre first, the features that
set it apart, and its slice, the conjunction of at most two conditions on the features ("has
sin and size >= 9") that covers most of its inputs and fewest of the search's contrast, the
evaluated inputs the target scores 0 (for `most` and `any`: every seed right; at most
`clusters.MAX_CONTRAST`, a seeded sample). This analysis adds to each: the inputs nearest its
centre with the right output and every member's answer (`examples`), and the share of seeds
that fail its inputs (the mean over its inputs, and how many of them all seeds fail); with
`--against`, these two per run (`by_run`: A and B). Where a task can tell whether a failed
input has a right output at all (`Probes.tag_failures`: integration, SymPy's `integrate`), up
to `--tag-limit` archived inputs nearest the clusters' centres are tagged robustness, exploit or
unknown, the examples shown first: each cluster's counts by kind, and each example's kind.
They are tagged in the shards of SAGGA's analysis too (`tags.py`: stage `tag`,
`analysis/tags/`, on the study's executor), so a killed analysis keeps the tags it finished
and a rerun with a larger limit tags only the new inputs.

And a nearby success per cluster: a mutant of one of its inputs (one operator's step: the
generation files record its parent) that the target scores 0, the one most like the input it
was made from (cosine similarity of their texts' character n-grams, as SAGGA picks its nearby
success): the paper's 30^x beside 119^x, found among what the search evaluated, with no
model run.

Slices: over every input evaluated, the failure rate (the mean share of seeds failing; per run
with `--against`) per binned feature value: each value where a feature takes at most `VALUES`,
else quintiles, so a reader sees "fails when 30 <= length <= 41".
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.runs.executor import Executor
from genprobe.runs.shards import Shard, ShardStore, json_bytes, parquet_bytes, unless_damaged
from genprobe.studies.search.clusters import (
    MAX_CLUSTERS,
    SEED,
    TASK_FEATURES,
    cluster_records,
    contrast_sample,
)
from genprobe.studies.search.embedding import Embedder, make_embedder
from genprobe.studies.search.fitness import Target, failure_score
from genprobe.studies.search.results import (
    CLUSTERS,
    SEARCH,
    SLICES,
    TRAINED_ON,
    positions,
    read_archive,
    read_evaluated,
    read_json,
)
from genprobe.studies.search.study import CLUSTER
from genprobe.studies.search.tags import TagStage, TaskTagger, can_tag, tag, tagged_rows
from genprobe.tasks.probing import FAILURE_KINDS, from_input_keys
from genprobe.tasks.registry import task_probes
from genprobe.tasks.task import Task
from genprobe.tasks.verdict import Outcome

EXAMPLES = 3
# archived inputs tagged by kind of failure, where a task can (every example shown, by default)
TAG_LIMIT = MAX_CLUSTERS * EXAMPLES
VALUES = 6  # a feature with at most this many values is binned by value, else by quintile


def features(task: Task, inputs: Sequence[str]) -> pd.DataFrame:
    """One column per task feature, one row per input (keys of `tasks.probing.input_keys`)."""
    if not len(inputs):
        return pd.DataFrame()
    return pd.DataFrame(task_probes(task).features(from_input_keys(list(inputs))))


def failed_by(frame: pd.DataFrame, members: int) -> np.ndarray:
    """(members, N) whether each member fails each input of `frame`."""
    outcomes = np.array([list(o) for o in frame["outcomes"]], dtype=object)
    return (outcomes.reshape(len(frame), members) != Outcome.CORRECT.value).T


def failing(frame: pd.DataFrame, runs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """(N,) how many of each run's members fail each input of `frame`, by the run's name."""
    failed = failed_by(frame, sum(map(len, runs.values())))
    return {name: failed[where].sum(axis=0) for name, where in runs.items()}


def contrast(evaluated: pd.DataFrame, runs: dict[str, np.ndarray], target: Target) -> pd.DataFrame:
    """The evaluated inputs the target scores 0 (`fitness.failure_score`), in the order
    evaluated."""
    failed = failed_by(evaluated, sum(map(len, runs.values())))
    return evaluated[failure_score(failed, target) == 0]


def nearby(
    members: pd.DataFrame, scored_zero: pd.DataFrame, embedder: Embedder
) -> dict[str, Any] | None:
    """Of the mutants of `members` (archive rows, nearest the centre first) among
    `scored_zero` (`contrast`), the one most like the member it was made from: the greatest
    cosine similarity of their texts' embeddings (ties: the member nearer the centre, then the
    first evaluated); with how many such mutants the members have. None: they have none."""
    rank = {key: i for i, key in enumerate(members["input"])}
    children = scored_zero[scored_zero["parent"].isin(rank)]
    if children.empty:
        return None
    made_from = children["parent"].map(rank).to_numpy()
    parents = members["text"].iloc[made_from]
    similarity = (embedder.embed(children["text"]) * embedder.embed(parents)).sum(axis=1)
    best = int(np.lexsort((np.arange(len(children)), made_from, -similarity))[0])
    found = children.iloc[best]
    return {
        "input": found["input"],
        "text": found["text"],
        "operator": found["operator"],
        "parent": parents.iloc[best],
        "similarity": round(float(similarity[best]), 3),
        "answers": list(found["answers"]),
        "mutants": len(children),
    }


def clusters(
    archive: pd.DataFrame,
    table: pd.DataFrame,
    runs: dict[str, np.ndarray],
    scored_zero: pd.DataFrame,
    every: pd.DataFrame,
) -> list[dict[str, Any]]:
    """The archive's clusters, largest first: the records of `clusters.cluster_records` over
    the task features, with this analysis's fields (see the module's docstring). `table`: the
    archive's features; `runs`: each run's member positions (`results.positions`);
    `scored_zero`: the contrast (`contrast`); `every`: the features of every input evaluated,
    indexed as the evaluated inputs are."""
    if table.empty:
        return []
    sample = contrast_sample(scored_zero, SEED)
    embedder = make_embedder("char")
    described = pd.concat([table, every.loc[sample.index]], ignore_index=True)
    found = cluster_records(TASK_FEATURES, described, len(table))
    members = sum(map(len, runs.values()))
    failed = archive["failed"].to_numpy()
    share = failed / members
    by_run = failing(archive, runs)
    for cluster in found:
        nearest = np.array(cluster["rows"])
        rows = np.sort(nearest)  # as k-means labelled them (none merged): the means' order
        per_run = {
            name: {
                "seeds_failing": float(by_run[name][rows].mean() / len(seeds)),
                "all_seeds_fail": int((by_run[name][rows] == len(seeds)).sum()),
            }
            for name, seeds in runs.items()
        }
        cluster.update(
            {
                "nearby": nearby(archive.iloc[nearest], scored_zero, embedder),
                "seeds_failing": float(share[rows].mean()),
                "all_seeds_fail": int((failed[rows] == members).sum()),
                "examples": [
                    {
                        "input": archive["input"].iloc[i],
                        "text": archive["text"].iloc[i],
                        "gold": archive["gold"].iloc[i],
                        "answers": list(archive["answers"].iloc[i]),
                        "outcomes": list(archive["outcomes"].iloc[i]),
                    }
                    for i in nearest[:EXAMPLES]
                ],
                **({"by_run": per_run} if len(per_run) > 1 else {}),
                **trained_on(archive.iloc[rows]),
            }
        )
    return found


def tagged(
    found: list[dict[str, Any]], archive: pd.DataFrame, tags: pd.DataFrame, rows: list[int]
) -> list[dict[str, Any]]:
    """The clusters with the kinds of failure of the archive's `rows` (`tags.tagged_rows`),
    where `tags` (the run's, by input: `tags.read_tags`) has theirs: each cluster's counts of
    them by kind (`tagged`), each example its `tag`; unchanged where it has none."""
    known = dict(zip(tags["input"], zip(tags["tag"], tags["why"], strict=True), strict=True))
    keys = archive["input"].iloc[rows]
    by_row = {row: known[key] for row, key in zip(rows, keys, strict=True) if key in known}
    if not by_row:
        return found
    for cluster in found:
        kinds = Counter(by_row[row][0] for row in cluster["rows"] if row in by_row)
        cluster["tagged"] = {kind: kinds[kind] for kind in FAILURE_KINDS}
        for example, row in zip(cluster["examples"], cluster["rows"], strict=False):
            if row in by_row:
                example["tag"] = dict(zip(("kind", "detail"), by_row[row], strict=True))
    return found


def trained_on(archived: pd.DataFrame) -> dict[str, int]:
    """Per run (its `TRAINED_ON` column), how many of the inputs its seeds were trained on,
    where the search knows."""
    return {c: int(archived[c].sum()) for c in TRAINED_ON.values() if c in archived}


def shares(evaluated: pd.DataFrame, runs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """(N,) the share of seeds failing each input: `failure`, or per run `failure A`, ..."""
    if len(runs) == 1:
        return {"failure": evaluated["failed"].to_numpy() / sum(map(len, runs.values()))}
    counts = failing(evaluated, runs)
    return {f"failure {name}": counts[name] / len(runs[name]) for name in runs}


def slices(
    evaluated: pd.DataFrame, table: pd.DataFrame, runs: dict[str, np.ndarray]
) -> pd.DataFrame:
    """Failure rate per binned feature value (`table`: the features of `evaluated`): feature,
    boolean (whether the feature is one: its values 0 and 1 are false and true), low, high,
    inputs, and the columns of `shares`."""
    share = shares(evaluated, runs)
    parts = []
    for name in table.columns:
        boolean = table[name].dtype == bool
        values = table[name].astype(np.int64) if boolean else table[name]
        if values.nunique() < 2:
            continue
        if values.nunique() <= VALUES:
            bins = values
        else:
            bins = pd.qcut(values, 5, labels=False, duplicates="drop")
        grouped = pd.DataFrame({"bin": bins, "value": values, **share}).groupby("bin")
        part = grouped.agg(
            low=("value", "min"), high=("value", "max"), inputs=("value", "size"),
            **{column: (column, "mean") for column in share},
        )  # fmt: skip
        part.insert(0, "feature", name)
        part.insert(1, "boolean", boolean)
        parts.append(part.reset_index(drop=True))
    columns = ["feature", "boolean", "low", "high", "inputs", *share]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def analyse(
    run: Path,
    task: Task,
    target: Target,
    tag_limit: int | None = None,
    executor: Executor | None = None,
    workers: int | None = None,
    log: Callable[[str], object] = lambda message: None,
) -> bool:
    """Write clusters.json and slices.parquet from the run's result files (the driver's shard
    `cluster/archive`: made again where either is damaged); tag at most
    `tag_limit` archived inputs (None: `TAG_LIMIT`) where the task can, in the shards of
    `tags.py` on `executor` (the study's; `workers`: the tagger's processes), those a killed
    or smaller analysis tagged kept. Returns whether it did: not when they were written of
    this search and limit before (a finished search's rerun; tagging runs SymPy)."""
    state = read_json(run, SEARCH)
    limit = TAG_LIMIT if tag_limit is None else tag_limit
    if _analysed(run, state, limit):
        return False
    runs = positions(state)
    archive = read_archive(run)
    evaluated = read_evaluated(run, state["generations"])
    every = features(task, evaluated["input"])  # once: the archive's inputs are among them
    first = ~evaluated["input"].duplicated()
    row = pd.Series(np.flatnonzero(first), index=evaluated["input"][first])
    archived = every.iloc[row[archive["input"]].to_numpy()].reset_index(drop=True)
    found = clusters(archive, archived, runs, contrast(evaluated, runs, target), every)
    rows = tagged_rows([cluster["rows"] for cluster in found], limit)
    if rows and can_tag(task):
        stage = TagStage(TaskTagger(task), "input", workers)
        tags = tag(
            run, archive["input"].iloc[rows], stage, executor,
            lambda untagged: log(f"tagging {untagged} archived inputs (--tag-limit {limit})"),
        )  # fmt: skip
        found = tagged(found, archive, tags, rows)
    made = {
        "generations": state["generations"], "archive_size": len(archive), "tag_limit": limit,
        "clusters": found,
    }  # fmt: skip
    files = {SLICES: parquet_bytes(slices(evaluated, every, runs)), CLUSTERS: json_bytes(made)}
    ShardStore(run).keep(Shard(CLUSTER, "archive"), files)
    return True


def _analysed(run: Path, state: dict[str, Any], limit: int) -> bool:
    """Whether clusters.json and slices.parquet are those of the search `state` describes
    (its generations and archive) with this tag limit, as the run recorded them."""
    store = ShardStore(run)
    if unless_damaged(lambda: store.file(CLUSTER, SLICES)) is None:
        return False
    path = unless_damaged(lambda: store.file(CLUSTER, CLUSTERS))
    try:
        made = json.loads(path.read_text(encoding="utf-8")) if path is not None else None
    except (OSError, ValueError):  # a run made before they were recorded: made again
        return False
    size = (state.get("stats") or [{}])[-1].get("archive_size")
    return (
        isinstance(made, dict)
        and made.get("generations") == state.get("generations")
        and made.get("archive_size") == size
        and made.get("tag_limit") == limit
    )
