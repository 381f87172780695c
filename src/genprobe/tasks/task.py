"""The task contract: what every task gives the studies (after NNCH's `GeneralizationTask`).

A task is a frozen dataclass that subclasses `Task`; its fields are its options
(`--task-option name=value`), checked in `__post_init__`. Tokens are strings without spaces. A
sequence is stored as ids: inputs 1-based with 0 as padding, outputs 0-based with -1 as
padding, so a model is free to add its own special tokens.

    source_vocab, target_vocab   the token names; an id is a position in them
    splits()                     name -> Split: what each split holds; `split_spec(name)` may also
                                 accept names it does not list (NNCH-style `length_L`)
    generate(split, n, seed)     Examples, the same for the same (split, seed); the first n do
                                 not depend on n
    verify(src, out, out_len)    per example, whether the output is right: the exact rule
    max_output_length(L)         the longest right output for an input of L tokens
    length(src)                  what per-length reports group by (default: input length)
    checked_split(split, n)      a helper for `generate`: the split, n checked against it
    published()                  a paper's numbers for the seed study on it, if any
    train_split, validation_split, suites()   what the seed study trains, stops and tests on
    outcomes(src, out, out_len, finished)      a verdict per output: correct / incorrect /
                                 unparseable (what the probe studies count)
    families(), relations(), valid_inputs(), features(), mutations(), slice_by()   what the
                                 probe studies perturb, pair, search and slice by
                                 (`genprobe.tasks.probing`)
    input_text(src), output_text(out)   each input and output as a reader writes it
                                 (default: the tokens)

`DeterministicTask` is the common case, one right output per input: write `solve`, and
`verify` compares token for token. A new task is one file and one row of `registry.TASKS`;
`tests/tasks/test_conformance.py` then checks it like every other.
"""

from __future__ import annotations

import abc
import dataclasses
import numbers
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from genprobe.errors import ConfigError, TaskContractError, check_choice
from genprobe.tasks.probing import Composition, Family, Relation, Slice, token_edits
from genprobe.tasks.published import Published
from genprobe.tasks.tokens import input_lines, output_lines
from genprobe.verification.verdict import Outcome

# what `Task.tag_failures` says a failed input is
FAILURE_KINDS = ("robustness", "exploit", "unknown")


@dataclass(frozen=True)
class Split:
    description: str
    lengths: tuple[int, int]  # the shortest and the longest input it holds, in tokens
    size: int  # how many examples by default; for a finite split, all it holds
    finite: bool = False  # holds exactly `size` examples, drawn in a seeded order
    disjoint: bool = False  # none of its inputs is in the training split of the same seed


@dataclass(frozen=True)
class Examples:
    """Inputs and gold outputs as padded id arrays."""

    src: np.ndarray  # (n, L) input ids, 1-based, 0 = padding after the end
    tgt: np.ndarray  # (n, M) output ids, 0-based, -1 = padding after the end

    def __len__(self) -> int:
        return len(self.src)


def split_stream(seed: int, split: str, chunk: int = 0) -> np.random.Generator:
    """The random stream of one chunk of one split: a split's draws depend only on the data
    seed, its name and the chunk, never on how many examples were asked for."""
    return np.random.default_rng([seed, zlib.crc32(split.encode()), chunk])


STRING_CHUNK = 256  # strings drawn per random stream by `random_strings`


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


