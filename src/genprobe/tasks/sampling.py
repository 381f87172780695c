"""Seeded draws for a task's `generate`: each split's own random streams, and uniform strings.

A split's draws depend only on the data seed, the split's name and the chunk, never on how
many examples were asked for, so the first n examples of a split are the same for any n.
"""

from __future__ import annotations

import zlib

import numpy as np

STRING_CHUNK = 256  # strings drawn per random stream by `random_strings`


def split_stream(seed: int, split: str, chunk: int = 0) -> np.random.Generator:
    """The random stream of one chunk of one split."""
    return np.random.default_rng([seed, zlib.crc32(split.encode()), chunk])


def random_strings(
    seed: int, split: str, n: int, lengths: tuple[int, int], symbols: int
) -> np.ndarray:
    """(n, longest) input ids: n strings of symbols 1..`symbols` drawn uniformly (0 pads
    after), each of a length drawn uniformly from `lengths` (shortest, longest), in chunks of
    `STRING_CHUNK` from `split_stream`, so that the first n never depend on n."""
    shortest, longest = lengths
    chunks = []
    for chunk in range(-(-n // STRING_CHUNK)):
        rng = split_stream(seed, split, chunk)
        length = rng.integers(shortest, longest + 1, size=STRING_CHUNK)
        ids = rng.integers(1, symbols + 1, size=(STRING_CHUNK, longest))
        chunks.append(np.where(np.arange(longest) < length[:, None], ids, 0))
    return np.concatenate(chunks)[:n] if chunks else np.zeros((0, longest), np.int64)
