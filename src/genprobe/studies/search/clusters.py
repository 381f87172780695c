"""The one cluster analysis of both failure searches: the archive's clusters, each with a
readable slice, as records of one schema (the search's `clusters.json` at its root, SAGGA's
`analysis/clusters.json`).

A `Representation` is how an analysis sees its archive, a setting of it:

    task features    the failure search's (`analysis.py`): each task feature of the archived
                     inputs (`Probes.features`) standardized, constant ones dropped;
                     k = round(sqrt(n / 2)) clusters, at least 1, at most `MAX_CLUSTERS`;
                     seed `SEED`; no cluster merged (`TASK_FEATURES`)
    text embeddings  SAGGA's (`sagga/analysis.py`): the archived problems' text embeddings
                     (`--embedding`), `SAGGA_CLUSTERS` clusters, the run's seed; a cluster
                     whose slice nests in another's (all the other's conditions, and more) is
                     merged into it and the host's slice found again (`text_embeddings`)

`cluster_records` runs k-means over the representation (`studies/kmeans.py`) and finds each
cluster's slice (`slices.py`) over `described`: the features of the archive's rows, then of
the contrast's (what the target got right: the search's inputs scored 0, SAGGA's successes; at
most `MAX_CONTRAST`, a seeded sample, `contrast_sample`). One record per cluster, largest
first:

    size    how many archived inputs it holds
    rows    their archive rows, nearest its centre first
    apart   the features that set it apart (its mean at least `APART` standard deviations of
            the archive from the archive's, the farthest first, at most `FEATURES_SHOWN`), with
            their low, high and mean in it and in the whole archive (all_low, ...)
    slice   text ("has sin and size ≥ 9"), conditions ([feature, "==" | ">=" | "<=", value]:
            `slices.Literal`), coverage, precision, contrast (the contrast inputs it holds)

Each analysis adds its own fields: the failure search's the share of seeds failing, examples,
a nearby success, tags (`analysis.py`); SAGGA's `central`, the problems of the first `CENTRAL`
rows, whose mutants its nearby stage tries (`sagga/analysis.py`). SAGGA runs made before the
one schema hold members, central, slice (its text), coverage and precision per cluster:
`sagga/results.py` reads them as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from genprobe.studies.kmeans import cluster_labels
from genprobe.studies.search.slices import Slice, find_slice

MAX_CLUSTERS = 8  # of the task features
SAGGA_CLUSTERS = 10  # of the text embeddings
SEED = 0  # of the task features' k-means and of the failure search's contrast sample
APART = 0.5  # standard deviations of the archive
FEATURES_SHOWN = 3
MAX_CONTRAST = 5000  # inputs the target gets right a slice is told apart from (SAGGA's 5,000)
CENTRAL = 3  # SAGGA's central members, whose mutants are searched for a nearby success


@dataclass(frozen=True, eq=False)  # its embeddings an array
class Representation:
    """How an analysis sees its archive (see the module's docstring)."""

    embeddings: np.ndarray | None  # one row per archived input; None: the task features
    clusters: int | None  # k-means clusters; None: `cluster_count` of the archive's size
    seed: int
    merge_nested: bool


TASK_FEATURES = Representation(None, None, SEED, merge_nested=False)


def text_embeddings(vectors: np.ndarray, seed: int) -> Representation:
    """SAGGA's representation: `vectors` (one row per archived problem), seeded `seed`."""
    return Representation(vectors, SAGGA_CLUSTERS, seed, merge_nested=True)


def cluster_count(n: int) -> int:
    return max(1, min(MAX_CLUSTERS, round(np.sqrt(n / 2))))


def contrast_sample(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """What the slices are told apart from: at most `MAX_CONTRAST` rows of `frame`, a sample
    seeded `seed`."""
    return frame.sample(min(len(frame), MAX_CONTRAST), random_state=seed)


def cluster_records(
    representation: Representation, described: pd.DataFrame, archived: int
) -> list[dict[str, Any]]:
    """The records of the archive's clusters, largest first (see the module's docstring);
    `described`: the features of the `archived` archive rows, then of the contrast's.

    Each cluster's rows are ordered by their distance to its centre computed as each analysis
    always has (squared distance in pandas' arithmetic over the task features; Euclidean in
    NumPy's over the embeddings, the rows as k-means and the merging put them), since near ties
    (integer features, float32 embeddings) fall on the last bits of that arithmetic; and
    clusters of one size as each always had them (in k-means label order; by their nearest
    row)."""
    if not archived:
        return []
    numbers = described.iloc[:archived].astype(float)
    spread = numbers.std(ddof=0)
    varying = numbers.loc[:, spread > 0]
    z = (varying - varying.mean()) / spread[varying.columns]
    embeddings = representation.embeddings
    vectors = z.to_numpy() if embeddings is None else embeddings
    count = representation.clusters or cluster_count(archived)
    found = []
    for rows, found_slice in _clusters(
        vectors, count, representation.seed, described, representation.merge_nested
    ):
        centre = z.iloc[rows].mean()
        if embeddings is None:
            distance = ((z.iloc[rows] - centre) ** 2).sum(axis=1).to_numpy()
        else:
            distance = np.linalg.norm(embeddings[rows] - embeddings[rows].mean(axis=0), axis=1)
        apart = centre[centre.abs() >= APART].abs().sort_values(ascending=False, kind="stable")
        found.append(
            {
                "size": len(rows),
                "rows": rows[np.argsort(distance, kind="stable")].tolist(),
                "apart": [
                    {
                        "feature": name,
                        "low": float(numbers[name].iloc[rows].min()),
                        "high": float(numbers[name].iloc[rows].max()),
                        "all_low": float(numbers[name].min()),
                        "all_high": float(numbers[name].max()),
                        "mean": float(numbers[name].iloc[rows].mean()),
                        "all_mean": float(numbers[name].mean()),
                    }
                    for name in apart.index[:FEATURES_SHOWN]
                ],
                "slice": {
                    "text": found_slice.text,
                    "conditions": [[c.feature, c.op, c.value] for c in found_slice.literals],
                    "coverage": found_slice.coverage,
                    "precision": found_slice.precision,
                    "contrast": found_slice.successes,
                },
            }
        )
    if embeddings is None:
        return sorted(found, key=lambda c: -c["size"])
    return sorted(found, key=lambda c: (-c["size"], c["rows"][0]))


def _clusters(
    vectors: np.ndarray, count: int, seed: int, described: pd.DataFrame, merge_nested: bool
) -> list[tuple[np.ndarray, Slice]]:
    """k-means (`count` clusters, `seed`) over `vectors`, each cluster's rows with its slice
    over `described`, nested ones merged with `merge_nested`, in k-means label order (a host
    keeps its place, its guests' rows after its own)."""
    labels = cluster_labels(vectors, count, seed)
    is_contrast = np.arange(len(described)) >= len(vectors)
    groups = {int(label): np.flatnonzero(labels == label) for label in np.unique(labels)}

    def slice_of(rows: np.ndarray) -> Slice:
        held = np.zeros(len(described), dtype=bool)
        held[rows] = True
        return find_slice(described, held, is_contrast)

    slices = {label: slice_of(rows) for label, rows in groups.items()}
    while merge_nested and (nested := _nested(slices)):
        guest, host = nested
        groups[host] = np.concatenate([groups[host], groups.pop(guest)])
        slices[host] = slice_of(groups[host])
        del slices[guest]
    return [(rows, slices[label]) for label, rows in groups.items()]


def _nested(slices: dict[int, Slice]) -> tuple[int, int] | None:
    """The first cluster whose slice nests in another's (that has conditions), and that other."""
    for a in slices:
        for b in slices:
            if b != a and slices[b].literals and slices[a].implies(slices[b]):
                return a, b
    return None
