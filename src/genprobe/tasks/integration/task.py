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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from genprobe.errors import ConfigError, GenprobeError, TaskContractError
from genprobe.runs.cpus import usable_cpus
from genprobe.tasks.integration.exploits import TAG_SECONDS, tag_failures
from genprobe.tasks.integration.expression import Expr, from_sympy, to_sympy
from genprobe.tasks.integration.features import BOOLEAN, NUMERIC, tree_features
from genprobe.tasks.integration.generation import generate as generate_pairs
from genprobe.tasks.integration.generators import GeneratorConfig
from genprobe.tasks.integration.mutations import PRESETS, MutationPreset, mutate
from genprobe.tasks.integration.prefix import PROBLEM_PREFIX, from_prefix, to_prefix
from genprobe.tasks.integration.printing import problem_text
from genprobe.tasks.integration.random_trees import TreeSettings
from genprobe.tasks.integration.reading import ExpressionInput
from genprobe.tasks.integration.suites import splits as brittleness
from genprobe.tasks.integration.suites.validation import (
    ADDED_SETS,
    COEFFICIENT_SETS,
    COEFFICIENTS,
)
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.tasks.integration.vocab import DIGIT_TOKENS, VOCAB
from genprobe.tasks.probing import Composition, Family, Perturb, Perturbed, padded, token_edits
from genprobe.tasks.task import Examples, Split, Task, is_integer, split_stream
from genprobe.tasks.tokens import encode_inputs, encode_outputs, input_lines, output_lines
from genprobe.verification.verdict import Outcome

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
_SOURCE_INDEX = {token: i for i, token in enumerate(SOURCE_VOCAB, start=1)}
HELD_OUT = 10  # one problem bucket in HELD_OUT is validation's and test's, never training's
MAX_LEN = 512  # L&C's longest sequence, `sub Y' f` or F, with two end markers
LONGEST_INPUT = MAX_LEN - len(PROBLEM_PREFIX) - 2
VERIFIED = {o.value for o in (Outcome.CORRECT, Outcome.INCORRECT, Outcome.TIMEOUT)}
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

    ADDED_OPTIONS: ClassVar[Mapping[str, Any]] = {"engine": "fast"}

    def __post_init__(self) -> None:
        for name in ("max_ops", "max_int"):
            if not is_integer(getattr(self, name)):
                raise ConfigError(name, "an integer", getattr(self, name))
        self.generator().validated()
        VerifierConfig(deadline=self.deadline).validated()

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
        }

    def suites(self) -> tuple[str, ...]:
        """The held-out problems and the brittleness suites that cost no generation
        (`suites/splits.py`: `operator-extrapolation` is a split to ask for)."""
        return ("test", *brittleness.SHIFTED)

    def generate(self, split: str, n: int, seed: int) -> Examples:
        """The first n distinct pairs the generator keeps from the split's own stream of
        attempts (`generation.generate`: the same for any number of workers); for a brittleness
        suite, its first n problems and their known antiderivatives (`suites/splits.py`)."""
        held_out = self.checked_split(split, n).disjoint
        if split in brittleness.SPLITS:
            table = brittleness.suite_table(split, n, seed, self.method, self.max_ops)
            # a reference the target ids cannot write is none known (a row of -1)
            written = [r if set(r.split()) <= set(TARGET_VOCAB) else "" for r in table["reference"]]
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
        """(n,) the outcome of answer i to integrand i (`problems`), all in one call of the
        verifier's pool, a pair asked twice verified once: correct / incorrect / timeout as it
        finds them; unparseable where there is no answer (None) or it reads none (SymPy could
        not read it: "unsupported"); incorrect where there is no integrand (None)."""
        result = np.full(len(answers), Outcome.UNPARSEABLE.value, dtype=object)
        pairs: dict[tuple[Expr, ExpressionInput], list[int]] = {}
        for i, (problem, answer) in enumerate(zip(problems, answers, strict=True)):
            if problem is None:
                result[i] = Outcome.INCORRECT.value
            elif answer is not None:
                pairs.setdefault((problem, answer), []).append(i)
        if pairs:
            with Verifier(VerifierConfig(deadline=self.deadline)) as verifier:
                verdicts = verifier.verify_many(list(pairs))
            for rows, verdict in zip(pairs.values(), verdicts, strict=True):
                outcome = verdict.outcome.value
                result[rows] = outcome if outcome in VERIFIED else Outcome.UNPARSEABLE.value
        return result.astype(str)

    def problems(self, src: np.ndarray) -> list[Expr | None]:
        """The integrand of each input (ids as in `Examples.src`), None where it is not one the
        verifier can take (ids outside the vocabulary, not an expression, a power too large,
        or a value SymPy makes no real function of: 1/0, 0/0, sqrt(-1), as SAGGA's filter)."""
        return [tree if tree is not None and _real(tree) else None for tree in _trees(src)]

    def valid_inputs(self, src: np.ndarray) -> np.ndarray:
        return np.array([p is not None for p in self.problems(src)], dtype=bool)

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """The length in tokens and SAGGA's tree features of each integrand (`features.py`:
        depth, size, terms, largest |int|, x degree; a boolean for each operator family, x in
        an exponent, a division, a rational constant), what the failure search's clusters and
        slices read as SAGGA's slices do; 0 (False) for an input that spells no expression.
        Read off the tree alone: no SymPy (the probe computes them for every input it
        decodes)."""
        trees = _trees(src)
        found = np.array([tree is not None for tree in trees], dtype=bool)
        table = tree_features([tree for tree in trees if tree is not None])
        columns = {}
        for name in (*NUMERIC, *BOOLEAN):
            columns[name] = np.zeros(len(trees), dtype=table[name].dtype)
            columns[name][found] = table[name].to_numpy()
        return {"length": self.length(src), **columns}

    def tag_failures(self, src: np.ndarray) -> list[tuple[str, str]]:
        """Whether each integrand has an elementary antiderivative, as SAGGA's analysis tags
        its failures (`exploits.py`: SymPy's `integrate`, `TAG_SECONDS` of CPU time each, in
        a pool of a process per CPU); `unknown` for an input that is no integrand."""
        problems = self.problems(src)
        found = iter(tag_failures([p for p in problems if p is not None], TAG_SECONDS))
        tags = [None if p is None else next(found) for p in problems]
        return [("unknown", "not an integrand") if t is None else (t.kind, t.detail) for t in tags]

    def input_text(self, src: np.ndarray) -> list[str]:
        """Each integrand as SymPy prints it (as SAGGA shows and embeds its problems); the
        tokens of an input that is not one."""
        tokens = input_lines(self.source_vocab, src)
        return [
            tokens[i] if problem is None else problem_text(problem)
            for i, problem in enumerate(self.problems(src))
        ]

    def output_text(self, out: np.ndarray) -> list[str]:
        """Each answer as SymPy prints it (as SAGGA shows them); the tokens of one that is no
        expression."""
        return [_printed(tokens) for tokens in output_lines(self.target_vocab, out)]

    def max_output_length(self, input_length: int) -> int:
        """512 whatever the input (L&C's limit, above every generated F): an integrand's
        length does not bound its antiderivative's."""
        return MAX_LEN

    def families(self) -> Mapping[str, Family]:
        """The brittleness study's robustness perturbations (`suites/validation.py`), one k
        per input drawn from 2..99; each moves a known antiderivative F with its integrand."""
        families = {}
        for name, set_name in (("coefficient", "coeff_k*f"), ("divided", "coeff_f/k")):
            template, scale, scale_reference = COEFFICIENT_SETS[set_name]
            families[name] = self._family(
                f"{template} for k in 2..99, as the brittleness set {set_name}",
                partial(_scaled, scale, scale_reference),
            )
        for set_name, (template, added, added_reference) in ADDED_SETS.items():
            families[set_name] = self._family(
                f"{template}, as the brittleness set {set_name}",
                partial(_added, added, added_reference),
            )
        return families

    def compositions(self) -> Mapping[str, Composition]:
        """The brittleness study's compositionality (`suites/compositionality.py`): the sum of
        k integrands, k = 2, 3, 4, as SymPy adds them; F the sum of theirs."""
        return {
            f"sum_{k}": Composition(
                f"f1 + ... + f{k} as SymPy adds them (like terms combine), as the brittleness "
                "suite compositionality",
                k,
                self.valid_inputs,
                partial(_summed, self),
                partial(_summed, self),
            )
            for k in (2, 3, 4)
        }

    def mutations(self) -> Mapping[str, Family]:
        """Token edits, the families, and SAGGA's equation-tree mutations (`mutations.py`), one
        operator per preset (`tree_uniform`, `tree_robustness`, `tree_distance`). Every mutant
        is what SymPy's automatic evaluation makes of it, in L&C's canonical shape, as the
        families' are and as SAGGA simplifies each of its mutants: a token edit that spells
        `-3 + 5` or `00` asks the model `2` or `0`, the integrand its report prints."""
        edits = {
            name: Family(
                f"{family.description}, as SymPy evaluates the integrand",
                partial(_evaluated, self, family.perturb),
            )
            for name, family in token_edits(len(self.source_vocab)).items()
        }
        trees = {
            f"tree_{name}": self._family(
                f"SAGGA's {name} mutation of the equation tree", partial(_tree_mutated, preset)
            )
            for name, preset in PRESETS.items()
        }
        return {**edits, **self.families(), **trees}

    def _family(self, description: str, move: Move) -> Family:
        return Family(description, partial(_moved, self, move), partial(_moved_pairs, self, move))

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


