"""The nearest training example of an input, by edit distance over tokens (RapidFuzz's
Levenshtein, in C++ across all pairs at once), and the distance of outputs to targets: what a
model that copies the closest case it saw would answer.

Inputs are token sequences (lists of tokens, any hashable), never joined into text: "1 2" and
"12" stay two tokens and one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

Tokens = Sequence[object]
Distance = Callable[..., float]  # a RapidFuzz scorer, or any function of two sequences
CELLS = 1 << 24  # distances held at once (64 MiB of int32): queries are taken in chunks


def nearest(
    queries: Sequence[Tokens],
    choices: Sequence[Tokens],
    allowed: np.ndarray | None = None,
    distance: Distance = Levenshtein.distance,
) -> tuple[np.ndarray, np.ndarray]:
    """For each query, the choice nearest to it by `distance` (edit distance by default; the
    first of those as near) and that distance: (Q,) indices and distances; with `allowed`,
    (S, N) bool (member s may choose choice i: the examples it trained on), one nearest per
    member: (S, Q) each, -1 and -1 where a member is allowed none. RapidFuzz's own scorers run
    in C++ over all pairs; any other function is called once per pair."""
    if not len(choices):
        raise ValueError("no choices to find the nearest of")
    rows = allowed if allowed is not None else np.ones((1, len(choices)), dtype=bool)
    if rows.shape[1] != len(choices):
        raise ValueError(f"allowed has {rows.shape[1]} columns for {len(choices)} choices")
    index = np.full((len(rows), len(queries)), -1, dtype=np.int64)
    found = np.full((len(rows), len(queries)), -1, dtype=np.float64)
    step = max(1, CELLS // len(choices))
    for start in range(0, len(queries), step):
        chunk = queries[start : start + step]
        d = process.cdist(chunk, choices, scorer=distance, dtype=np.float64, workers=-1)
        for member, mask in enumerate(rows):
            if not mask.any():
                continue
            masked = np.where(mask, d, np.inf)
            best = masked.argmin(axis=1)
            index[member, start : start + len(chunk)] = best
            found[member, start : start + len(chunk)] = masked[np.arange(len(chunk)), best]
    if np.array_equal(found, np.round(found)):  # an edit distance: counts
        found = found.astype(np.int64)
    return (index[0], found[0]) if allowed is None else (index, found)


def distances(a: Sequence[Tokens], b: Sequence[Tokens]) -> np.ndarray:
    """The edit distance of each a[i] to b[i], (n,)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} sequences against {len(b)}")
    if not len(a):
        return np.zeros(0, dtype=np.int64)
    return process.cpdist(a, b, scorer=Levenshtein.distance, dtype=np.int32, workers=-1).astype(
        np.int64
    )
