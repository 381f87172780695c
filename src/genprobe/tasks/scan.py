"""SCAN (Lake & Baroni 2018): navigation commands and their action sequences, all 20,910.

The grammar is enumerated exhaustively and its interpreter is the verifier; the splits are
rules over that enumeration and equal the published split files as multisets (checked while
building against github.com/brendenlake/SCAN; `tests/tasks/test_scan.py` holds the files'
digests), except the random 80/20 `simple` split, whose draw cannot be reproduced: it is drawn
from the data seed, with the published sizes.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from genprobe.errors import check_choice
from genprobe.tasks.published import Published
from genprobe.tasks.row_edits import gapped, trim
from genprobe.tasks.sampling import split_stream
from genprobe.tasks.task import NO_ANSWER, DeterministicTask, Examples, Split

PRIMITIVES = ("walk", "look", "run", "jump")
DIRECTIONS = ("left", "right")
WORDS = (*PRIMITIVES, "turn", *DIRECTIONS, "opposite", "around", "twice", "thrice", "and", "after")
ACTIONS = ("I_WALK", "I_LOOK", "I_RUN", "I_JUMP", "I_TURN_LEFT", "I_TURN_RIGHT")
TURN = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
REPEAT = {"twice": 2, "thrice": 3}
FAMILIES = ("simple", "length", "addprim_jump", "addprim_turn_left")
LONGEST_TRAINED = 22  # the length split trains on at most 22 actions, tests on 24 to 48
SIMPLE_TRAIN = 16_728  # the published simple split: 80 % of the commands train, 20 % test
PRIMITIVE_SHARE = 0.1  # the add-primitive training sets repeat the primitive to 10 % of them


def interpret(words: Sequence[str]) -> tuple[str, ...] | None:
    """The action sequence of a command (a sequence of words), None if it is not one.

    Examples:
        ("jump", "left")                          -> I_TURN_LEFT I_JUMP
        ("walk", "twice", "after", "run", "left")  -> I_TURN_LEFT I_RUN I_WALK I_WALK
    """
    for conjunction in ("and", "after"):
        if conjunction in words:
            at = words.index(conjunction)
            first, second = _sentence(words[:at]), _sentence(words[at + 1 :])
            if first is None or second is None:
                return None
            return first + second if conjunction == "and" else second + first
    return _sentence(words)


def _sentence(words: Sequence[str]) -> tuple[str, ...] | None:
    if words and words[-1] in REPEAT:
        verb = _verb(words[:-1])
        return None if verb is None else verb * REPEAT[words[-1]]
    return _verb(words)


def _verb(words: Sequence[str]) -> tuple[str, ...] | None:
    match tuple(words):
        case (primitive,) if primitive in PRIMITIVES:
            return (f"I_{primitive.upper()}",)
        case (action, direction) if direction in DIRECTIONS and _doer(action) is not None:
            return (TURN[direction], *_doer(action))
        case (action, "opposite", direction) if (
            direction in DIRECTIONS and _doer(action) is not None
        ):
            return (TURN[direction], TURN[direction], *_doer(action))
        case (action, "around", direction) if direction in DIRECTIONS and _doer(action) is not None:
            return (TURN[direction], *_doer(action)) * 4
    return None


def _modified(words: Sequence[str]) -> tuple[str, ...]:
    """A sentence's action word with its direction and with its repetition, each a structure."""
    if not words:
        return ()
    action, rest = words[0], tuple(words[1:])
    repeat = rest[-1:] if rest and rest[-1] in REPEAT else ()
    direction = rest[: len(rest) - len(repeat)]
    return tuple(" ".join((action, *part)) for part in (direction, repeat) if part)


def _doer(word: str) -> tuple[str, ...] | None:
    """What an action word does after its turn: a primitive's action; `turn` adds nothing."""
    return (f"I_{word.upper()}",) if word in PRIMITIVES else (() if word == "turn" else None)


