"""What a task declares for the probe studies (`genprobe probe`, `genprobe search`): its `Probes`.

A task's row of `registry.TASKS` names its `Probes` subclass (a `py:` task's is the class
`<Task>Probes` in the task's module, where there is one); `registry.task_probes(task)` makes it.
This module's `Probes` holds the defaults: what a task that declares nothing gets.

    families()      name -> Family: a perturbation of inputs; the new gold output is the task's
                    own (its verifier judges the perturbed input), so a family moves inputs; on
                    a task with many right outputs it may also move a known right output with
                    each input (`with_reference`), which the probe weighs answers against
    relations()     name -> Relation: a metamorphic relation, a partner input per input and
                    what a model's two outputs must satisfy (a + b and b + a: the same sum)
    compositions()  name -> Composition: a way to join inputs into one whose right output
                    follows from theirs (SCAN's `S1 and S2`; integration's f + g, with F + G)
    derived()       name -> Derived: a suite made of the base inputs a model solved, built
                    after they are decoded (integration: Welleck et al.'s robustness on solved
                    validation problems and sums of solved ones)
    valid_inputs()  which inputs are the task's (a mutated input that is not is never scored);
                    by default those the task's `solve` has a right output for
    features()      name -> (n,) number per input, for readable slices and failure clusters;
                    by default the task's length and a count per input token
    mutations()     name -> Family: what the genetic search mutates with (token edits kept
                    valid by `valid_inputs`, and the families)
    breakdown()     Breakdown or None: the categorical feature the report breaks each
                    family's paired drop down by (word problems: per template)
    tag_failures()  whether a failed input has a right output at all (integration: SymPy's)
    input_text(), output_text()   each input and output as a reader writes it (default: the
                    tokens)

Example:
    probes = task_probes(load_task("addition"))
    moved = probes.families()["operand_swap"].perturb(src, np.random.default_rng(0))
    moved.src, moved.origin  -> the swapped inputs, and the row of `src` each came from
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from genprobe.errors import ConfigError, TaskContractError
from genprobe.tasks.task import NO_ANSWER, Task
from genprobe.tasks.tokens import input_lines, output_lines

# what `Probes.tag_failures` says a failed input is
FAILURE_KINDS = ("robustness", "exploit", "unknown")


@dataclass(frozen=True)
class Tag:
    """What `Probes.tag_failures` says of one failed input."""

    kind: str  # one of FAILURE_KINDS
    detail: str  # why, for a reader ("needs erfi")
    status: str = "done"  # how the tagger ran: a deadline pool's "timeout", "hang", "error"


@dataclass(frozen=True)
class Perturbed:
    """Inputs made from others: row i of `src` was made from row `origin[i]` of the input."""

    src: np.ndarray  # (m, L') input ids, 1-based, 0 = padding
    origin: np.ndarray  # (m,) int, rows of the original inputs; inputs left out are not here
    tgt: np.ndarray | None = None  # (m, W) a right output of each (ids, -1 after the end)

    def __len__(self) -> int:
        return len(self.src)


Perturb = Callable[[np.ndarray, np.random.Generator], Perturbed]
# (src, tgt, rng) -> Perturbed with `tgt`: inputs moved as `Perturb` moves them, each with a
# right output made from its original's right output `tgt` (n, W)
PerturbPairs = Callable[[np.ndarray, np.ndarray, np.random.Generator], Perturbed]
# (out_a, len_a, out_b, len_b) -> (n,) bool: whether the two outputs keep the relation
Agree = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
# (parts) -> Perturbed: `parts` holds `arity` (n, L) inputs, and composite i joins row i of each;
# `origin` the rows joined (a row whose parts cannot be joined is left out)
Join = Callable[[Sequence[np.ndarray]], Perturbed]
# (parts, outputs) -> Perturbed with `tgt`: `Join`'s composites, each with a right output made
# from a right output of each part (`outputs`: `arity` (n, W) arrays)
JoinPairs = Callable[[Sequence[np.ndarray], Sequence[np.ndarray]], Perturbed]


def same_output(
    out_a: np.ndarray, len_a: np.ndarray, out_b: np.ndarray, len_b: np.ndarray
) -> np.ndarray:
    """(n,) whether two outputs (ids, -1 after the end) are the same tokens."""
    width = max(out_a.shape[1], out_b.shape[1])
    a = np.pad(out_a, ((0, 0), (0, width - out_a.shape[1])), constant_values=-1)
    b = np.pad(out_b, ((0, 0), (0, width - out_b.shape[1])), constant_values=-1)
    inside = np.arange(width)[None, :] < np.asarray(len_a)[:, None]
    return (np.asarray(len_a) == np.asarray(len_b)) & ((a == b) | ~inside).all(axis=1)


@dataclass(frozen=True)
class Family:
    """A named perturbation: `perturb(src, rng)` moves (n, L) inputs to new valid inputs.
    `with_reference(src, tgt, rng)`, where a family has it, moves the same inputs for the same
    rng and a right output of each with them (k*f has the antiderivative k*F)."""

    description: str
    perturb: Perturb
    with_reference: PerturbPairs | None = None


@dataclass(frozen=True)
class Relation:
    """A metamorphic relation: `partner(src, rng)` gives each input's partner; a model keeps
    the relation on a pair when `agree` holds of its outputs on the input and on the partner."""

    description: str
    partner: Perturb
    agree: Agree = same_output


@dataclass(frozen=True)
class Composition:
    """A way to join `arity` inputs into one whose right output follows from theirs, so that a
    model that solves the parts should solve the whole (Welleck et al. 2022's compositionality:
    sums of problems the model solves). `takes` says which inputs can be a part, `join` makes
    the composites; `with_reference`, where a composition has it, joins a right output of each
    part too (f + g: F + G)."""

    description: str
    arity: int
    takes: Callable[[np.ndarray], np.ndarray]  # (n, L) inputs -> (n,) bool
    join: Join
    with_reference: JoinPairs | None = None


@dataclass(frozen=True)
class Made:
    """A derived suite's inputs: row i of `src` made from rows `sources[i]` of the solved
    inputs (-1 past the ones it was made from), in the set `sets[i]` of the suite (its
    perturbation, or its composition and arity), with a right output of each where known."""

    src: np.ndarray  # (m, L') input ids, 1-based, 0 = padding
    sources: np.ndarray  # (m, arity) int, rows of the solved inputs; -1 past a row's parts
    sets: np.ndarray  # (m,) str
    tgt: np.ndarray | None = None  # (m, W) a right output of each (ids, -1 after the end)

    def __len__(self) -> int:
        return len(self.src)


# (src, tgt, sets, size, seed) -> Made: a derived suite made of the inputs `src` (n, L) a
# model solved, with a right output of each (`tgt` (n, W), or None where none is known) and
# the set each came from (`sets` (n,) str: "" for a base input, else its set in the task
# split it was decoded in, `split_columns`), at most `size` inputs per set, its random draws
# seeded by `seed`
Derive = Callable[[np.ndarray, np.ndarray | None, np.ndarray, int, int], Made]


@dataclass(frozen=True)
class Derived:
    """A suite made of the inputs a model solved (Welleck et al. 2022: the perturbations of
    solved validation problems, the sums of solved problems), so that every failure on it is
    one the model did not make on what it was made from. `build` makes it (`Derive`)."""

    description: str
    build: Derive


@dataclass(frozen=True)
class Breakdown:
    """What the probe report breaks a paired drop down by: a feature of `features()` whose
    values are categories (a template, a rule); value i reads as `names[i]`, a value without a
    name as its number. (Not a search's `Slice`, a conjunction of conditions it found.)"""

    feature: str
    names: tuple[str, ...] = ()

    def name(self, value: int) -> str:
        return self.names[value] if 0 <= value < len(self.names) else str(value)


def padded(rows: list[np.ndarray], fill: int = 0) -> np.ndarray:
    """(n, L) ids from rows of different lengths, `fill` after each row's end (0: input ids'
    padding; -1: output ids')."""
    width = max((len(row) for row in rows), default=0)
    out = np.full((len(rows), width), fill, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def input_keys(src: np.ndarray) -> list[str]:
    """Each input as the text of its ids, padding dropped: what the same input shares whatever
    its padding, and what a search's archive names it by."""
    return [" ".join(map(str, row[row > 0])) for row in np.asarray(src)]


def from_input_keys(keys: list[str]) -> np.ndarray:
    """The inputs of `input_keys`, padded."""
    return padded([np.array(key.split(), dtype=np.int64) for key in keys])


def chosen(declared: Mapping[str, object], names: list[str] | None, what: str) -> list[str]:
    """The names asked for (all declared ones for None), checked against the declared ones.

    Raises:
        ConfigError: a name the task does not declare (the message lists those it has).
    """
    if names is None:
        return list(declared)
    for name in names:
        if name not in declared:
            has = ", ".join(declared) or "none"
            raise ConfigError(what, f"one the task declares ({has})", name)
    return list(names)


def token_edits(vocab_size: int) -> dict[str, Family]:
    """The generic mutations of a token sequence: one token substituted, inserted, deleted, or
    two neighbours swapped, at a random position (the genetic search keeps the valid ones)."""

    def edit(kind: str) -> Perturb:
        def perturb(src: np.ndarray, rng: np.random.Generator) -> Perturbed:
            lengths = (src > 0).sum(axis=1)
            rows = []
            for row, length in zip(src, lengths, strict=True):
                tokens = list(row[:length])
                at = int(rng.integers(max(length, 1)))
                token = int(rng.integers(1, vocab_size + 1))
                if kind == "substitute" and tokens:
                    tokens[at] = token
                elif kind == "insert":
                    tokens.insert(int(rng.integers(length + 1)), token)
                elif kind == "delete" and length > 1:
                    del tokens[at]
                elif kind == "swap" and length > 1:
                    at = min(at, length - 2)
                    tokens[at], tokens[at + 1] = tokens[at + 1], tokens[at]
                rows.append(np.array(tokens, dtype=np.int64))
            return Perturbed(padded(rows), np.arange(len(src)))

        return perturb

    return {
        "substitute": Family("one token replaced by a random one", edit("substitute")),
        "insert": Family("a random token inserted", edit("insert")),
        "delete": Family("one token deleted", edit("delete")),
        "swap": Family("two neighbouring tokens swapped", edit("swap")),
    }


@dataclass(frozen=True)
class Probes:
    """What the probe studies perturb, pair, search and slice `task` by (the module's table)."""

    task: Task

    def families(self) -> Mapping[str, Family]:
        """The perturbation families the probe study can build suites from, by name."""
        return {}

    def relations(self) -> Mapping[str, Relation]:
        """The metamorphic relations the probe study checks consistency on, by name."""
        return {}

    def compositions(self) -> Mapping[str, Composition]:
        """The ways the probe study joins inputs into composites (`--compositions`), by name."""
        return {}

    def derived(self) -> Mapping[str, Derived]:
        """The suites the probe study can build of the inputs the model solved (`--derived`),
        by name: the base inputs, and those of the task's splits decoded beside them, each
        with its set."""
        return {}

    def split_columns(self, split: str, n: int, seed: int) -> dict[str, np.ndarray]:
        """(n,) str by name: what the task knows of each of the first n inputs of `split`
        (those `Task.generate` gives with data seed `seed`) that a report groups inputs by
        ("" where not known); none by default."""
        return {}

    def valid_inputs(self, src: np.ndarray) -> np.ndarray:
        """(n,) bool: whether each input (ids as in `Examples.src`) is one of the task's: by
        default, whether the task's `solve` has a right output for it.

        Raises:
            TaskContractError: the task does not say (no `solve`; the genetic search needs it).
        """
        unique, inverse = np.unique(np.asarray(src), axis=0, return_inverse=True)
        solved = self.task.solve(unique)
        if solved is None:
            raise TaskContractError(
                f"{type(self.task).__name__} does not say which inputs are valid "
                "(Probes.valid_inputs), so its inputs cannot be mutated"
            )
        answered = solved[:, 0] != NO_ANSWER if solved.shape[1] else np.ones(len(unique), bool)
        return answered[inverse.reshape(-1)]

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """(n,) numbers per input by name, that failure slices and clusters are read by: the
        task's length and how often each input token occurs. A boolean array is a condition
        the failure search's slices name as one ("has sin", "no sin")."""
        src = np.asarray(src)
        counts = {
            f"count {token}": (src == i).sum(axis=1)
            for i, token in enumerate(self.task.source_vocab, start=1)
        }
        return {"length": self.task.length(src), **counts}

    def mutations(self) -> Mapping[str, Family]:
        """What the genetic search mutates inputs with: token edits and the families (a mutant
        that `valid_inputs` refuses is counted, never scored)."""
        return {**token_edits(len(self.task.source_vocab)), **self.families()}

    def breakdown(self) -> Breakdown | None:
        """The categorical feature the probe report breaks each family's paired drop down by;
        None: no breakdown."""
        return None

    def tag_failures(self, src: np.ndarray, workers: int | None = None) -> list[Tag] | None:
        """Whether each input (one a model failed) has a right output in the model's output
        language at all: a `Tag` per input, its kind (`FAILURE_KINDS`) `robustness` (it has
        one: the failure is the model's), `exploit` (it has none) or `unknown` (the task could
        not tell); None, the default, where every input has one. Slow where a task has it
        (integration: SymPy's `integrate`), so the failure search asks it of `--tag-limit`
        inputs only, in shards (`studies/search/tags.py`); `workers`: the processes it may
        use (None: the task's default)."""
        return None

    def input_text(self, src: np.ndarray) -> list[str]:
        """Each input as a reader writes it, what the failure search shows and clusters by
        character n-grams: its tokens joined by spaces, unless the task has a better form."""
        return input_lines(self.task.source_vocab, src)

    def output_text(self, out: np.ndarray) -> list[str]:
        """Each output (ids as in `Examples.tgt`) as a reader writes it, what the failure
        search shows: its tokens joined by spaces, unless the task has a better form."""
        return output_lines(self.task.target_vocab, out)