# (f, F or None, rng) -> (the new integrand, its antiderivative or None), in SymPy
Move = Callable[[sp.Expr, sp.Expr | None, np.random.Generator], tuple[sp.Expr, sp.Expr | None]]


def _moved(
    task: IntegrationTask, move: Move, src: np.ndarray, rng: np.random.Generator
) -> Perturbed:
    """The integrands `move` makes of the valid inputs, in L&C's canonical shape; those it
    takes outside the vocabulary are left out."""
    return _moved_pairs(task, move, src, None, rng)


def _moved_pairs(
    task: IntegrationTask,
    move: Move,
    src: np.ndarray,
    tgt: np.ndarray | None,
    rng: np.random.Generator,
) -> Perturbed:
    """`_moved`, and where `tgt` gives each input's antiderivative, the moved one (a row of
    -1 where F cannot be read or its move leaves the target vocabulary)."""
    return _made(
        task, lambda f, big_f: move(f[0], big_f[0], rng), [src], None if tgt is None else [tgt]
    )


def _summed(
    task: IntegrationTask, parts: Sequence[np.ndarray], outputs: Sequence[np.ndarray] | None = None
) -> Perturbed:
    """f1 + ... + fk as SymPy adds them (like terms combine), and where `outputs` give the
    parts' antiderivatives, F1 + ... + Fk."""
    return _made(task, _sum, parts, outputs)