def is_integer(value: object) -> bool:
    """Whether an option's value is a whole number (a bool is not)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def trim(ids: np.ndarray, pad: int) -> np.ndarray:
    """Drop the trailing columns that are `pad` in every row."""
    width = int((ids != pad).sum(axis=1).max(initial=0))
    return ids[:, :width]


class Task(abc.ABC):
    """A sequence-to-sequence task with named splits and an exact verifier."""

    train_split: ClassVar[str] = "train"
    validation_split: ClassVar[str] = "validation"  # early stopping watches it
    # options added after runs of the task existed -> their defaults, which give the data those
    # runs had: left out of `options()` at that default, so those runs keep their config hash
    ADDED_OPTIONS: ClassVar[Mapping[str, Any]] = {}

    @property
    @abc.abstractmethod
    def source_vocab(self) -> tuple[str, ...]:
        """Input token names; the token with id i is `source_vocab[i - 1]`."""

    @property
    @abc.abstractmethod
    def target_vocab(self) -> tuple[str, ...]:
        """Output token names; the token with id i is `target_vocab[i]`."""

    @abc.abstractmethod
    def splits(self) -> Mapping[str, Split]:
        """The splits a user can list, by name."""

    @abc.abstractmethod
    def generate(self, split: str, n: int, seed: int) -> Examples:
        """The first `n` examples of `split` for data seed `seed`."""

    @abc.abstractmethod
    def verify(self, src: np.ndarray, out: np.ndarray, out_len: np.ndarray) -> np.ndarray:
        """(n,) bool: whether each output is right for its input.

        Args:
            src: (n, L) input ids as in `Examples.src`.
            out: (n, M) output ids; any negative value is a token outside the vocabulary.
            out_len: (n,) tokens per output (positions from out_len on are ignored).
        """

    @abc.abstractmethod
    def max_output_length(self, input_length: int) -> int:
        """The length of the longest right output for any input of `input_length` tokens."""

    def suites(self) -> tuple[str, ...]:
        """The test suites of a seed study, in report order (default: the disjoint splits)."""
        return tuple(
            name
            for name, split in self.splits().items()
            if split.disjoint and name != self.validation_split
        )

    def split_spec(self, name: str) -> Split:
        """The split called `name`.

        Raises:
            ConfigError: no such split (with the nearest names).
        """
        splits = self.splits()
        check_choice("split", name, splits)
        return splits[name]

    def length(self, src: np.ndarray) -> np.ndarray:
        """(n,) the length per-length reports group examples by: here, input tokens."""
        return (np.asarray(src) > 0).sum(axis=1)

    def published(self) -> Published | None:
        """What a paper reports for the seed study on this task with these options, if any."""
        return None

    def outcomes(
        self, src: np.ndarray, out: np.ndarray, out_len: np.ndarray, finished: np.ndarray
    ) -> np.ndarray:
        """(n,) the `Outcome` value of each output (ids as for `verify`): unparseable where it
        holds a token outside the vocabulary or did not end (`finished` False: cut at the length
        limit), else correct or incorrect as `verify` says."""
        out_len = np.asarray(out_len)
        inside = np.arange(out.shape[1])[None, :] < out_len[:, None]
        readable = ~((out < 0) & inside).any(axis=1) & np.asarray(finished, dtype=bool)
        right = self.verify(src, out, out_len)
        return np.where(
            readable,
            np.where(right, Outcome.CORRECT.value, Outcome.INCORRECT.value),
            Outcome.UNPARSEABLE.value,
        )

    def families(self) -> Mapping[str, Family]:
        """The perturbation families the probe study can build suites from, by name."""
        return {}

    def relations(self) -> Mapping[str, Relation]:
        """The metamorphic relations the probe study checks consistency on, by name."""
        return {}

    def compositions(self) -> Mapping[str, Composition]:
        """The ways the probe study joins inputs into composites (`--compositions`), by name."""
        return {}

    def valid_inputs(self, src: np.ndarray) -> np.ndarray:
        """(n,) bool: whether each input (ids as in `Examples.src`) is one of the task's.

        Raises:
            TaskContractError: the task does not say (the genetic search needs it).
        """
        raise TaskContractError(
            f"{type(self).__name__} does not say which inputs are valid (Task.valid_inputs), "
            "so its inputs cannot be mutated"
        )

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """(n,) numbers per input by name, that failure slices and clusters are read by: the
        task's length and how often each input token occurs. A boolean array is a condition
        the failure search's slices name as one ("has sin", "no sin")."""
        src = np.asarray(src)
        counts = {
            f"count {token}": (src == i).sum(axis=1)
            for i, token in enumerate(self.source_vocab, start=1)
        }
        return {"length": self.length(src), **counts}

    def input_text(self, src: np.ndarray) -> list[str]:
        """Each input as a reader writes it, what the failure search shows and clusters by
        character n-grams: its tokens joined by spaces, unless the task has a better form."""
        return input_lines(self.source_vocab, src)

    def output_text(self, out: np.ndarray) -> list[str]:
        """Each output (ids as in `Examples.tgt`) as a reader writes it, what the failure
        search shows: its tokens joined by spaces, unless the task has a better form."""
        return output_lines(self.target_vocab, out)

    def tag_failures(self, src: np.ndarray) -> list[tuple[str, str]] | None:
        """Whether each input (one a model failed) has a right output in the model's output
        language at all: (kind, detail) per input, kind (`FAILURE_KINDS`) `robustness` (it has
        one: the failure is the model's), `exploit` (it has none) or `unknown` (the task could
        not tell); None,
        the default, where every input has one. Slow where a task has it (integration:
        SymPy's `integrate`), so the failure search asks it of `--tag-limit` inputs only."""
        return None

    def slice_by(self) -> Slice | None:
        """The categorical feature the probe report breaks each family's paired drop down by;
        None: no breakdown."""
        return None

    def mutations(self) -> Mapping[str, Family]:
        """What the genetic search mutates inputs with: token edits and the task's families
        (a mutant that `valid_inputs` refuses is counted, never scored)."""
        return {**token_edits(len(self.source_vocab)), **self.families()}

    def settings(self) -> dict[str, Any]:
        """Every setting of the task (its dataclass fields)."""
        return dataclasses.asdict(self) if dataclasses.is_dataclass(self) else {}

    def options(self) -> dict[str, Any]:
        """The task's settings as a run's config records them: those of `ADDED_OPTIONS` left
        out at their defaults."""
        added = self.ADDED_OPTIONS
        return {k: v for k, v in self.settings().items() if k not in added or v != added[k]}

    def checked_split(self, split: str, n: int) -> Split:
        """The split called `split`, once `n` is known to be a number of examples it can give
        (for `generate` to start with).

        Raises:
            ConfigError: no such split, n < 1, or more than a finite split holds.
        """
        spec = self.split_spec(split)
        if not is_integer(n) or n < 1:
            raise ConfigError("n", "an integer >= 1", n)
        if spec.finite and n > spec.size:
            raise ConfigError("n", f"<= {spec.size:,} (all of split {split})", n)
        return spec


