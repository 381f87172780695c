"""Search errors against model errors over ranked candidates (Welleck et al. 2022, §6 and
Table 12), counted once for every study: the brittleness study's suites and the probe's.

Example:
    first = np.array([np.nan, 2.0])                 # no right candidate; the second is right
    logprobs = np.array([[-1.0, -2.0], [-1.0, -3.0]])
    unresolved(first, logprobs, np.array([-1.5, -0.5]), 1)    -> (2, 0.5)
"""

from __future__ import annotations

import numpy as np


def unresolved(
    first_correct: np.ndarray, logprobs: np.ndarray, reference: np.ndarray, k: int
) -> tuple[int, float]:
    """Among the failures at k (no right candidate among the first k) whose reference was
    scored, how many there are and the share whose reference scores below the k-th candidate
    (the last scored of the first k; the top one for k = 1): failures a perfect search over the
    model's own probabilities would leave unresolved (NaN share where there are none).

    Args:
        first_correct: (n,) the 1-based rank of the first right candidate, NaN for none.
        logprobs: (n, K) each candidate's log-probability in rank order, NaN where none.
        reference: (n,) the model's log-probability of a right output, NaN where not scored.
    """
    kth = _last_known(np.asarray(logprobs, dtype=float)[:, :k])
    first, reference = np.asarray(first_correct, float), np.asarray(reference, float)
    failures = (np.isnan(first) | (first > k)) & ~np.isnan(kth) & ~np.isnan(reference)
    below = kth[failures] > reference[failures]
    return int(failures.sum()), float(below.mean()) if len(below) else float("nan")


def _last_known(logprobs: np.ndarray) -> np.ndarray:
    """(n,) each row's last log-probability that is not NaN (NaN where none is)."""
    known = ~np.isnan(logprobs)
    if not logprobs.shape[1]:
        return np.full(len(logprobs), np.nan)
    last = logprobs.shape[1] - 1 - np.argmax(known[:, ::-1], axis=1)
    return np.where(known.any(axis=1), logprobs[np.arange(len(logprobs)), last], np.nan)