@functools.cache
def commands() -> tuple[tuple[str, ...], ...]:
    """Every SCAN command in the grammar's order: C -> S | S and S | S after S,
    S -> V | V twice | V thrice, V -> D[1] opposite D[2] | D[1] around D[2] | D | U,
    D -> U left | U right | turn left | turn right, U -> walk | look | run | jump."""
    doers = (*PRIMITIVES, "turn")
    verbs = [
        *((d, "opposite", side) for d in doers for side in DIRECTIONS),
        *((d, "around", side) for d in doers for side in DIRECTIONS),
        *((d, side) for d in doers for side in DIRECTIONS),
        *((u,) for u in PRIMITIVES),
    ]
    sentences = [(*v, *times) for v in verbs for times in ((), ("twice",), ("thrice",))]
    pairs = itertools.product(sentences, ("and", "after"), sentences)
    return (*sentences, *((*a, c, *b) for a, c, b in pairs))


@functools.cache
def _table() -> tuple[np.ndarray, np.ndarray, dict[tuple[str, ...], int]]:
    """(commands × 9 input ids, commands × 48 output ids, command -> row), from the grammar."""
    rows = commands()
    actions = [interpret(c) for c in rows]
    src = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)
    tgt = np.full((len(rows), max(map(len, actions))), -1, dtype=np.int64)
    word_id = {w: i for i, w in enumerate(WORDS, start=1)}
    action_id = {a: i for i, a in enumerate(ACTIONS)}
    for row, (command, acts) in enumerate(zip(rows, actions, strict=True)):
        src[row, : len(command)] = [word_id[w] for w in command]
        tgt[row, : len(acts)] = [action_id[a] for a in acts]
    return src, tgt, {c: i for i, c in enumerate(rows)}


@functools.cache
def sentences() -> np.ndarray:
    """(S, 3) input ids of the one-sentence commands (the grammar's S), in its order."""
    one = sum(1 for command in commands() if not {"and", "after"} & set(command))
    return trim(_table()[0][:one], 0)


@functools.cache
def _members(family: str, part: str) -> np.ndarray:
    """Row numbers of a split's examples, repeated where the published file repeats them (the
    simple split has no fixed members: it is drawn from the data seed)."""
    rows = commands()
    if family == "length":
        short = np.array([len(interpret(c)) <= LONGEST_TRAINED for c in rows])
        return np.flatnonzero(short if part == "train" else ~short)
    primitive = ("jump",) if family == "addprim_jump" else ("turn", "left")
    holds = np.array([_contains(c, primitive) for c in rows])
    alone = _table()[2][primitive]
    if part == "test":
        return np.flatnonzero(holds & (np.arange(len(rows)) != alone))
    others = np.flatnonzero(~holds)
    copies = round(len(others) * PRIMITIVE_SHARE / (1 - PRIMITIVE_SHARE))
    return np.concatenate([others, np.full(copies, alone)])


def _contains(command: tuple[str, ...], words: tuple[str, ...]) -> bool:
    n = len(words)
    return any(command[i : i + n] == words for i in range(len(command) - n + 1))


