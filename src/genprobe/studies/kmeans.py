"""Seeded k-means labels, shared by the studies that cluster what they found (SAGGA's seed
selection and clusters, the failure search's clusters); run code of a study may use it, as it
may not use `genprobe.analysis`."""

from __future__ import annotations

import warnings

import numpy as np


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
