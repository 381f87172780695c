"""The symbol-rewriting grammar of Weber, Shekhar & Balasubramanian (2018).

Each input symbol with id i owns the output tokens ``{letter}{i}_{variant}``; it is rewritten as
one token per letter, in an order drawn from a weighted distribution over permutations of the
letters, each token with a uniformly drawn variant.

Examples (the authors' grammar: 40 symbols, letters ABC, 2 variants)::

    D FS E   ->  A4_1 B4_1 C4_1  B31_2 C31_1 A31_1  A5_2 C5_2 B5_1
    O O O    ->  A15_2 C15_1 B15_2  C15_1 A15_2 B15_1  C15_2 B15_1 A15_1
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from genprobe.errors import ConfigError

# The authors' input alphabet, ids 1..40 in this order: A..Z without S, then AS..OS.
AUTHORS_SYMBOLS = (*"ABCDEFGHIJKLMNOPQR", *"TUVWXYZ", *(f"{c}S" for c in "ABCDEFGHIJKLMNO"))


@dataclass(frozen=True)
class Grammar:
    """A rewriting grammar; the defaults are the authors' grammar without its `B` quirk."""

    n_symbols: int = 40
    letters: str = "ABC"
    n_variants: int = 2
    # Probability of the in-order permutation (ABC); the other permutations share the rest
    # equally. The authors: 0.15 for ABC, 0.17 for each of the other five. None = uniform.
    identity_weight: float | None = 0.15
    # The authors' grammar rewrites input `B` with the CBA permutation as `C1 B1 A1`, i.e. with
    # the tokens of symbol `A` (id 1). Off by default; on to reproduce their data exactly.
    authors_b_quirk: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.n_symbols, int) or self.n_symbols < 1:
            raise ConfigError("n_symbols", "an integer >= 1", self.n_symbols)
        if not self.letters or len(set(self.letters)) != len(self.letters):
            raise ConfigError("letters", "a non-empty string of distinct letters", self.letters)
        if not all(c.isalpha() and c.isupper() for c in self.letters):
            raise ConfigError("letters", "upper-case letters", self.letters)
        if not isinstance(self.n_variants, int) or self.n_variants < 1:
            raise ConfigError("n_variants", "an integer >= 1", self.n_variants)
        if self.identity_weight is not None and not 0.0 <= self.identity_weight <= 1.0:
            raise ConfigError(
                "identity_weight", "a probability in [0, 1] or None", self.identity_weight
            )
        if self.authors_b_quirk and (self.n_symbols < 2 or self.letters != "ABC"):
            raise ConfigError(
                "authors_b_quirk", "used only with letters ABC and >= 2 symbols", True
            )

    @property
    def group_size(self) -> int:
        """Output tokens per input symbol."""
        return len(self.letters)

    @cached_property
    def symbols(self) -> tuple[str, ...]:
        """Input symbol names in id order (id = index + 1); beyond 40: `S41`, `S42`, …"""
        extra = (f"S{i}" for i in range(len(AUTHORS_SYMBOLS) + 1, self.n_symbols + 1))
        return (*AUTHORS_SYMBOLS[: self.n_symbols], *extra)

    @cached_property
    def output_tokens(self) -> tuple[str, ...]:
        """All output tokens; token index = ((id - 1) * letters + letter) * variants + variant."""
        return tuple(
            f"{letter}{i}_{v}"
            for i in range(1, self.n_symbols + 1)
            for letter in self.letters
            for v in range(1, self.n_variants + 1)
        )

    @cached_property
    def permutations(self) -> np.ndarray:
        """(P, k) letter indices of every order, the in-order one first."""
        return np.array(list(itertools.permutations(range(self.group_size))), dtype=np.int64)

    @cached_property
    def permutation_probs(self) -> np.ndarray:
        n = len(self.permutations)
        if self.identity_weight is None or n == 1:
            return np.full(n, 1.0 / n)
        rest = (1.0 - self.identity_weight) / (n - 1)
        return np.array([self.identity_weight] + [rest] * (n - 1))

    def token_index(
        self, symbol_id: np.ndarray, letter: np.ndarray, variant: np.ndarray
    ) -> np.ndarray:
        """Output token index of (1-based symbol id, letter index, 0-based variant), elementwise."""
        return ((symbol_id - 1) * self.group_size + letter) * self.n_variants + variant

    def token_parts(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(1-based symbol id, letter index) of output token indices, elementwise."""
        per_symbol = self.group_size * self.n_variants
        return index // per_symbol + 1, (index // self.n_variants) % self.group_size

    def sample_outputs(self, src: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Sample one rewrite of every input.

        Args:
            src: (n, L) 1-based symbol ids, 0 = padding after the end of a sequence.
            rng: the generator to draw from.

        Returns:
            (n, L * k) output token indices, -1 where the input is padding.
        """
        n, length = src.shape
        k = self.group_size
        perm = rng.choice(len(self.permutations), size=(n, length), p=self.permutation_probs)
        letters = self.permutations[perm]  # (n, L, k)
        variants = rng.integers(self.n_variants, size=(n, length, k))
        ids = np.repeat(src[:, :, None], k, axis=2)  # (n, L, k)
        if self.authors_b_quirk:
            cba = perm == len(self.permutations) - 1  # permutations are lexicographic: CBA last
            ids = np.where(((src == 2) & cba)[:, :, None], 1, ids)
        tokens = self.token_index(ids, letters, variants)
        tokens[src == 0] = -1
        return tokens.reshape(n, length * k)