@dataclass(frozen=True)
class Scan(DeterministicTask):
    """Follow a navigation command: the actions it stands for, composed by its grammar.

    Examples:
        jump left                           -> I_TURN_LEFT I_JUMP
        walk twice after run opposite left  -> I_TURN_LEFT I_TURN_LEFT I_RUN I_WALK I_WALK
        turn around right                   -> I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT

    Option `split` picks the study's training and test split: simple (a random 80/20 split),
    length (train on at most 22 actions, test on 24-48), addprim_jump or addprim_turn_left
    (the primitive alone in training, test on every command using it). SCAN has no validation
    split: early stopping watches the first examples of the training split.
    """

    split: str = "simple"

    def __post_init__(self) -> None:
        check_choice("split", self.split, FAMILIES)

    @property
    def train_split(self) -> str:
        return f"{self.split}_train"

    @property
    def validation_split(self) -> str:
        return self.train_split

    @property
    def source_vocab(self) -> tuple[str, ...]:
        return WORDS

    @property
    def target_vocab(self) -> tuple[str, ...]:
        return ACTIONS

    def splits(self) -> Mapping[str, Split]:
        def train(description: str, size: int) -> Split:
            return Split(description, (1, 9), size, finite=True)

        def test(description: str, size: int, lengths: tuple[int, int]) -> Split:
            return Split(description, lengths, size, finite=True, disjoint=True)

        return {
            "all": train("every command of the grammar", len(commands())),
            "simple_train": train("a random 80 % of the commands (drawn from the seed)", 16_728),
            "simple_test": test("the other 20 %", 4_182, (1, 9)),
            "length_train": train("commands of at most 22 actions", 16_990),
            "length_test": test("commands of 24 to 48 actions", 3_920, (4, 9)),
            "addprim_jump_train": train("commands without `jump`, and `jump` alone (10 %)", 14_670),
            "addprim_jump_test": test("every other command with `jump`", 7_706, (2, 9)),
            "addprim_turn_left_train": train(
                "commands without `turn left`, and it alone (10 %)", 21_890
            ),
            "addprim_turn_left_test": test("every other command with `turn left`", 1_208, (3, 8)),
        }

    def suites(self) -> tuple[str, ...]:
        return (f"{self.split}_test",)

    def generate(self, split: str, n: int, seed: int) -> Examples:
        self.checked_split(split, n)
        family, _, part = split.rpartition("_")
        if split == "all":
            rows = np.arange(len(commands()))
        elif family == "simple":
            drawn = split_stream(seed, "simple").permutation(len(commands()))
            rows = drawn[:SIMPLE_TRAIN] if part == "train" else drawn[SIMPLE_TRAIN:]
        else:
            rows = _members(family, part)
        rows = rows[split_stream(seed, split).permutation(len(rows))[:n]]
        src, tgt, _ = _table()
        return Examples(trim(src[rows], 0), trim(tgt[rows], -1))

    def solve(self, src: np.ndarray) -> np.ndarray:
        _, tgt, row = _table()
        found = [row.get(command) for command in self._commands(src)]
        found = [None if gap else r for r, gap in zip(found, gapped(src), strict=True)]
        gold = np.full((len(src), tgt.shape[1]), -1, dtype=np.int64)
        known = [i for i, r in enumerate(found) if r is not None]
        gold[known] = tgt[[found[i] for i in known]]
        gold[[i for i, r in enumerate(found) if r is None], 0] = NO_ANSWER
        return gold

    def length(self, src: np.ndarray) -> np.ndarray:
        """The number of actions (Lake & Baroni's length), 0 for what is not a command."""
        return (self.solve(src) >= 0).sum(axis=1)

    def max_output_length(self, input_length: int) -> int:
        return _longest(input_length)

    def published(self) -> Published | None:
        return LAKE_BARONI_2018.get(self.split)

    def local_structures(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """Each action word with its direction (`jump around left`) and with its repetition
        (`jump twice`); of a conjunction, it with its two action words (`jump after walk`)."""
        words = tuple(tokens)
        for conjunction in ("and", "after"):
            if conjunction in words:
                at = words.index(conjunction)
                first, second = words[:at], words[at + 1 :]
                joined = (f"{first[0]} {conjunction} {second[0]}",) if first and second else ()
                return (*joined, *_modified(first), *_modified(second))
        return _modified(words)

    @staticmethod
    def _commands(src: np.ndarray) -> list[tuple[str, ...]]:
        names = ("", *WORDS)
        return [tuple(names[i] for i in row if i > 0) for row in np.asarray(src)]


@functools.cache
def _longest(words: int) -> int:
    """The most actions of any command of at most `words` words."""
    return max((len(interpret(c)) for c in commands() if len(c) <= words), default=0)


# Lake & Baroni (2018): accuracy (%) of their overall-best model (2-layer LSTM, 200 units, no
# attention, dropout 0.5), averaged over 5 runs; the top performer of each split differs.
_OVERALL_BEST = {
    "arch": "recurrent",
    "model.cell": "lstm",
    "model.layers": 2,
    "model.hidden": 200,
    "model.attention": "none",
    "model.dropout": 0.5,
    "train.optimizer": "adam",
    "train.lr": 0.001,
}
LAKE_BARONI_2018 = {
    split: Published(
        source="Lake & Baroni 2018",
        seeds=5,
        suites={f"{split}_test": {"mean": value}},
        settings=_OVERALL_BEST,
        note=note,
    )
    for split, value, note in (
        ("simple", 99.7, "overall-best model; the top performer 99.8"),
        ("length", 13.8, "overall-best model; the top performer (GRU, attention) 20.8"),
        ("addprim_jump", 0.08, "overall-best model; the top performer (LSTM, attention) 1.2"),
    )
}
