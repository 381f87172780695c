"""What the integration task declares for the probe studies: the brittleness study's
perturbations and sums as families and compositions, each carrying a known antiderivative F
with its integrand; its suites made of solved problems (robustness-validation,
compositionality) as derived suites, built as that study builds them; SAGGA's equation-tree
mutations and tree features; SymPy's `integrate` to tag failures; and integrands and answers
as SymPy prints them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
import sympy as sp

from genprobe.errors import GenprobeError
from genprobe.tasks.integration.exploits import TAG_SECONDS, UNKNOWN, tag_failures
from genprobe.tasks.integration.expression import from_sympy, to_sympy
from genprobe.tasks.integration.features import BOOLEAN, NUMERIC, tree_features
from genprobe.tasks.integration.mutations import MUTATION_PARAMS, MutationParams, mutate
from genprobe.tasks.integration.prefix import from_prefix, to_prefix
from genprobe.tasks.integration.printing import problem_text
from genprobe.tasks.integration.suites import VALID, Primitive, derived_suite
from genprobe.tasks.integration.suites import splits as brittleness
from genprobe.tasks.integration.suites.compositionality import (
    FAMILIES as COMPOSITION_FAMILIES,
)
from genprobe.tasks.integration.suites.compositionality import within_limit
from genprobe.tasks.integration.suites.table import GROUP_COLUMNS, suite_frame
from genprobe.tasks.integration.suites.validation import (
    ADDED_SETS,
    COEFFICIENT_SETS,
    COEFFICIENTS,
)
from genprobe.tasks.integration.tabular import is_missing
from genprobe.tasks.integration.task import (
    SOURCE_VOCAB,
    TARGET_VOCAB,
    IntegrationTask,
    expression_trees,
)
from genprobe.tasks.probing import (
    Composition,
    Derived,
    Family,
    Made,
    Perturb,
    Perturbed,
    Probes,
    Tag,
    padded,
    token_edits,
)
from genprobe.tasks.tokens import encode_outputs, input_lines, output_lines

_SOURCE_INDEX = {token: i for i, token in enumerate(SOURCE_VOCAB, start=1)}
# the set of the brittleness study's validation primitives, which the solved base inputs of a
# probe stand for in its derived suites
VALIDATION_SET = "valid_primitive"


@dataclass(frozen=True)
class IntegrationProbes(Probes):
    task: IntegrationTask

    def split_columns(self, split: str, n: int, seed: int) -> dict[str, np.ndarray]:
        """A brittleness suite's (`suites/splits.py`) set, template and coefficient range of
        each problem (`table.GROUP_COLUMNS`), what that study's tables group it by."""
        if split not in brittleness.SPLITS and split not in brittleness.FILE_SPLITS:
            return {}
        table = self.task.suite_table(split, n, seed)
        return {
            name: np.array(["" if is_missing(v) else str(v) for v in table[name]], dtype=str)
            for name in GROUP_COLUMNS
        }

    def valid_inputs(self, src: np.ndarray) -> np.ndarray:
        return np.array([p is not None for p in self.task.problems(src)], dtype=bool)

    def features(self, src: np.ndarray) -> dict[str, np.ndarray]:
        """The length in tokens and SAGGA's tree features of each integrand (`features.py`:
        depth, size, terms, largest |int|, x degree; a boolean for each operator family, x in
        an exponent, a division, a rational constant), what the failure search's clusters and
        slices read as SAGGA's slices do; 0 (False) for an input that spells no expression.
        Read off the tree alone: no SymPy (the probe computes them for every input it
        decodes)."""
        trees = expression_trees(src)
        found = np.array([tree is not None for tree in trees], dtype=bool)
        table = tree_features([tree for tree in trees if tree is not None])
        columns = {}
        for name in (*NUMERIC, *BOOLEAN):
            columns[name] = np.zeros(len(trees), dtype=table[name].dtype)
            columns[name][found] = table[name].to_numpy()
        return {"length": self.task.length(src), **columns}

    def tag_failures(self, src: np.ndarray, workers: int | None = None) -> list[Tag]:
        """Whether each integrand has an elementary antiderivative, as SAGGA's analysis tags
        its failures (`exploits.py`: SymPy's `integrate`, `TAG_SECONDS` of CPU time each, in
        a pool of `workers` processes, by default one per CPU); `unknown` for an input that is
        no integrand."""
        problems = self.task.problems(src)
        integrands = [p for p in problems if p is not None]
        found = iter(tag_failures(integrands, TAG_SECONDS, workers=workers))
        return [Tag(UNKNOWN, "not an integrand") if p is None else next(found) for p in problems]

    def input_text(self, src: np.ndarray) -> list[str]:
        """Each integrand as SymPy prints it (as SAGGA shows and embeds its problems); the
        tokens of an input that is not one."""
        tokens = input_lines(SOURCE_VOCAB, src)
        return [
            tokens[i] if problem is None else problem_text(problem)
            for i, problem in enumerate(self.task.problems(src))
        ]

    def output_text(self, out: np.ndarray) -> list[str]:
        """Each answer as SymPy prints it (as SAGGA shows them); the tokens of one that is no
        expression."""
        return [_printed(tokens) for tokens in output_lines(TARGET_VOCAB, out)]

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
                partial(_summed, self.task),
                partial(_summed, self.task),
            )
            for k in (2, 3, 4)
        }

    def derived(self) -> Mapping[str, Derived]:
        """The brittleness study's suites made of solved problems, built by its builders
        (`suites/validation.py`, `suites/compositionality.py`) from the solved inputs by
        their sets (the base inputs standing for its validation primitives), the row of each
        as its id."""
        return {
            "robustness-validation": Derived(
                "k*f and f/k (N // solved coefficients k of 2..99 for each of the first 100 "
                "solved), f + exp(x) and f + ln(x): the brittleness suite robustness-validation "
                "(Welleck et al. 2022, Table 2, bottom)",
                partial(_derived, self.task, _perturbations),
            ),
            "compositionality": Derived(
                "sums of k = 2, 3, 4 solved integrands, as SymPy adds them: the brittleness "
                "suite compositionality (Table 8): comp_valid of base inputs of at most 20 "
                "tokens, and with robustness-simple decoded its comp_coeff and comp_exp",
                partial(_derived, self.task, _sums),
            ),
        }

    def mutations(self) -> Mapping[str, Family]:
        """Token edits, the families, and SAGGA's equation-tree mutations (`mutations.py`), one
        operator per set of mutation parameters (`tree_uniform`, `tree_robustness`,
        `tree_distance`). Every mutant is what SymPy's automatic evaluation makes of it, in
        L&C's canonical shape, as the families' are and as SAGGA simplifies each of its
        mutants: a token edit that spells `-3 + 5` or `00` asks the model `2` or `0`, the
        integrand its report prints."""
        edits = {
            name: Family(
                f"{family.description}, as SymPy evaluates the integrand",
                partial(_evaluated, self.task, family.perturb),
            )
            for name, family in token_edits(len(SOURCE_VOCAB)).items()
        }
        trees = {
            f"tree_{name}": self._family(
                f"SAGGA's {name} mutation of the equation tree", partial(_tree_mutated, params)
            )
            for name, params in MUTATION_PARAMS.items()
        }
        return {**edits, **self.families(), **trees}

    def _family(self, description: str, move: Move) -> Family:
        return Family(
            description, partial(_moved, self.task, move), partial(_moved_pairs, self.task, move)
        )


