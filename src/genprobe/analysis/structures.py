"""Unobserved local structures (Bogin, Gupta & Berant 2022, *Unobserved Local Structures Make
Compositional Generalization Hard*): a test input is hard for a member when it holds a local
structure that none of the member's training inputs held.

A task names the local structures of an input (`Task.local_structures`: SCAN's primitive with
its modifier, the rewriting task's adjacent symbol pairs, an integrand's operator with its
child). With subset seeds every member saw its own training examples, so "unseen" is per
member: `unseen_counts` counts, for each member and test input, the input's structures that
the member's training inputs never held, and `failure_by_unseen` asks how well that count
predicts the member's failures (the area under the ROC curve, 0.5: no better than chance).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import MultiLabelBinarizer

Structures = Sequence[Sequence[str]]  # per input, its local structures


def unseen_counts(train: Structures, trained: np.ndarray, queries: Structures) -> np.ndarray:
    """(S, Q): for member s (row s of `trained`, (S, N) bool over the training inputs) and
    query q, how many distinct structures of q no training input of member s held."""
    binarizer = MultiLabelBinarizer(sparse_output=True).fit([*train, *queries])
    held = binarizer.transform(train).astype(np.int64)  # (N, V)
    asked = binarizer.transform(queries).astype(np.int64)  # (Q, V)
    seen = sparse.csr_matrix(trained.astype(np.int64)) @ held > 0  # (S, V)
    unseen = 1 - seen.toarray().astype(np.int64)
    return np.asarray(asked @ unseen.T).T


def failure_by_unseen(
    unseen: np.ndarray, right: np.ndarray, asked: np.ndarray | None = None
) -> pd.DataFrame:
    """One row per member (row of `unseen` and `right`, (S, Q)), over the queries `asked` of it
    ((S, Q) bool; default all): how many, how many hold an unseen structure, the failure rate
    of those with one and of those without, and the AUC of the unseen count as a predictor of
    failure (NaN where the member failed all or none)."""
    asked = np.ones_like(right, dtype=bool) if asked is None else asked
    rows = []
    for counts, hits, mask in zip(unseen, right, asked, strict=True):
        counts, failed = counts[mask], ~hits[mask]
        has = counts > 0
        rows.append({
            "examples": int(mask.sum()),
            "with_unseen": int(has.sum()),
            "failure_with": failed[has].mean() if has.any() else np.nan,
            "failure_without": failed[~has].mean() if (~has).any() else np.nan,
            "auc": roc_auc_score(failed, counts) if 0 < failed.sum() < len(failed) else np.nan,
        })  # fmt: skip
    return pd.DataFrame(rows)
