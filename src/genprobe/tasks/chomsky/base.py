"""What the 15 tasks of Delétang et al. (2023) share, as sequence-to-sequence tasks.

Train on inputs of length 1-40 (each length equally likely, as NNCH's uniform curriculum);
`length_L` holds inputs of length L, up to 500; `test` is like training. A task's file gives
its tokens, `sample(rng, n, length)` and `answer(x)` for inputs of one length; this class groups
examples by length, chunks the random streams, and turns answers into padded ids. The paper's
models read the input and then emit a fixed number of outputs, padded after a termination token;
here an output is just its tokens and the decoder ends it, so where NNCH pads (stack
manipulation, binary addition and multiplication) the padding is left out.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from genprobe.errors import ConfigError
from genprobe.tasks.row_edits import gapped, trim
from genprobe.tasks.sampling import split_stream
from genprobe.tasks.task import NO_ANSWER, DeterministicTask, Examples, Split

TRAIN_LENGTHS = (1, 40)
MAX_LENGTH = 500
CHUNK = 256
LENGTH_SPLIT = re.compile(r"^length_(\d+)$")


def parse_lengths(text: str) -> tuple[int, ...]:
    """`"41,50,100"`, ranges `"41-100"` (with a step: `"41-500:46"`) or `"all"` (41-500) → the
    test lengths, sorted.

    Raises:
        ConfigError: not of that form, or a length outside 1..500.
    """
    if text == "all":
        text = f"{TRAIN_LENGTHS[1] + 1}-{MAX_LENGTH}"
    lengths: set[int] = set()
    for part in text.split(","):
        span, colon, step = part.strip().partition(":")
        low, dash, high = span.partition("-")
        numbers = [low, *([high] if dash else []), *([step] if colon else [])]
        if not all(n.isdigit() for n in numbers) or (colon and (not dash or int(step) < 1)):
            raise ConfigError("test_lengths", "lengths like 41,50,100 or 41-500:46 or all", text)
        lengths.update(range(int(low), int(high if dash else low) + 1, int(step or 1)))
    if not lengths or min(lengths) < 1 or max(lengths) > MAX_LENGTH:
        raise ConfigError("test_lengths", f"lengths in 1..{MAX_LENGTH}", text)
    return tuple(sorted(lengths))


@dataclass(frozen=True)
class LengthTask(DeterministicTask):
    """A task over strings of any length, trained on short ones and tested on longer ones."""

    # The lengths the seed study tests (`length_L` suites); "all": every length from 41 to 500.
    test_lengths: str = "41,50,60,80,100"

    input_tokens: ClassVar[tuple[str, ...]]
    output_tokens: ClassVar[tuple[str, ...]]

    def __post_init__(self) -> None:
        parse_lengths(self.test_lengths)

    @abc.abstractmethod
    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        """(n, input_length(length)) inputs as 0-based positions in `input_tokens`."""

    @abc.abstractmethod
    def answer(self, x: np.ndarray) -> np.ndarray:
        """(n, m) outputs as 0-based positions in `output_tokens`, -1 after the end, of the
        (n, length) inputs `x`, all of one length."""

    def answer_length(self, length: int) -> int:
        """The longest answer to an input of `length` tokens (default: as long as the input)."""
        return length

    @property
    def source_vocab(self) -> tuple[str, ...]:
        return self.input_tokens

    @property
    def target_vocab(self) -> tuple[str, ...]:
        return self.output_tokens

    def input_length(self, length: int) -> int:
        """The length of the inputs drawn for `length` (NNCH's modular arithmetic has odd
        lengths only)."""
        return length

    def splits(self) -> Mapping[str, Split]:
        trained = f"lengths {TRAIN_LENGTHS[0]}-{TRAIN_LENGTHS[1]}, each equally likely"
        held = self._held(TRAIN_LENGTHS)
        splits = {
            "train": Split(f"training data: {trained}", held, 20_000),
            "validation": Split(f"like train; early stopping: {trained}", held, 2_000),
            "test": Split(f"in distribution: {trained}", held, 1_000),
        }
        for length in parse_lengths(self.test_lengths):
            splits[f"length_{length}"] = self._length_split(length)
        return splits

    def split_spec(self, name: str) -> Split:
        """Also `length_L` for any L in 1..500, listed or not."""
        length = _split_length(name)
        return self._length_split(length) if length else super().split_spec(name)

    def suites(self) -> tuple[str, ...]:
        return ("test", *(f"length_{n}" for n in parse_lengths(self.test_lengths)))

    def generate(self, split: str, n: int, seed: int) -> Examples:
        self.checked_split(split, n)
        length = _split_length(split)
        drawn = (length, length) if length else TRAIN_LENGTHS
        # Whole chunks, cut after: an example depends on its chunk, not on how many are asked.
        chunks = [self._chunk(drawn, split_stream(seed, split, c)) for c in range(-(-n // CHUNK))]
        src = trim(np.concatenate(chunks)[:n], 0)
        return Examples(src, self.solve(src))

    def _chunk(self, drawn: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
        """CHUNK inputs, each of a length drawn uniformly from `drawn` (NNCH's curriculum)."""
        lengths = rng.integers(drawn[0], drawn[1] + 1, size=CHUNK)
        rows = np.zeros((CHUNK, drawn[1]), dtype=np.int64)
        for length in np.unique(lengths):
            where = np.flatnonzero(lengths == length)
            sampled = self.sample(rng, len(where), int(length))
            rows[where, : sampled.shape[1]] = sampled + 1
        return rows

    def solve(self, src: np.ndarray) -> np.ndarray:
        """Answers of inputs of any lengths: grouped by length, `answer` on each group (an
        empty input, or one with padding before a token, has none)."""
        src = np.asarray(src)
        length = (src > 0).sum(axis=1)
        width = self.max_output_length(max(src.shape[1], 1))
        gold = np.full((len(src), width), -1, dtype=np.int64)
        unanswered = (length == 0) | gapped(src)
        gold[unanswered, :1] = NO_ANSWER
        for value in np.unique(length[~unanswered]):
            rows = np.flatnonzero((length == value) & ~unanswered)
            answers = self.answer(src[rows, :value] - 1)
            gold[rows[:, None], np.arange(answers.shape[1])] = answers
        return trim(gold, -1)

    def max_output_length(self, input_length: int) -> int:
        return max(self.answer_length(n) for n in range(1, input_length + 1))

    def _length_split(self, length: int) -> Split:
        shifted = length > TRAIN_LENGTHS[1]
        what = "longer than training" if shifted else "a training length"
        held = self._held((length, length))
        return Split(f"inputs of length {length} ({what})", held, 500, False, shifted)

    def _held(self, drawn: tuple[int, int]) -> tuple[int, int]:
        """The input lengths drawing from `drawn` gives."""
        lengths = [self.input_length(n) for n in range(drawn[0], drawn[1] + 1)]
        return min(lengths), max(lengths)


def _split_length(name: str) -> int | None:
    """L of a split named `length_L` with L in 1..500; None for any other name."""
    match = LENGTH_SPLIT.match(name)
    length = int(match.group(1)) if match else 0
    return length if 1 <= length <= MAX_LENGTH else None
