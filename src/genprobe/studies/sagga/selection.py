"""Which novel failures seed the next generation (SAGGA's `_select_fitness`, `_select_kmeans`).

`fitness`: the `size` fittest. `kmeans` (the default): k-means over the problems' embeddings
(min(n, clusters) clusters, seeded, so a rerun picks the same), then the fittest `size //
clusters` of each cluster, so the next generation spreads over several kinds of failure
instead of crowding around one. An empty candidate set selects nothing (the original crashed).

Example:
    select_kmeans(texts, fitness, embedder, size=100, clusters=10, seed=43)  -> row positions
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from genprobe.studies.sagga.embedding import Embedder


def _fittest(fitness: np.ndarray, rows: np.ndarray, n: int) -> list[int]:
    # stable: among equal fitness, earlier rows first
    order = rows[np.argsort(-fitness[rows], kind="stable")]
    return [int(i) for i in order[:n]]


def select_fitness(fitness: np.ndarray, size: int) -> list[int]:
    return _fittest(np.asarray(fitness, dtype=float), np.arange(len(fitness)), size)


def cluster_labels(vectors: np.ndarray, clusters: int, seed: int) -> np.ndarray:
    """k-means labels with min(rows, clusters) clusters (all zeros for one row)."""
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    n = min(len(vectors), clusters)
    if n <= 1:
        return np.zeros(len(vectors), dtype=int)
    # One thread: beside the search's worker processes, OpenMP threads that spin on busy cores
    # made this ten times slower (32 s instead of 3 s for 700 problems, measured).
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore", ConvergenceWarning)  # fewer distinct points than k
        return KMeans(n_clusters=n, n_init=10, random_state=seed).fit_predict(vectors)


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
