"""The analyses' tagging step: whether a failure has a right output at all, in resumable shards.

Both breeders' analyses tag the archived failures nearest their clusters' centres (`--tag-limit`
of them) robustness, exploit or unknown (`tasks.probing.Tag`), in one stage, `tag`, on the
study's executor: the task's breeder (`analysis.py`) by its task's `Probes.tag_failures`
(`TaskTagger`, integration: SymPy's `integrate`), SAGGA's (`sagga/analysis.py`) by SymPy's on
its problems (`sagga.analysis.tag_problems`). A shard holds at most `TAG_CHUNK` keys (the
archive's: `input`, `problem`), named by a digest of them (`tag_shards`), its spec
`{"problems": [...keys]}`, its file `analysis/tags/<digest>.parquet`: one row per key, the key's
column, `tag`, `why`, `tag_status`. A key's tag depends on the key alone, so `tag` tags only the
keys no finished shard has tagged: a killed analysis, or a rerun with a larger `--tag-limit`,
never tags an input twice, and a finished one runs nothing.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from genprobe.runs.executor import Executor, Stage, run_stage
from genprobe.runs.shards import Outputs, Shard, ShardStore, parquet_bytes
from genprobe.studies.search.study import TAG
from genprobe.tasks.probing import Probes, Tag, from_input_keys
from genprobe.tasks.registry import task_probes
from genprobe.tasks.task import Task

TAG_CHUNK = 200  # keys per shard
COLUMNS = ("tag", "why", "tag_status")  # after the key's; tag_status: how the tagger ran

# keys (the archive's) and a worker count -> a tag per key, None: the tagger tags nothing
Tagger = Callable[[list[str], int | None], list[Tag] | None]


@dataclass(frozen=True)
class TaskTagger:
    """A `Tagger` of the task's breeder: inputs named as its archive names them
    (`tasks.probing.input_keys`), tagged by their task's `Probes.tag_failures`."""

    task: Task

    def __call__(self, keys: list[str], workers: int | None) -> list[Tag] | None:
        return task_probes(self.task).tag_failures(from_input_keys(keys), workers)


def tagged_rows(clusters: Sequence[Sequence[int]], limit: int) -> list[int]:
    """Archive rows to tag: at most `limit` taken round-robin over the clusters' members in
    centroid order (so that the members a report shows come first)."""
    rows = [r for layer in itertools.zip_longest(*clusters) for r in layer if r is not None]
    return rows[:limit]


def can_tag(task: Task) -> bool:
    """Whether the task's `Probes` tag failures at all: not those that keep the default, which
    tags none (no shard is run for them)."""
    return type(task_probes(task)).tag_failures is not Probes.tag_failures


@dataclass(frozen=True)
class TagStage(Stage):
    """Tags the keys of a shard (`tag_shards`) with `tagger`, in `workers` processes (None: the
    tagger's default); `key`: the column they are written in, the archive's."""

    tagger: Tagger
    key: str = "problem"
    workers: int | None = None

    def run(self, context: None, shard: Shard, scratch: Path) -> Outputs:
        keys = list(shard.spec["problems"])
        tags = self.tagger(keys, self.workers)
        if tags is None:  # the tagger tells nothing of these keys: none is tagged
            keys, tags = [], []
        frame = pd.DataFrame(
            {
                self.key: keys,
                "tag": [t.kind for t in tags],
                "why": [t.detail for t in tags],
                "tag_status": [t.status for t in tags],
            }
        ).astype(str)  # str columns, an empty frame's too
        return {f"analysis/tags/{shard.key}.parquet": parquet_bytes(frame)}


def tag_shards(keys: Sequence[str]) -> list[Shard]:
    """Shards named by a digest of their keys: one never overwrites another's tags."""
    chunks = [list(keys[i : i + TAG_CHUNK]) for i in range(0, len(keys), TAG_CHUNK)]
    return [Shard(TAG, _digest(chunk), {"problems": chunk}) for chunk in chunks]


def _digest(keys: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()[:16]


def read_tags(run: str | Path, key: str = "problem") -> pd.DataFrame:
    """`key` -> tag, why, tag_status, for every key a finished `tag` shard tagged (tags made
    before statuses were kept have none)."""
    frames = [pd.read_parquet(path) for path in ShardStore(run).outputs(TAG)]
    if not frames:
        return pd.DataFrame(columns=[key, *COLUMNS])
    tags = pd.concat(frames, ignore_index=True).drop_duplicates(key)
    return tags.reindex(columns=[key, *COLUMNS])


def tag(
    run: Path,
    keys: Sequence[str],
    stage: TagStage,
    executor: Executor | None = None,
    announce: Callable[[int], object] = lambda untagged: None,
) -> pd.DataFrame:
    """Tags each of `keys` that no finished shard has (`announce` is told how many first), in
    shards of `stage` on `executor` (None: in this process); returns every tag of the run
    (`read_tags`)."""
    untagged = sorted(set(keys) - set(read_tags(run, stage.key)[stage.key]))
    announce(len(untagged))
    run_stage(run, stage, tag_shards(untagged), executor)
    return read_tags(run, stage.key)
