"""The task contract: what every task gives the studies (after NNCH's `GeneralizationTask`).

A task is a frozen dataclass that subclasses `Task`; its fields are its options
(`--task-option name=value`), checked in `__post_init__`. Tokens are strings without spaces. A
sequence is stored as ids: inputs 1-based with 0 as padding, outputs 0-based with -1 as
padding, so a model is free to add its own special tokens.

    source_vocab, target_vocab   the token names; an id is a position in them
    splits()                     name -> Split; `split_spec(name)` may accept more names
    generate(split, n, seed)     Examples, the same for the same (split, seed); the first n do
                                 not depend on n (`checked_split` checks the arguments)
    verify(src, out, out_len)    per example, whether the output is right: the exact rule
    max_output_length(L)         the longest right output for an input of L tokens
    train_split, validation_split, suites()   what the seed study trains, stops and tests on
    solve(src)                   the one right output of each input, or None (many are right)
    length(src), outcomes(...), published()   what reports group by, count and cite
    local_structures(tokens)     an input's local structures (none by default), which the
                                 memorization study asks a member's training inputs for
    input_distance()             how far apart two inputs are (edit distance by default), for
                                 the memorization study's nearest training example

What the probe studies perturb, pair and slice a task by is its `probing.Probes`, which its
row of `registry.TASKS` names. `DeterministicTask` is the common case, one right output per
input: write `solve`, and `verify` compares token for token.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from genprobe.errors import ConfigError, check_choice
from genprobe.options import is_integer
from genprobe.tasks.published import Published
from genprobe.tasks.verdict import Outcome

NO_ANSWER = -2  # first id of `solve`'s row for an input that no output is right for


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
        """(n,) bool: whether each output (ids; a negative one is a token outside the
        vocabulary; positions from `out_len` on are ignored) is right for its input."""

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

    def solve(self, src: np.ndarray) -> np.ndarray | None:
        """(n, M) the one right output of each input, -1 after the end (a row that starts with
        `NO_ANSWER`: the input is not one of the task's, no output is right); None, the
        default: the task has many right outputs per input, which only `verify` judges."""
        return None

    def length(self, src: np.ndarray) -> np.ndarray:
        """(n,) the length per-length reports group examples by: here, input tokens."""
        return (np.asarray(src) > 0).sum(axis=1)

    def local_structures(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """The local structures of one input, given as its token names: the small parts of
        its structure that a model composes (Bogin et al. 2022), each named by a string. The
        memorization study asks whether a member fails more on test inputs holding a structure
        that none of its training inputs held. By default none: the task declares none."""
        return ()

    def input_distance(self) -> Callable[..., float]:
        """How far apart two inputs (token names) are, for the memorization study's nearest
        training example of an input: a RapidFuzz scorer (its own run in C++ over all pairs at
        once) or any function of two token sequences. By default Levenshtein distance over
        tokens."""
        from rapidfuzz.distance import Levenshtein

        return Levenshtein.distance

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

    def published(self) -> Published | None:
        """What a paper reports for the seed study on this task with these options, if any."""
        return None

    def settings(self) -> dict[str, Any]:
        """Every setting of the task (its dataclass fields)."""
        return dataclasses.asdict(self) if dataclasses.is_dataclass(self) else {}

    def options(self) -> dict[str, Any]:
        """The task's settings as a run's config records them: those of `ADDED_OPTIONS` left
        out at their defaults."""
        added = self.ADDED_OPTIONS
        return {k: v for k, v in self.settings().items() if k not in added or v != added[k]}


class DeterministicTask(Task):
    """A task with exactly one right output per input: `verify` compares it with `solve`."""

    @abc.abstractmethod
    def solve(self, src: np.ndarray) -> np.ndarray:
        """(n, M) the right output ids of (n, L) inputs, as `Task.solve` says."""

    def verify(self, src: np.ndarray, out: np.ndarray, out_len: np.ndarray) -> np.ndarray:
        # Each distinct input solved once: a study verifies every member's output of one input.
        unique, inverse = np.unique(np.asarray(src), axis=0, return_inverse=True)
        gold, matches, inside = _aligned(self.solve(unique)[inverse.reshape(-1)], out)
        whole = (np.asarray(out_len) == inside.sum(axis=1)) & (matches | ~inside).all(axis=1)
        return whole & (gold[:, 0] != NO_ANSWER if gold.shape[1] else True)


def token_accuracy(gold: np.ndarray, out: np.ndarray) -> np.ndarray:
    """(n,) the share of each right output's positions (`gold`, as `solve` gives them) that
    `out` (ids as for `verify`) gets right: Delétang et al.'s per-token score, where `verify`
    is all or nothing. An input whose right output is empty scores 1; one without one, 0."""
    gold, matches, inside = _aligned(gold, out)
    length = inside.sum(axis=1)
    score = (matches & inside).sum(axis=1) / np.maximum(length, 1)
    score = np.where(length == 0, 1.0, score)
    return np.where(gold[:, 0] == NO_ANSWER, 0.0, score) if gold.shape[1] else score


def _aligned(gold: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """(the right outputs, out == them position by position, the right outputs' positions),
    padded to one width."""
    width = max(gold.shape[1], out.shape[1])
    gold = np.pad(gold, ((0, 0), (0, width - gold.shape[1])), constant_values=-1)
    out = np.pad(out, ((0, 0), (0, width - out.shape[1])), constant_values=-1)
    inside = np.arange(width)[None, :] < (gold >= 0).sum(axis=1)[:, None]
    return gold, out == gold, inside


def split_examples(task: Task, split: str, size: int | None, data_seed: int) -> Examples:
    """`size` examples of the task's split (None: as many as the split holds), generated from
    the data seed; a finite split gives at most all it holds. A seed study's suites (a
    sweep's, a language model's) are these, so that its runs of one task and data seed are
    evaluated on the same examples."""
    spec = task.split_spec(split)
    n = spec.size if size is None else size
    return task.generate(split, min(n, spec.size) if spec.finite else n, data_seed)
