"""Sparse parity: the parity of k secret bits of an n-bit string.

After Barak, Edelman, Goel, Kakade, Malach & Zhang (2022), "Hidden progress in deep learning:
SGD learns parities near the computational limit" (arXiv 2207.08799): (n, k)-sparse parity on
uniformly random strings, which SGD learns after a long plateau with no visible progress. The
paper writes bits as ±1 and the label as their product; here bits are the tokens 0/1 and the
label the sum of the k bits mod 2 (the same function). The k relevant positions follow from
`subset_seed` alone, so that the rule is fixed by the options.

Held-out strings are exactly disjoint from training ones without storing either: the 2^n strings
are cut in two halves by one bit of a BLAKE2b hash of the string (a pseudo-random half, unlike a
cut by a parity, which could shift the label's distribution), training draws uniformly from one
half and `held_out` from the other. From 2 bits on, both halves hold strings (from 9 bits on,
about half each); 1 bit is refused, as both of its strings fall in the held-out half.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from genprobe.errors import ConfigError
from genprobe.options import is_integer
from genprobe.tasks.sampling import split_stream
from genprobe.tasks.task import NO_ANSWER, DeterministicTask, Examples, Split

MAX_BITS = 1_000
DRAWS = 4_096  # strings drawn per chunk of a split's random stream, before half are dropped


def held_out_half(bits: np.ndarray) -> np.ndarray:
    """(m,) whether each of (m, n) bit strings is in the held-out half of all n-bit strings."""
    packed = np.packbits(bits.astype(np.uint8), axis=1)
    digests = (hashlib.blake2b(row.tobytes(), digest_size=1).digest()[0] for row in packed)
    return np.fromiter(digests, dtype=np.uint8, count=len(packed)) % 2 == 1


@dataclass(frozen=True)
class SparseParity(DeterministicTask):
    """The parity of k fixed positions of n random bits; the other n - k bits are noise.

    Input n tokens 0/1, output 0 or 1. `train` and `held_out` draw uniform strings from two
    disjoint halves of all 2^n strings. With the defaults the relevant bits are 20, 24 and 32
    (counting from 0).

    Examples:
        0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0  -> 0
        0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0  -> 1
        1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 0 1 1 1 1 1 1 1  -> 0
    """

    n: int = 40  # bits per string
    k: int = 3  # relevant bits
    subset_seed: int = 0  # which k bits are relevant: drawn from this seed

    validation_split = "held_out"

    def __post_init__(self) -> None:
        if not is_integer(self.n) or not 2 <= self.n <= MAX_BITS:
            # n = 1: both strings fall in the held-out half, none is left for training
            raise ConfigError("n", f"an integer in 2..{MAX_BITS}", self.n)
        if not is_integer(self.k) or not 1 <= self.k <= self.n:
            raise ConfigError("k", f"an integer in 1..n ({self.n})", self.k)
        if not is_integer(self.subset_seed) or self.subset_seed < 0:
            raise ConfigError("subset_seed", "an integer >= 0", self.subset_seed)

    @property
    def relevant(self) -> np.ndarray:
        """The k relevant positions, ascending, counted from 0."""
        return np.sort(np.random.default_rng(self.subset_seed).choice(self.n, self.k, False))

    @property
    def source_vocab(self) -> tuple[str, ...]:
        return ("0", "1")

    @property
    def target_vocab(self) -> tuple[str, ...]:
        return ("0", "1")

    def splits(self) -> Mapping[str, Split]:
        drawn = f"uniform {self.n}-bit strings, parity of bits {self.relevant.tolist()}"
        return {
            "train": Split(f"{drawn}, from the training half", (self.n, self.n), 100_000),
            "held_out": Split(
                f"{drawn}, from the other half", (self.n, self.n), 1_000, disjoint=True
            ),
        }

    def suites(self) -> tuple[str, ...]:
        return ("held_out",)

    def generate(self, split: str, n: int, seed: int) -> Examples:
        self.checked_split(split, n)
        chunks, drawn = [], 0
        while drawn < n:  # whole chunks, cut after: the first n do not depend on n
            bits = split_stream(seed, split, len(chunks)).integers(0, 2, size=(DRAWS, self.n))
            chunks.append(bits[held_out_half(bits) == (split == "held_out")])
            drawn += len(chunks[-1])
        src = np.concatenate(chunks)[:n] + 1
        return Examples(src, self.solve(src))

    def solve(self, src: np.ndarray) -> np.ndarray:
        src = np.asarray(src)
        src = np.pad(src, ((0, 0), (0, max(0, self.n - src.shape[1]))))
        ok = ((src[:, : self.n] == 1) | (src[:, : self.n] == 2)).all(axis=1)
        ok &= (src[:, self.n :] == 0).all(axis=1)
        parity = (src[:, self.relevant] - 1).sum(axis=1) % 2
        return np.where(ok, parity, NO_ANSWER)[:, None]

    def max_output_length(self, input_length: int) -> int:
        return 1
