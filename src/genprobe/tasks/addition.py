"""Decimal addition a + b, trained on short operands and tested on longer ones.

After Zhou, Alon, Chen, Wang, Agarwal & Zhou (2024), "Transformers Can Achieve Length
Generalization But Not Robustly" (arXiv 2402.09371): trained on additions of up to 40 digits, a
Transformer adds 100-digit numbers (2.5 times longer) with the right position encoding (FIRE,
randomized positions) and the right format (reversed, with index hints), but how far it gets
varies widely with the seed and the data order. Index hints are from Zhou et al. (2023, "What
Algorithms can Transformers Learn?", arXiv 2310.16028).

Followed: the task, the reversed format (least significant digit first in both operands and the
sum), index hints (a hint token before every digit of both operands and of the sum; the digits
of one place value share a hint) drawn for each example as a consecutive run of a larger ordered
set, so that every hint is seen in training, and the default test range N+1 .. 2.5N (the
paper's 40 -> 100). Chosen here, since only the paper's abstract and summaries could be read
while building this: each operand's length uniform in 1..N and independent of the other's; no
leading zeros; `length_L` has both operands of L digits; the hint run of every split (not only
training) starts at a random hint, as far up as the sum still fits; hint names a, b, ..., z, aa,
ab, ...; a sequence-to-sequence form (the input is `a + b`, without the paper's `=`, and the
output is the sum alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from genprobe.errors import ConfigError, check_choice
from genprobe.options import is_integer
from genprobe.tasks.chomsky.base import CHUNK, LENGTH_SPLIT, parse_lengths
from genprobe.tasks.published import Published
from genprobe.tasks.row_edits import trim
from genprobe.tasks.sampling import split_stream
from genprobe.tasks.task import NO_ANSWER, DeterministicTask, Examples, Split

FORMATS = ("plain", "reversed", "index_hints")
DIGITS = tuple("0123456789")
PLUS = len(DIGITS) + 1  # the input id of "+"; digit d is d + 1, hint h is PLUS + 1 + h
MAX_DIGITS = 500


def hint_names(count: int) -> tuple[str, ...]:
    """The first `count` hint tokens, in order: a, b, ..., z, aa, ab, ... (bijective base 26)."""
    names = []
    for number in range(1, count + 1):
        name = ""
        while number:
            number, letter = divmod(number - 1, 26)
            name = chr(ord("a") + letter) + name
        names.append(name)
    return tuple(names)


def carries(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, D) and (n, D) digits, least significant first -> (n, D + 1) whether each column of
    the sum carries a 1 into the next.

    No loop over positions: column k carries when the nearest column at or below k whose
    digit sum is not 9 overflowed (a run of 9s passes a carry on, anything else stops it).
    """
    column = np.pad(a + b, ((0, 0), (0, 1)))  # (n, D + 1) column sums, 0..18
    position = np.arange(column.shape[1])
    last = np.maximum.accumulate(np.where(column != 9, position, -1), axis=1)  # -1: none
    return np.take_along_axis(column >= 10, np.maximum(last, 0), axis=1) & (last >= 0)