NO_ANSWER = -2  # first id of `solve`'s row for an input that no output is right for


class DeterministicTask(Task):
    """A task with exactly one right output per input: `verify` compares it with `solve`."""

    @abc.abstractmethod
    def solve(self, src: np.ndarray) -> np.ndarray:
        """(n, M) the right output ids of (n, L) inputs, -1 after the end; a row that starts
        with `NO_ANSWER` belongs to an input that is not one of the task's (no output is
        right)."""

    def valid_inputs(self, src: np.ndarray) -> np.ndarray:
        """(n,) bool: the inputs `solve` has a right output for."""
        src = np.asarray(src)
        unique, inverse = np.unique(src, axis=0, return_inverse=True)
        solved = self.solve(unique)
        answered = solved[:, 0] != NO_ANSWER if solved.shape[1] else np.ones(len(unique), bool)
        return answered[inverse.reshape(-1)]

    def verify(self, src: np.ndarray, out: np.ndarray, out_len: np.ndarray) -> np.ndarray:
        gold, matches, inside = self._aligned(src, out)
        whole = (np.asarray(out_len) == inside.sum(axis=1)) & (matches | ~inside).all(axis=1)
        return whole & (gold[:, 0] != NO_ANSWER if gold.shape[1] else True)

    def token_accuracy(self, src: np.ndarray, out: np.ndarray) -> np.ndarray:
        """(n,) the share of the right output's positions that `out` (ids as for `verify`)
        gets right: Delétang et al.'s per-token score, where `verify` is all or nothing. An
        input whose right output is empty scores 1; one without a right output, 0."""
        gold, matches, inside = self._aligned(src, out)
        length = inside.sum(axis=1)
        score = (matches & inside).sum(axis=1) / np.maximum(length, 1)
        score = np.where(length == 0, 1.0, score)
        return np.where(gold[:, 0] == NO_ANSWER, 0.0, score) if gold.shape[1] else score

    def _aligned(self, src: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, ...]:
        """(the right outputs, out == them position by position, the right outputs' positions),
        padded to one width."""
        # Each distinct input solved once: a study verifies every member's output of one input.
        unique, inverse = np.unique(np.asarray(src), axis=0, return_inverse=True)
        gold = self.solve(unique)[inverse.reshape(-1)]
        width = max(gold.shape[1], out.shape[1])
        gold = np.pad(gold, ((0, 0), (0, width - gold.shape[1])), constant_values=-1)
        out = np.pad(out, ((0, 0), (0, width - out.shape[1])), constant_values=-1)
        inside = np.arange(width)[None, :] < (gold >= 0).sum(axis=1)[:, None]
        return gold, out == gold, inside
