"""Which novel failures seed the next generation (SAGGA's `_select_fitness`, `_select_kmeans`;
also the failure search's `--selection fitness|kmeans`).

`fitness`: the `size` fittest. `kmeans` (the default): k-means over the problems' embeddings
(min(n, clusters) clusters, seeded, so a rerun picks the same), then the fittest `size //
clusters` of each cluster, so the next generation spreads over several kinds of failure
instead of crowding around one. An empty candidate set selects nothing (the original crashed).

Example:
    select_kmeans(texts, fitness, embedder, size=100, clusters=10, seed=43)  -> row positions
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from genprobe.studies.kmeans import cluster_labels
from genprobe.studies.search.embedding import Embedder


def _fittest(fitness: np.ndarray, rows: np.ndarray, n: int) -> list[int]:
    # stable: among equal fitness, earlier rows first
    order = rows[np.argsort(-fitness[rows], kind="stable")]
    return [int(i) for i in order[:n]]


def select_fitness(fitness: np.ndarray, size: int) -> list[int]:
    return _fittest(np.asarray(fitness, dtype=float), np.arange(len(fitness)), size)


def select_kmeans(
    texts: Sequence[str],
    fitness: np.ndarray,
    embedder: Embedder,
    *,
    size: int,
    clusters: int,
    seed: int,
) -> list[int]:
    if not len(texts):
        return []
    fitness = np.asarray(fitness, dtype=float)
    labels = cluster_labels(embedder.embed(texts), clusters, seed)
    per_cluster = max(1, size // clusters)
    chosen: list[int] = []
    for label in np.unique(labels):
        chosen += _fittest(fitness, np.flatnonzero(labels == label), per_cluster)
    return sorted(chosen)


def next_seeds(
    found: pd.DataFrame,
    key: str,
    base: Sequence[str],
    how: str,
    embedder: Embedder,
    *,
    size: int,
    clusters: int,
    seed: int,
) -> list[str]:
    """SAGGA's seeds of the next generation: `size` of the inputs just archived (`found`, with
    columns `key`, `text` and `fitness`), selected `how` (kmeans or fitness), then every input
    of `base` not among them."""
    fitness = found["fitness"].to_numpy()
    if how == "fitness":
        rows = select_fitness(fitness, size)
    else:
        texts = found["text"].tolist()
        rows = select_kmeans(texts, fitness, embedder, size=size, clusters=clusters, seed=seed)
    chosen = found[key].iloc[rows].tolist()
    return chosen + [b for b in base if b not in chosen]
