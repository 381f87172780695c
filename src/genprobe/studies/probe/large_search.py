"""The `large-search` stage (`--search-budget B`): is a failure a search error or a model error?
Every member searches each input of the chosen suites with a beam of B and, at each of
`--search-temperatures`, the distinct outputs among B samples; every distinct answer of a
member and input is judged once (`studies/large_search.py`, the brittleness study's large
search on any task and model: Welleck et al. 2022, section 6.1, Figure 3).

Result rows (`large-search/<suite>/<chunk>.parquet`, one per member, input, decoding and rank):
member, suite, index (the input's position in its suite, as in the decode stage's rows),
decoding ("beam", "T=0.6", ...), rank (1-based, within its decoding), answer (the model's
completion, or its output in the task's tokens), logprob (NaN where the model gives none),
outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genprobe.runs.shards import Outputs, Shard, parquet_bytes
from genprobe.studies.large_search import large_search
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.decode import ModelStage
from genprobe.studies.probe.study import LARGE_SEARCH
from genprobe.studies.probe.suites import Suite
from genprobe.under_test.sequences import SequenceModel

# beam hypotheses (inputs x budget) per shard: a beam of 500 is heavy, and a small shard loses
# little when a run is interrupted
HYPOTHESES = 2048


def search_shards(suites: list[Suite], config: ProbeConfig) -> list[Shard]:
    """Shards of the inputs of the suites `--search-suites` names (default: every one the
    report shows, not the originals decoded only for pairing), of those `--search-where`
    keeps where it is given (a shard's spec then lists their positions, `index`)."""
    assert config.search_budget is not None
    chosen = set(config.search_suites) or {s.key for s in suites if s.kind != "origin"}
    per_shard = max(1, HYPOTHESES // config.search_budget)

    def spec(suite: Suite, chunk: int, rows: np.ndarray) -> dict[str, Any]:
        found = {"suite": suite.key, "chunk": chunk, "start": int(rows[0])}
        if config.search_where:
            found["index"] = rows.tolist()
        return {**found, "src": suite.src[rows].tolist()}

    return [
        Shard(LARGE_SEARCH, f"{suite.key}.{chunk:04d}", spec(suite, chunk, rows))
        for suite in suites
        if suite.key in chosen
        for chunk, rows in enumerate(_chunks(searched(suite, config.search_where), per_shard))
    ]


def searched(suite: Suite, where: Sequence[tuple[str, Any]]) -> np.ndarray:
    """The positions of the inputs of `suite` that every (column, "value|value…") of `where`
    keeps: all of them where it is empty, none of a suite without such a column."""
    keep = np.ones(len(suite.src), dtype=bool)
    for column, values in where:
        held = suite.columns.get(column)
        keep &= False if held is None else np.isin(held, str(values).split("|"))
    return np.flatnonzero(keep)


def _chunks(rows: np.ndarray, size: int) -> list[np.ndarray]:
    return [rows[start : start + size] for start in range(0, len(rows), size)]


def search_path(suite: str, chunk: int) -> str:
    return f"{LARGE_SEARCH}/{suite}/{chunk:04d}.parquet"


class LargeSearchStage(ModelStage):
    """Searches a few inputs of a suite with every member."""

    def run(self, context: SequenceModel, shard: Shard, scratch: Path) -> Outputs:
        spec, config = shard.spec, self.config
        assert config.search_budget is not None
        frame = large_search(
            context, self.inputs(spec), config.search_budget, config.search_temperatures,
            config.seed,
        )  # fmt: skip
        frame["member"] = np.array(context.members, dtype=object)[frame["member"]]
        frame.insert(1, "suite", spec["suite"])
        # each input's place in its suite: listed (`--search-where`), else the shard's run of them
        place = frame.pop("input").to_numpy()  # among the shard's inputs
        index = np.asarray(spec["index"])[place] if "index" in spec else place + int(spec["start"])
        frame.insert(2, "index", index)
        frame = frame.rename(columns={"judgement": "outcome"})
        return {search_path(spec["suite"], int(spec["chunk"])): parquet_bytes(frame)}