def add_digits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, D) and (n, D) digits, least significant first -> (n, D + 1) digits of the sums."""
    column = np.pad(a + b, ((0, 0), (0, 1)))
    carry = np.pad(carries(a, b)[:, :-1], ((0, 0), (1, 0)))  # into column k: out of k - 1
    return (column + carry) % 10


def digit_count(digits: np.ndarray) -> np.ndarray:
    """(n,) digits of each number of (n, D) digits (least significant first): 0 has one."""
    nonzero = digits != 0
    highest = digits.shape[1] - 1 - np.argmax(nonzero[:, ::-1], axis=1)
    return np.where(nonzero.any(axis=1), highest + 1, 1)


@dataclass(frozen=True)
class Addition(DeterministicTask):
    """The sum of two decimal numbers, in one of three formats. Tokens are separated by spaces:

        plain        4 2 + 3 9          -> 8 1           most significant digit first
        reversed     2 4 + 9 3          -> 1 8           least significant digit first
        index_hints  a 2 b 4 + a 9 b 3  -> a 1 b 8       reversed, a hint before each digit

    Training operands have 1 to `train_digits` digits; `length_L` adds two L-digit numbers.
    Reports group examples by the digits of the longer operand.

    Examples:
        a 2 b 4 + a 9 b 3  -> a 1 b 8        (42 + 39 = 81)
        c 5 d 9 + c 7      -> c 2 d 0 e 1    (95 + 7 = 102, hints from c)
    """

    format: str = "index_hints"  # plain, reversed, or index_hints (the paper's recipe)
    train_digits: int = 10  # N: training operands have 1..N digits (the paper: 40)
    # The `length_L` suites: "11,20", "11-25", "11-100:10", or "auto": N+1 .. 2.5N
    test_lengths: str = "auto"
    hint_tokens: int = 0  # index hints in the ordered set; 0: one per digit of the longest sum

    def __post_init__(self) -> None:
        check_choice("format", self.format, FORMATS)
        if not is_integer(self.train_digits) or not 1 <= self.train_digits < MAX_DIGITS:
            raise ConfigError(
                "train_digits", f"an integer in 1..{MAX_DIGITS - 1}", self.train_digits
            )
        needed = max(self.train_digits, *self._test_lengths()) + 1
        if not is_integer(self.hint_tokens) or self.hint_tokens < 0:
            raise ConfigError("hint_tokens", "an integer >= 0", self.hint_tokens)
        if self.hint_tokens and self.format != "index_hints":
            raise ConfigError("hint_tokens", "0 unless format is index_hints", self.hint_tokens)
        if self.hint_tokens and self.hint_tokens < needed:
            expected = f"0 or at least {needed} (one per digit of the longest sum)"
            raise ConfigError("hint_tokens", expected, self.hint_tokens)

    @property
    def hints(self) -> int:
        """How many hint tokens there are (0 without index hints)."""
        if self.format != "index_hints":
            return 0
        return self.hint_tokens or max(self.train_digits, *self._test_lengths()) + 1

    @property
    def source_vocab(self) -> tuple[str, ...]:
        return (*DIGITS, "+", *hint_names(self.hints))

    @property
    def target_vocab(self) -> tuple[str, ...]:
        return (*DIGITS, *hint_names(self.hints))

    def splits(self) -> Mapping[str, Split]:
        n = self.train_digits
        trained = f"each operand 1-{n} digits, uniform and independent"
        held = (self._input_length(1, 1), self._input_length(n, n))
        splits = {
            "train": Split(f"training data: {trained}", held, 20_000),
            "validation": Split(f"like train; early stopping: {trained}", held, 2_000),
            "test": Split(f"in distribution: {trained}", held, 1_000),
        }
        for length in self._test_lengths():
            splits[f"length_{length}"] = self._length_split(length)
        return splits

    def split_spec(self, name: str) -> Split:
        """Also `length_L` for any L up to 500 digits (with index hints: up to one less than
        the hints)."""
        length = self._split_length(name)
        return self._length_split(length) if length else super().split_spec(name)

    def suites(self) -> tuple[str, ...]:
        return ("test", *(f"length_{n}" for n in self._test_lengths()))

    def published(self) -> Published | None:
        """None: the paper's numbers are for a 25M-parameter Transformer (FIRE, randomized
        positions) trained on about 30M additions of up to 40 digits, not for these settings."""
        return None

    def generate(self, split: str, n: int, seed: int) -> Examples:
        self.checked_split(split, n)
        length = self._split_length(split)
        drawn = (length, length) if length else (1, self.train_digits)
        # Whole chunks, cut after: an example depends on its chunk, not on how many are asked.
        chunks = [self._chunk(drawn, split_stream(seed, split, c)) for c in range(-(-n // CHUNK))]
        src = trim(np.concatenate(chunks)[:n], 0)
        return Examples(src, self.solve(src))

    def solve(self, src: np.ndarray) -> np.ndarray:
        a, b, _, start, ok = self.read(np.asarray(src))
        total = add_digits(a, b)
        count = digit_count(total)
        if self.hints:
            ok &= start + count <= self.hints  # a hint for every digit of the sum
        gold = self._written(total, count, start, 0, len(DIGITS))
        gold[~ok] = -1
        gold[~ok, 0] = NO_ANSWER
        return trim(gold, -1)

    def length(self, src: np.ndarray) -> np.ndarray:
        """(n,) digits of the longer operand."""
        src = np.asarray(src)
        after = np.cumsum(src == PLUS, axis=1) > 0
        digit = (src >= 1) & (src < PLUS)
        return np.maximum((digit & ~after).sum(axis=1), (digit & after).sum(axis=1))

    def max_output_length(self, input_length: int) -> int:
        # The longest sum comes from an operand that takes all but "+" and a 1-digit operand:
        # m + 1 digits for m + 2 tokens, or with hints 2m + 2 tokens for 2m + 3.
        return max(input_length - 1, 1)

    def _test_lengths(self) -> tuple[int, ...]:
        text = self.test_lengths
        if text == "auto":
            n = self.train_digits
            return tuple(range(n + 1, min(int(2.5 * n), MAX_DIGITS) + 1))
        expected = f"lengths like 11,20 or 11-25 or 11-100:10 in 1..{MAX_DIGITS}, or auto"
        try:
            if text != "all":  # Chomsky's "all" (41-500) means nothing here
                return parse_lengths(text)
        except ConfigError:
            pass
        raise ConfigError("test_lengths", expected, text)

    def _split_length(self, name: str) -> int | None:
        """L of a split named `length_L` with L in range; None for any other name."""
        match = LENGTH_SPLIT.match(name)
        length = int(match.group(1)) if match else 0
        longest = self.hints - 1 if self.hints else MAX_DIGITS
        return length if 1 <= length <= longest else None

    def _length_split(self, length: int) -> Split:
        shifted = length > self.train_digits
        what = "longer than training" if shifted else "a training length"
        held = (self._input_length(length, length),) * 2
        return Split(f"two operands of {length} digits ({what})", held, 500, False, shifted)

    def _input_length(self, a: int, b: int) -> int:
        """Input tokens of operands of `a` and `b` digits."""
        return (a + b) * (2 if self.hints else 1) + 1

    def _chunk(self, drawn: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
        """CHUNK inputs, each operand of a length drawn uniformly from `drawn`."""
        lengths = rng.integers(drawn[0], drawn[1] + 1, size=(2, CHUNK))
        a, b = (_number(rng, length, drawn[1]) for length in lengths)
        start = np.zeros(CHUNK, dtype=np.int64)
        if self.hints:  # a run of consecutive hints, as long as the sum, anywhere in the set
            start = rng.integers(0, self.hints - digit_count(add_digits(a, b)) + 1)
        return self.inputs(a, b, lengths, start)

    def inputs(
        self, a: np.ndarray, b: np.ndarray, count: np.ndarray, start: np.ndarray
    ) -> np.ndarray:
        """(n, L) inputs of operands `a`, `b` ((n, D) digits, least significant first) of
        `count` (2, n) digits each, their hints from `start` (ignored without hints); L holds
        two operands of D digits."""
        parts = [
            self._written(a, count[0], start, 1, PLUS + 1),
            np.full((len(a), 1), PLUS),
            self._written(b, count[1], start, 1, PLUS + 1),
        ]
        return _joined(parts, self._input_length(a.shape[1], a.shape[1]))

    def _written(
        self, digits: np.ndarray, count: np.ndarray, start: np.ndarray, digit: int, hint: int
    ) -> np.ndarray:
        """(n, D) numbers of `count` digits (least significant first) as ids in this format,
        -1 after the end: digit d is `digit` + d, hint h is `hint` + h."""
        position = np.arange(digits.shape[1])
        inside = position < count[:, None]
        order = count[:, None] - 1 - position if self.format == "plain" else position[None, :]
        order = np.broadcast_to(order, digits.shape)
        ids = np.take_along_axis(digits, np.clip(order, 0, digits.shape[1] - 1), axis=1) + digit
        if self.hints:
            marks = np.broadcast_to(start[:, None] + position + hint, ids.shape)
            ids = np.stack([marks, ids], axis=2).reshape(len(ids), -1)
            inside = np.repeat(inside, 2, axis=1)
        return np.where(inside, ids, -1)

    def read(self, src: np.ndarray) -> tuple[np.ndarray, ...]:
        """(n, L) inputs -> (a, b) digits least significant first, the (2, n) digits of each
        (leading zeros counted), the first hint, and whether the input is one of the task's
        (two numbers around one "+", hints in one run)."""
        src = np.pad(src, ((0, 0), (0, max(0, 1 - src.shape[1]))))  # argmax needs a column
        step = 2 if self.hints else 1
        plus = np.argmax(src == PLUS, axis=1)
        tokens = np.stack([plus, (src > 0).sum(axis=1) - plus - 1])  # (2, n) per operand
        column = np.arange(src.shape[1])
        within = np.where(column > plus[:, None], column - plus[:, None] - 1, column)
        hinted = (within % 2 == 0) if self.hints else np.zeros_like(src, dtype=bool)
        expected = np.where(hinted, src > PLUS, (src >= 1) & (src < PLUS))
        body = (src > 0) & (src != PLUS)
        ok = ((src == PLUS).sum(axis=1) == 1) & ~(body & ~expected).any(axis=1)
        ok &= ((tokens >= step) & (tokens % step == 0)).all(axis=0)
        count = tokens // step
        k = np.arange(max(src.shape[1] // step, 1))
        first = np.stack([np.zeros_like(plus), plus + 1])[:, :, None]  # (2, n, 1) first token
        if self.format == "plain":
            where = first + count[:, :, None] - 1 - k
        else:
            where = first + step * k + (step - 1)  # the digit after each hint
        inside = k < count[:, :, None]
        digits = np.where(inside, _at(src, where) - 1, 0)
        start = np.zeros(len(src), dtype=np.int64)
        if self.hints:
            marks = _at(src, where - 1) - PLUS - 1
            start = marks[0, :, 0]
            ok &= ((marks == start[:, None] + k) | ~inside).all(axis=(0, 2))
        return digits[0], digits[1], count, start, ok


def _number(rng: np.random.Generator, length: np.ndarray, width: int) -> np.ndarray:
    """(n, width) digits, least significant first, of numbers of `length` digits each, uniform
    among those without a leading zero (0 is a 1-digit number)."""
    position = np.arange(width)
    digits = np.where(position < length[:, None], rng.integers(0, 10, size=(len(length), width)), 0)
    top = (np.arange(len(length)), length - 1)
    digits[top] = np.where(length > 1, rng.integers(1, 10, size=len(length)), digits[top])
    return digits


def _joined(parts: list[np.ndarray], width: int) -> np.ndarray:
    """Pieces of ids (-1 after their ends) laid end to end per row, as inputs: (n, width) ids
    1-based, 0 after the end."""
    out = np.zeros((len(parts[0]), width), dtype=np.int64)
    offset = np.zeros(len(out), dtype=np.int64)
    for ids in parts:
        rows, columns = np.nonzero(ids >= 0)
        out[rows, offset[rows] + columns] = ids[rows, columns]
        offset += (ids >= 0).sum(axis=1)
    return out


def _at(src: np.ndarray, where: np.ndarray) -> np.ndarray:
    """(2, n, K) ids of `src` at the columns `where` (clipped to the row)."""
    rows = np.arange(len(src))[None, :, None]
    return src[rows, np.clip(where, 0, src.shape[1] - 1)]
