"""Splits and shifted test suites: which inputs each one holds, generated from a seed.

Every split draws from its own random stream (the seed and the split's name), in chunks, so the
first n examples of a split do not depend on how many are asked for. Every split but `train` is
disjoint by input from the canonical training set of the same seed.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from genprobe.errors import ConfigError
from genprobe.tasks.rewriting.grammar import Grammar
from genprobe.tasks.sampling import split_stream
from genprobe.tasks.task import Examples, Split

CHUNK = 10_000
CANONICAL_TRAIN_SIZE = 100_000

SPLITS: dict[str, Split] = {
    "train": Split("training data: length 5-10, no repeated symbol", (5, 10), 100_000),
    "validation": Split("like train; used for early stopping", (5, 10), 2_000, disjoint=True),
    "standard": Split("in distribution: length 5-10, no repeats", (5, 10), 2_000, disjoint=True),
    "repeat": Split("length 5-10 with runs of a repeated symbol", (5, 10), 2_000, disjoint=True),
    "short": Split("shorter than training: length 1-4", (1, 4), 2_000, disjoint=True),
    "long": Split("longer than training: length 11-15", (11, 15), 2_000, disjoint=True),
    "uncharacteristic": Split(
        "the paper's appendix validation set: length 3-12 with repeats", (3, 12), 5_000,
        disjoint=True,
    ),
}  # fmt: skip
# the splits of adjacent runs of one symbol, at least one >= 2 (the others: no symbol twice)
REPEATS = frozenset({"repeat", "uncharacteristic"})
MAX_RUN = 6  # longest run of one symbol in the repeat suites (the authors' data)
SINGLE_RUN_PROB = 0.5  # chance a run has length 1; others uniform in 2..MAX_RUN


def generate(split: str, n: int, seed: int, grammar: Grammar | None = None) -> Examples:
    """Generate `n` examples of a split.

    Args:
        split: a name in `SPLITS`.
        n: how many examples.
        seed: the data seed; the split's own stream is derived from it and the split's name.
        grammar: the grammar (default: the authors' grammar, without its quirk).

    Raises:
        ConfigError: unknown split, n < 1, or a length range the grammar cannot fill.
    """
    grammar = grammar or Grammar()
    if split not in SPLITS:
        raise ConfigError("suite", f"one of {', '.join(SPLITS)}", split)
    spec, repeats = SPLITS[split], split in REPEATS
    if not isinstance(n, int) or n < 1:
        raise ConfigError("n", "an integer >= 1", n)
    if not repeats and spec.lengths[1] > grammar.n_symbols:
        raise ConfigError(
            "n_symbols", f">= {spec.lengths[1]} for the {split} suite", grammar.n_symbols
        )
    exclude = None if split == "train" else _training_inputs(seed, grammar)
    make = _runs if repeats else _distinct
    src, tgt, have = [], [], 0
    for chunk in itertools.count():
        # A chunk's content depends only on (seed, split, chunk): the first n examples are the
        # same whatever n is asked for.
        rng = split_stream(seed, split, chunk)
        block = make(rng, CHUNK, spec.lengths, grammar.n_symbols)
        if exclude is not None:
            block = block[[key not in exclude for key in _row_key_list(block)]]
        src.append(block)
        tgt.append(grammar.sample_outputs(block, rng))
        have += len(block)
        if have >= n:
            break
        if chunk >= 100 and have == 0:
            raise ConfigError("split", "a split with inputs outside the training set", split)
    return Examples(np.concatenate(src)[:n], np.concatenate(tgt)[:n])


def _distinct(
    rng: np.random.Generator, n: int, lengths: tuple[int, int], n_symbols: int
) -> np.ndarray:
    """Uniform length, then symbols drawn without replacement."""
    lo, hi = lengths
    length = rng.integers(lo, hi + 1, size=n)
    symbols = np.argsort(rng.random((n, n_symbols)), axis=1)[:, :hi] + 1
    return np.where(np.arange(hi)[None, :] < length[:, None], symbols, 0)


def _runs(rng: np.random.Generator, n: int, lengths: tuple[int, int], n_symbols: int) -> np.ndarray:
    """Uniform length, split into adjacent runs of distinct symbols, at least one run >= 2."""
    lo, hi = lengths
    out = np.zeros((n, hi), dtype=np.int64)
    for row in range(n):  # data generation, not a hot loop: a few µs per example
        length = int(rng.integers(max(lo, 2), hi + 1))
        while True:
            runs, left = [], length
            while left:
                run = 1 if rng.random() < SINGLE_RUN_PROB else int(rng.integers(2, MAX_RUN + 1))
                runs.append(min(run, left))
                left -= runs[-1]
            if max(runs) >= 2 and len(runs) <= n_symbols:
                break
        symbols = rng.permutation(n_symbols)[: len(runs)] + 1
        out[row, :length] = np.repeat(symbols, runs)
    return out


def _row_key_list(src: np.ndarray) -> list[bytes]:
    """One key per input sequence, independent of the padding width."""
    return [row[row > 0].tobytes() for row in np.asarray(src, dtype=np.int64)]


@functools.lru_cache(maxsize=4)
def _training_inputs(seed: int, grammar: Grammar) -> frozenset[bytes]:
    """The inputs of the canonical training set of a seed, which no other split holds."""
    return frozenset(_row_key_list(generate("train", CANONICAL_TRAIN_SIZE, seed, grammar).src))
