"""Symbol rewriting (Weber et al. 2018) on the task contract: the grammar is the task."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from genprobe.tasks.published import Published
from genprobe.tasks.rewriting.grammar import Grammar
from genprobe.tasks.rewriting.paper import WEBER_2018
from genprobe.tasks.rewriting.suites import SPLITS, generate
from genprobe.tasks.rewriting.validity import valid_outputs
from genprobe.tasks.task import Examples, Split, Task

# The paper's four test suites, then its appendix's second validation set (inputs 3-12 long
# with repeated symbols), evaluated like a test suite.
TEST_SUITES = ("standard", "repeat", "short", "long", "uncharacteristic")


@dataclass(frozen=True)
class RewritingTask(Grammar, Task):
    """Each input symbol becomes a group of output tokens, one per letter, in a sampled order;
    the validity rule judges an output, since many are right for one input.

    Examples:
        D FS E  -> A4_1 B4_1 C4_1 B31_2 C31_1 A31_1 A5_2 C5_2 B5_1
        O O O   -> A15_2 C15_1 B15_2 C15_1 A15_2 B15_1 C15_2 B15_1 A15_1

    Options: the grammar's (`n_symbols`, `letters`, `n_variants`, `identity_weight`,
    `authors_b_quirk`).
    """

    @property
    def source_vocab(self) -> tuple[str, ...]:
        return self.symbols

    @property
    def target_vocab(self) -> tuple[str, ...]:
        return self.output_tokens

    def splits(self) -> Mapping[str, Split]:
        return SPLITS

    def suites(self) -> tuple[str, ...]:
        return TEST_SUITES

    def generate(self, split: str, n: int, seed: int) -> Examples:
        self.checked_split(split, n)
        return generate(split, n, seed, self)

    def verify(self, src: np.ndarray, out: np.ndarray, out_len: np.ndarray) -> np.ndarray:
        return valid_outputs(self, src, out, out_len)

    def max_output_length(self, input_length: int) -> int:
        return self.group_size * input_length

    def local_structures(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """Each pair of adjacent input symbols: the rule rewrites a symbol alone, so a model
        that learned it has no use for having seen a pair."""
        return tuple(f"{a} {b}" for a, b in itertools.pairwise(tokens))

    def published(self) -> Published | None:
        """Table 3, when the grammar is the paper's (with or without the authors' quirk)."""
        return WEBER_2018 if replace(self, authors_b_quirk=False) == RewritingTask() else None