def _perturbations(solved: Mapping[str, list[Primitive]], n: int, seed: int) -> pd.DataFrame:
    """robustness-validation's perturbations of the solved base inputs (the validation
    problems)."""
    if not solved.get(VALIDATION_SET):
        return suite_frame([])
    primitives = {VALID: solved[VALIDATION_SET]}
    return derived_suite("robustness-validation", primitives, n, seed, exact=False)


def _sums(solved: Mapping[str, list[Primitive]], n: int, seed: int) -> pd.DataFrame:
    """The sums of each compositionality family (`comp_coeff` of solved `simple_coeff1`
    problems, `comp_exp` of `simple_expincr`/`simple_expdecr`, both of `robustness-simple`;
    `comp_valid` of the solved base inputs), each in the set of its family and k
    ("comp_valid k=2"); a family without a solved problem short enough is left out."""
    families = {}
    for name, family in COMPOSITION_FAMILIES.items():
        members = [p for set_name in family.sets for p in solved.get(set_name, [])]
        if within_limit(name, members):
            families[name] = sorted(members, key=lambda p: p.row)
    if not families:
        return suite_frame([])
    frame = derived_suite("compositionality", families, n, seed, exact=False)
    return frame.assign(set=frame["set"] + " k=" + frame["k"].astype(str))


def _derived(
    task: IntegrationTask,
    build: Callable[[Mapping[str, list[Primitive]], int, int], pd.DataFrame],
    src: np.ndarray,
    tgt: np.ndarray | None,
    sets: np.ndarray,
    size: int,
    seed: int,
) -> Made:
    """The suite table `build` makes of the solved integrands `src` by their sets (a base
    input's "" read as the brittleness study's validation primitives, `VALIDATION_SET`), each
    with its antiderivative from `tgt` where it is known, as ids; a problem or reference
    outside the vocabularies is left out, as the probe leaves out moved inputs."""
    problems = task.problems(src)
    known = [None] * len(src) if tgt is None else [task.answer(row[row >= 0]) for row in tgt]
    solved: dict[str, list[Primitive]] = {}
    for row, (problem, reference, set_name) in enumerate(zip(problems, known, sets, strict=True)):
        if problem is not None:
            group = solved.setdefault(str(set_name) or VALIDATION_SET, [])
            group.append(Primitive(problem, reference, row))
    frame = build(solved, size, seed) if solved else suite_frame([])
    rows, kept, references = [], [], []
    pairs = zip(frame["problem"], frame["reference"], strict=True)
    for i, (problem, reference) in enumerate(pairs):
        ids = _source_ids(problem.split())
        if ids is not None:
            rows.append(ids)
            kept.append(i)
            tokens = [] if reference is None else reference.split()
            references.append(tokens if set(tokens) <= set(TARGET_VOCAB) else [])
    sources = padded([np.array(frame["source_rows"][i]) for i in kept], -1)
    sets = np.array([frame["set"][i] for i in kept], dtype=str)
    out, _ = encode_outputs(TARGET_VOCAB, references)
    return Made(padded(rows), sources, sets, out if tgt is not None else None)


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
    params: MutationParams, f: sp.Expr, big_f: sp.Expr | None, rng: np.random.Generator
) -> tuple[sp.Expr, None]:
    """A mutant of f (its antiderivative is not known)."""
    return to_sympy(mutate(from_sympy(f), rng, params)), None


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
