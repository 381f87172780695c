"""Symbolic integration as a token task: the probe and seed studies run on it like on any other.

An input is an integrand f in Lample & Charton's prefix tokens (without their `sub Y'` head),
an output an antiderivative F in the same tokens. The data is made by the integration
generators (BWD by default), on the `fast` engine unless the `engine` option says `lc`:
Lample & Charton's random expressions and forms either way, but `fast` simplifies F' more
cheaply than their SymPy `simplify` (another distribution, 50 times quicker to make; and the
data of sweeps made before the option). The verifier judges an output by differentiation, up
to a constant, under a budget of CPU time per output (`verifier.py`), so the outcomes are
correct, incorrect, unparseable (ids that are not an expression) and timeout (no verdict
within the budget).

Vocabularies hold the tokens the generator writes: an output with any other token (`cot`,
`sub`, ...) cannot be written in the target ids and counts as unparseable. Held-out inputs
are set apart by a hash of the problem: validation and test draw only problems of one bucket
in ten, training never does, so no test problem is ever a training one.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import sympy as sp

from genprobe.errors import ConfigError, GenprobeError, TaskContractError, check_choice
from genprobe.options import is_integer
from genprobe.runs.cpus import usable_cpus
from genprobe.runs.provenance import file_digest
from genprobe.tasks.integration.expression import Expr, to_sympy
from genprobe.tasks.integration.generation import generate as generate_pairs
from genprobe.tasks.integration.generation_config import GeneratorConfig, TreeSettings
from genprobe.tasks.integration.prefix import PROBLEM_PREFIX, from_prefix
from genprobe.tasks.integration.reading import ExpressionInput
from genprobe.tasks.integration.suites import splits as brittleness
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.tasks.integration.vocab import DIGIT_TOKENS, VOCAB
from genprobe.tasks.sampling import split_stream
from genprobe.tasks.task import Examples, Split, Task
from genprobe.tasks.tokens import encode_inputs, encode_outputs
from genprobe.tasks.verdict import Outcome, Verdict

# what SymPy evaluates a part of an integrand to when it is no real function of x
NO_FUNCTION = (sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I)

# What L&C's integration data is written in (SymPy's canonical shape: no sub, inv, pow2, ...):
# the functions of their operator table, and abs and sign, which derivatives bring in.
FUNCTIONS = (
    "sqrt", "exp", "ln", "abs", "sign", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
)  # fmt: skip
TOKENS = ("x", "pi", "E", "add", "mul", "div", "pow", *FUNCTIONS, "INT+", "INT-", *DIGIT_TOKENS)
SOURCE_VOCAB = tuple(token for token in VOCAB if token in TOKENS)  # in L&C's id order
TARGET_VOCAB = tuple(token for token in SOURCE_VOCAB if token != "sign")  # F never has one
HELD_OUT = 10  # one problem bucket in HELD_OUT is validation's and test's, never training's
MAX_LEN = 512  # L&C's longest sequence, `sub Y' f` or F, with two end markers
LONGEST_INPUT = MAX_LEN - len(PROBLEM_PREFIX) - 2
VERIFIED = {o.value for o in (Outcome.CORRECT, Outcome.INCORRECT, Outcome.TIMEOUT)}
# what decided a verdict the verifier was not asked for (`IntegrationTask.verify_many`)
NO_ANSWER, NO_INTEGRAND = "no answer", "no integrand"
ATTEMPTS_PER_WORKER = 500  # generation takes one more worker process per this many attempts


@dataclass(frozen=True)
class IntegrationTask(Task):
    """The antiderivative F of an integrand f, in prefix tokens; any F' = f is right.

    Examples:
        mul INT+ 2 x  -> pow x INT+ 2                       (2x: x^2)
        cos x  -> sin x
        exp x  -> add INT+ 7 exp x                          (any constant)
    """

    method: str = "bwd"  # fwd, bwd or ibp, as `genprobe integration generate --method`
    max_ops: int = 15  # most operators per random expression
    max_int: int = 5  # integer leaves are drawn from 1..max_int
    negative_ints: bool = False  # negate integer leaves with probability 1/2
    deadline: float = 2.0  # verifier CPU seconds per output; over it: timeout
    # the generators' engine: fast (the default, quick) or lc (Lample & Charton's distribution)
    engine: str = "fast"
    # a test or validation file of the model's distribution (L&C's text, JSONL or Parquet):
    # its problems are the splits in-distribution and validation-primitives (recorded as an
    # absolute path); "": none
    data: str = ""
    data_split: str = ""  # `data`'s split, for a JSONL or Parquet file with several
    # `data`'s sha256 (16 hex digits): filled in from the file, checked against it when given
    # (a run records it: another file at the same path is refused)
    data_sha256: str = ""
    # the order of robustness-simple and integer-extrapolation: seeded (a seeded order of the
    # paper-size suite) or cells (that order taken a problem of each set and template in turn,
    # so a small split holds every cell: the brittleness study's)
    order: str = "seeded"

    ADDED_OPTIONS: ClassVar[Mapping[str, Any]] = {
        "engine": "fast", "data": "", "data_split": "", "data_sha256": "", "order": "seeded",
    }  # fmt: skip

    def __post_init__(self) -> None:
        for name in ("max_ops", "max_int"):
            if not is_integer(getattr(self, name)):
                raise ConfigError(name, "an integer", getattr(self, name))
        self.generator().validated()
        VerifierConfig(deadline=self.deadline).validated()
        check_choice("order", self.order, brittleness.ORDERS)
        self._check_data()

    def _check_data(self) -> None:
        """`data` an existing file, as an absolute path (a run's workers, and later commands,
        may run elsewhere, as a probe's files of inputs), its digest recorded (or, given, the
        file's)."""
        if not self.data:
            for name in ("data_split", "data_sha256"):
                if getattr(self, name):
                    raise ConfigError(name, "with data=FILE", getattr(self, name))
            return
        if not Path(self.data).is_file():
            raise ConfigError("data", "an existing file", self.data)
        object.__setattr__(self, "data", str(Path(self.data).absolute()))
        found = file_digest(self.data)
        if self.data_sha256 and self.data_sha256 != found:
            raise ConfigError(
                "data",
                f"the file of sha256 {self.data_sha256} (the run's)",
                f"{self.data} ({found})",
            )
        object.__setattr__(self, "data_sha256", found)

    def generator(self) -> GeneratorConfig:
        """The generator's settings (those of `integration generate` but for these options)."""
        tree = TreeSettings(max_int=self.max_int, positive=not self.negative_ints)
        return GeneratorConfig(
            method=self.method, tree=tree, max_ops=self.max_ops, max_len=MAX_LEN,
            engine=self.engine,
        )  # fmt: skip

    @property
    def source_vocab(self) -> tuple[str, ...]:
        return SOURCE_VOCAB

    @property
    def target_vocab(self) -> tuple[str, ...]:
        return TARGET_VOCAB

    def splits(self) -> Mapping[str, Split]:
        lengths = (1, LONGEST_INPUT)
        drawn = f"{self.method.upper()} pairs of up to {self.max_ops} operators"
        return {
            "train": Split(f"training data: {drawn}", lengths, 2_000),
            "validation": Split(f"held-out problems: {drawn}", lengths, 500, disjoint=True),
            "test": Split(f"held-out problems: {drawn}", lengths, 500, disjoint=True),
            **{
                name: Split(description, lengths, brittleness.DEFAULT_SIZES[name])
                for name, description in brittleness.SPLITS.items()
            },
            **{
                name: Split(description, lengths, self._file_size(name), finite=True)
                for name, description in (brittleness.FILE_SPLITS if self.data else {}).items()
            },
        }

    def _file_size(self, split: str) -> int:
        """The problems split `split` of the `data` file holds."""
        primitives = brittleness.file_primitives(
            split, self.data, self.data_split, self.data_sha256
        )
        return len(primitives)

    def suites(self) -> tuple[str, ...]:
        """The held-out problems and the brittleness suites that cost no generation
        (`suites/splits.py`: `operator-extrapolation` is a split to ask for), and with a
        `data` file its problems (in-distribution)."""
        own = (brittleness.IN_DISTRIBUTION,) if self.data else ()
        return ("test", *brittleness.SHIFTED, *own)

    def generate(self, split: str, n: int, seed: int) -> Examples:
        """The first n distinct pairs the generator keeps from the split's own stream of
        attempts (`generation.generate`: the same for any number of workers); for a brittleness
        suite, its first n problems and their known antiderivatives (`suites/splits.py`)."""
        held_out = self.checked_split(split, n).disjoint
        if split in brittleness.SPLITS or split in brittleness.FILE_SPLITS:
            table = self.suite_table(split, n, seed)
            # a reference the target ids cannot write (or a file's problem without one) is none
            # known (a row of -1)
            written = [
                r if r and set(r.split()) <= set(TARGET_VOCAB) else "" for r in table["reference"]
            ]
            return _examples(table["problem"], written, split)
        stream = int(split_stream(seed, split).integers(2**63))
        attempts = n * HELD_OUT if held_out else n  # a held-out split keeps one pair in ten
        workers = min(usable_cpus(), 1 + attempts // ATTEMPTS_PER_WORKER)
        keep = partial(_keeps, held_out)
        rows = generate_pairs(self.generator(), n, seed=stream, workers=workers, keep=keep).rows
        if len(rows) < n:
            raise TaskContractError(
                f"integration: the generator kept {len(rows)} of the {n} pairs asked for"
            )
        problems = [" ".join(row.input.split()[len(PROBLEM_PREFIX) :]) for row in rows]
        return _examples(problems, [row.output for row in rows], split)

    def suite_table(self, split: str, n: int, seed: int) -> pd.DataFrame:
        """The first n problems of a brittleness split (`suites/splits.py`) as a suite table:
        problem, reference, and how each was made (set, template, coefficients)."""
        if split in brittleness.FILE_SPLITS:
            return brittleness.file_table(
                split, n, seed, self.data, self.data_split, self.data_sha256
            )
        return brittleness.suite_table(split, n, seed, self.method, self.max_ops, self.order)

    def verify(self, src: np.ndarray, out: np.ndarray, out_len: np.ndarray) -> np.ndarray:
        finished = np.ones(len(src), dtype=bool)
        return self.outcomes(src, out, out_len, finished) == Outcome.CORRECT.value

    def outcomes(
        self, src: np.ndarray, out: np.ndarray, out_len: np.ndarray, finished: np.ndarray
    ) -> np.ndarray:
        """(n,) correct / incorrect / timeout as the verifier finds F' against f, all outputs
        in one call of its worker pool; unparseable for ids outside the vocabulary, an output
        cut at the length limit, or tokens that are no expression. An input that is not an
        integrand of the task has no right output: incorrect."""
        out, out_len = np.asarray(out), np.asarray(out_len)
        answers: list[tuple[str, ...] | None] = [None] * len(out)
        for i, (ids, length) in enumerate(zip(out, out_len, strict=True)):
            ids = ids[:length]
            if finished[i] and (ids >= 0).all() and (ids < len(TARGET_VOCAB)).all():
                answers[i] = tuple(TARGET_VOCAB[j] for j in ids)
        return self.judge(self.problems(src), answers)

    def judge(
        self, problems: Sequence[Expr | None], answers: Sequence[ExpressionInput | None]
    ) -> np.ndarray:
        """(n,) the outcome of answer i to integrand i (`problems`): `outcomes_of` their
        `verify_many` verdicts."""
        return self.outcomes_of(self.verify_many(list(zip(problems, answers, strict=True))))

    def verify_many(
        self, pairs: Sequence[tuple[Expr | None, ExpressionInput | None]]
    ) -> list[Verdict]:
        """The verdict of each (integrand, answer) pair by the task's verifier (its deadline,
        the strict policy), all in one call of its pool, a pair asked twice verified once:
        correct / incorrect / timeout / unsupported as it finds them; unparseable where there
        is no answer (None), incorrect where there is no integrand (None)."""
        verdicts = [Verdict(Outcome.UNPARSEABLE, NO_ANSWER)] * len(pairs)
        asked: dict[tuple[Expr, ExpressionInput], list[int]] = {}
        for i, (problem, answer) in enumerate(pairs):
            if problem is None:
                verdicts[i] = Verdict(Outcome.INCORRECT, NO_INTEGRAND)
            elif answer is not None:
                asked.setdefault((problem, answer), []).append(i)
        if asked:
            with Verifier(VerifierConfig(deadline=self.deadline)) as verifier:
                found = verifier.verify_many(list(asked))
            for rows, verdict in zip(asked.values(), found, strict=True):
                for i in rows:
                    verdicts[i] = verdict
        return verdicts

    @staticmethod
    def outcomes_of(verdicts: Sequence[Verdict]) -> np.ndarray:
        """(n,) the task's outcome of each verdict: as the verifier found it, but unparseable
        for an answer it could not read (SymPy could not: "unsupported")."""
        outcomes = [verdict.outcome.value for verdict in verdicts]
        return np.array(
            [o if o in VERIFIED else Outcome.UNPARSEABLE.value for o in outcomes], dtype=object
        ).astype(str)

    def problems(self, src: np.ndarray) -> list[Expr | None]:
        """The integrand of each input (ids as in `Examples.src`), None where it is not one the
        verifier can take (ids outside the vocabulary, not an expression, a power too large,
        or a value SymPy makes no real function of: 1/0, 0/0, sqrt(-1), as SAGGA's filter)."""
        return [
            tree if tree is not None and _real(tree) else None for tree in expression_trees(src)
        ]

    def max_output_length(self, input_length: int) -> int:
        """512 whatever the input (L&C's limit, above every generated F): an integrand's
        length does not bound its antiderivative's."""
        return MAX_LEN

    def local_structures(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """Each operator of the integrand with each child (`mul sin`, `sin x`; an integer is
        `int`); none for an input that is no expression."""
        try:
            tree = from_prefix(tokens)
        except GenprobeError:
            return ()
        pairs, stack = [], [tree]
        while stack:
            node = stack.pop()
            pairs += [f"{node.op} {child.op}" for child in node.args]
            stack += node.args
        return tuple(pairs)

    def answer(self, ids: np.ndarray) -> Expr | None:
        """The expression an output's ids (target vocabulary, no padding) spell, or None."""
        if not len(ids) or (ids < 0).any() or (ids >= len(TARGET_VOCAB)).any():
            return None
        try:
            return from_prefix([TARGET_VOCAB[i] for i in ids])
        except GenprobeError:
            return None


def _examples(problems: Iterable[str], antiderivatives: Iterable[str], split: str) -> Examples:
    src = encode_inputs(SOURCE_VOCAB, [(None, problem.split()) for problem in problems], split)
    tgt, _ = encode_outputs(TARGET_VOCAB, [big_f.split() for big_f in antiderivatives])
    return Examples(src, tgt)


def _keeps(held_out: bool, problem: str, output: str) -> bool:
    """Whether a generated pair belongs to a split (held out or training) and the vocabularies
    hold its tokens."""
    if (zlib.crc32(problem.encode()) % HELD_OUT == 0) != held_out:
        return False
    tokens = problem.split()[len(PROBLEM_PREFIX) :]
    return set(tokens) <= set(SOURCE_VOCAB) and set(output.split()) <= set(TARGET_VOCAB)


def expression_trees(src: np.ndarray) -> list[Expr | None]:
    """The expression each input's ids spell; None where they spell none (ids outside the
    source vocabulary, or not a prefix expression)."""
    trees: list[Expr | None] = []
    for row in np.asarray(src):
        length = int((row > 0).sum())
        tree = None
        if length and (row[:length] > 0).all() and (row[:length] <= len(SOURCE_VOCAB)).all():
            try:
                tree = from_prefix([SOURCE_VOCAB[i - 1] for i in row[:length]])
            except GenprobeError:
                tree = None
        trees.append(tree)
    return trees


def _real(tree: Expr) -> bool:
    """Whether SymPy makes a real function of x of the tree (and can build it at all: a power
    too large is refused)."""
    try:
        return not to_sympy(tree).has(*NO_FUNCTION)
    except GenprobeError:
        return False
