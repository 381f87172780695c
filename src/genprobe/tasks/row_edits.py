"""Edits of padded id rows (0 after each row's end), vectorized over rows, for the tasks'
perturbation families: a token inserted or deleted at a column per row, tokens appended; which
rows are not padded that way; and padding columns trimmed."""

from __future__ import annotations

import numpy as np


def trim(ids: np.ndarray, pad: int) -> np.ndarray:
    """Drop the trailing columns that are `pad` in every row."""
    width = int((ids != pad).sum(axis=1).max(initial=0))
    return ids[:, :width]


def inserted(src: np.ndarray, at: np.ndarray, token: np.ndarray) -> np.ndarray:
    """Row i with `token[i]` put at column `at[i]`, the rest shifted right (trimmed)."""
    column = np.arange(src.shape[1] + 1)[None, :]
    at = np.asarray(at)[:, None]
    moved = np.take_along_axis(np.pad(src, ((0, 0), (0, 1))), column - (column > at), axis=1)
    return trim(np.where(column == at, np.asarray(token)[:, None], moved), 0)


def deleted(src: np.ndarray, at: np.ndarray) -> np.ndarray:
    """(n, L) ids: row i without its token at column `at[i]` (trailing padding trimmed)."""
    column = np.arange(src.shape[1])[None, :]
    source = column + (column >= np.asarray(at)[:, None])
    return trim(np.take_along_axis(np.pad(src, ((0, 0), (0, 1))), source, axis=1), 0)


def appended(src: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """(n, L + T) ids: each row of `src` followed by the same row of `tail` (0-padded too)."""
    length = (src > 0).sum(axis=1)
    out = np.zeros((len(src), src.shape[1] + tail.shape[1]), dtype=np.int64)
    out[:, : src.shape[1]] = src
    rows, columns = np.nonzero(tail > 0)
    out[rows, length[rows] + columns] = tail[rows, columns]
    return trim(out, 0)


def gapped(src: np.ndarray) -> np.ndarray:
    """(n,) whether a row has padding before a token (no input of any task)."""
    src = np.asarray(src)
    return ((src[:, :-1] == 0) & (src[:, 1:] > 0)).any(axis=1)
