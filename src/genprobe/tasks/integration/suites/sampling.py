"""Seeded draws for the suite builders: per-set generators, distinct pairs and tuples, samples.

Each set draws from its own generator, seeded by (seed, the set's name and part), so adding or
resizing one set never shifts the numbers of another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from genprobe.errors import ConfigError

DEFAULT_SEED = 43  # SAGGA's


def sub_seed(seed: int, *keys: str) -> int:
    """A 63-bit seed fixed by `seed` and the names `keys` (the same on every machine)."""
    digest = hashlib.sha256("/".join([str(seed), *keys]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def set_rng(seed: int, *keys: str) -> np.random.Generator:
    """The generator of the set named by `keys`."""
    return np.random.default_rng(sub_seed(seed, *keys))


def random_tuples(rng: np.random.Generator, size: int, k: int, n: int) -> list[tuple[int, ...]]:
    """`n` distinct ordered k-tuples of indices in range(size), repeats inside a tuple allowed
    (SAGGA's `random_tuples`), in the order drawn.

    Raises:
        ConfigError: fewer than `n` such tuples exist (SAGGA's version loops forever).
    """
    total = size**k
    if n > total:
        raise ConfigError(
            "the number of tuples", f"at most {total} (the distinct {k}-tuples of {size} items)", n
        )
    if total >= 2**63:  # NumPy draws from int64; never near this with real primitive counts
        raise ConfigError("the number of items", f"below {round(2 ** (63 / k))} for k = {k}", size)
    tuples = []
    for code in rng.choice(total, size=n, replace=False):
        digits = []
        for _ in range(k):
            code, digit = divmod(int(code), size)
            digits.append(digit)
        tuples.append(tuple(reversed(digits)))
    return tuples


def distinct_pairs(rng: np.random.Generator, values: range, n: int) -> list[tuple[int, int]]:
    """`n` distinct ordered pairs (a1, a2) of `values`, a1 = a2 allowed."""
    return [(values[i], values[j]) for i, j in random_tuples(rng, len(values), 2, n)]


def distinct_values(rng: np.random.Generator, values: range, n: int) -> list[int]:
    """`n` distinct values of `values`, in the order drawn."""
    return [values[i] for (i,) in random_tuples(rng, len(values), 1, n)]


def sample_in_order(rng: np.random.Generator, items: Sequence, n: int | None) -> list:
    """`n` of `items` without replacement, kept in their order (all of them if `n` is None or
    at least their number)."""
    if n is None or n >= len(items):
        return list(items)
    return [items[i] for i in sorted(rng.choice(len(items), size=n, replace=False))]


def scaled_count(full: int, n: int, paper_n: int) -> int:
    """How many of a fixed set of `full` problems a suite of size `n` takes: `full` at the
    paper's size `paper_n`, in proportion otherwise, never more than `full`."""
    return min(full, round(full * n / paper_n))


def check_n(n: int | None, name: str = "n") -> None:
    if n is not None and n < 1:
        raise ConfigError(name, "at least 1", n)