def _sum(f: list[sp.Expr], big_f: list[sp.Expr | None]) -> tuple[sp.Expr, sp.Expr | None]:
    return sp.Add(*f), None if None in big_f else sp.Add(*big_f)


def _made(
    task: IntegrationTask,
    make: Callable[[list[sp.Expr], list[sp.Expr | None]], tuple[sp.Expr, sp.Expr | None]],
    parts: Sequence[np.ndarray],
    outputs: Sequence[np.ndarray] | None,
) -> Perturbed:
    """The integrands `make` makes of row i of each of `parts` (each valid), in L&C's canonical
    shape, those it takes outside the vocabulary left out; with `outputs` (the parts'
    antiderivatives, as ids), F made with each (a row of -1 where F cannot be read or leaves
    the target vocabulary)."""
    problems = [task.problems(part) for part in parts]
    rows, origin, references = [], [], []
    for i, f in enumerate(zip(*problems, strict=True)):
        if None in f:
            continue
        known = [_antiderivative(task, out[i]) for out in outputs or ()] or [None] * len(f)
        try:
            made, big_f = make([to_sympy(part) for part in f], known)
            ids = _source_ids(to_prefix(from_sympy(made)))
        except GenprobeError:
            continue
        if ids is not None:
            rows.append(ids)
            origin.append(i)
            references.append(_tokens(big_f))
    if outputs is None:
        return Perturbed(padded(rows), np.array(origin, dtype=np.int64))
    out, _ = encode_outputs(TARGET_VOCAB, references)
    return Perturbed(padded(rows), np.array(origin, dtype=np.int64), out)


