"""What symbol rewriting declares for the probe studies: any non-empty string of the grammar's
symbols is an input (the rule rewrites each symbol alone); families repeat, drop or add a
symbol, as the paper's repeat, short and long suites shift the inputs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from genprobe.tasks.probing import Family, Perturbed, Probes
from genprobe.tasks.rewriting.task import RewritingTask
from genprobe.tasks.row_edits import deleted, gapped, inserted


@dataclass(frozen=True)
class RewritingProbes(Probes):
    task: RewritingTask

    def valid_inputs(self, src: np.ndarray) -> np.ndarray:
        """Any non-empty string of the grammar's symbols (the rule rewrites each alone)."""
        return _valid(self.task.n_symbols, src)

    def families(self) -> Mapping[str, Family]:
        n_symbols = self.task.n_symbols
        return {
            "repeat_symbol": Family(
                "one symbol (drawn) written twice in a row",
                lambda src, rng: _repeat(n_symbols, src, rng),
            ),
            "shorten": Family(
                "one symbol (drawn) dropped (inputs of one symbol are left out)",
                lambda src, rng: _shorten(n_symbols, src, rng),
            ),
            "lengthen": Family(
                "a symbol the input does not hold inserted at a drawn position",
                lambda src, rng: _lengthen(n_symbols, src, rng),
            ),
        }

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """The default's, and distinct symbols and the longest run of one symbol per input."""
        src = np.asarray(src)
        position = np.arange(src.shape[1])
        same = np.pad((src[:, 1:] == src[:, :-1]) & (src[:, 1:] > 0), ((0, 0), (1, 0)))
        start = np.maximum.accumulate(np.where(same, 0, position), axis=1)
        run = np.where(src > 0, position - start + 1, 0)
        distinct = np.array([len(np.unique(row[row > 0])) for row in src], dtype=np.int64)
        return {
            **super().features(src),
            "distinct": distinct,
            "longest run": run.max(axis=1, initial=0),
        }


def _valid(n_symbols: int, src: np.ndarray) -> np.ndarray:
    """(n,) non-empty rows of symbol ids 1..n_symbols, padding only after the end."""
    src = np.asarray(src)
    return (
        (src[:, :1] > 0).any(axis=1)
        & (src <= n_symbols).all(axis=1)
        & (src >= 0).all(axis=1)
        & ~gapped(src)
    )


def _repeat(n_symbols: int, src: np.ndarray, rng: np.random.Generator) -> Perturbed:
    rows = np.flatnonzero(_valid(n_symbols, src))
    length = (src[rows] > 0).sum(axis=1)
    at = (rng.random(len(rows)) * length).astype(np.int64)
    return Perturbed(inserted(src[rows], at, src[rows, at]), rows)


def _shorten(n_symbols: int, src: np.ndarray, rng: np.random.Generator) -> Perturbed:
    length = (src > 0).sum(axis=1)
    rows = np.flatnonzero(_valid(n_symbols, src) & (length > 1))
    at = (rng.random(len(rows)) * length[rows]).astype(np.int64)
    return Perturbed(deleted(src[rows], at), rows)


def _lengthen(n_symbols: int, src: np.ndarray, rng: np.random.Generator) -> Perturbed:
    symbol = np.arange(1, n_symbols + 1)
    absent = ~(src[:, :, None] == symbol).any(axis=1)  # (n, n_symbols)
    rows = np.flatnonzero(_valid(n_symbols, src) & absent.any(axis=1))
    keys = np.where(absent[rows], rng.random((len(rows), n_symbols)), -1)
    length = (src[rows] > 0).sum(axis=1)
    at = (rng.random(len(rows)) * (length + 1)).astype(np.int64)
    return Perturbed(inserted(src[rows], at, symbol[np.argmax(keys, axis=1)]), rows)