def _trees(src: np.ndarray) -> list[Expr | None]:
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


def _evaluated(
    task: IntegrationTask, perturb: Perturb, src: np.ndarray, rng: np.random.Generator
) -> Perturbed:
    """`perturb`'s mutants, each integrand as SymPy's automatic evaluation writes it; a mutant
    that is no integrand kept as it is (`valid_inputs` refuses it), one whose evaluated form
    leaves the vocabulary left out (not applicable)."""
    moved = perturb(src, rng)
    rows, origin = [], []
    for row, at, problem in zip(moved.src, moved.origin, task.problems(moved.src), strict=True):
        ids = row[row > 0]
        if problem is not None:
            try:
                ids = _source_ids(to_prefix(from_sympy(to_sympy(problem))))
            except GenprobeError:
                ids = None
        if ids is not None:
            rows.append(ids)
            origin.append(at)
    return Perturbed(padded(rows), np.array(origin, dtype=np.int64))


def _source_ids(tokens: Sequence[str]) -> np.ndarray | None:
    """The input ids of prefix tokens; None where one is outside the source vocabulary."""
    if any(token not in _SOURCE_INDEX for token in tokens):
        return None
    return np.array([_SOURCE_INDEX[token] for token in tokens], dtype=np.int64)


def _antiderivative(task: IntegrationTask, ids: np.ndarray) -> sp.Expr | None:
    answer = task.answer(ids[ids >= 0])
    try:
        return None if answer is None else to_sympy(answer)
    except GenprobeError:
        return None


def _tokens(expr: sp.Expr | None) -> list[str]:
    """F's target tokens; none where there is no F or a token is outside the vocabulary."""
    if expr is None:
        return []
    try:
        tokens = to_prefix(from_sympy(expr))
    except GenprobeError:
        return []
    return tokens if set(tokens) <= set(TARGET_VOCAB) else []


def _scaled(
    scale: Callable[[sp.Expr, int], sp.Expr],
    scale_reference: Callable[[sp.Expr, int], sp.Expr],
    f: sp.Expr,
    big_f: sp.Expr | None,
    rng: np.random.Generator,
) -> tuple[sp.Expr, sp.Expr | None]:
    k = int(rng.choice(COEFFICIENTS))
    return scale(f, k), None if big_f is None else scale_reference(big_f, k)


def _tree_mutated(
    preset: MutationPreset, f: sp.Expr, big_f: sp.Expr | None, rng: np.random.Generator
) -> tuple[sp.Expr, None]:
    """A mutant of f (its antiderivative is not known)."""
    return to_sympy(mutate(from_sympy(f), rng, preset)), None


def _added(
    added: sp.Expr,
    added_reference: sp.Expr,
    f: sp.Expr,
    big_f: sp.Expr | None,
    rng: np.random.Generator,
) -> tuple[sp.Expr, sp.Expr | None]:
    return f + added, None if big_f is None else big_f + added_reference


def _printed(tokens: str) -> str:
    """An answer as `problem_text` prints it; its tokens where they spell no expression."""
    try:
        return problem_text(from_prefix(tokens.split()))
    except GenprobeError:
        return tokens
