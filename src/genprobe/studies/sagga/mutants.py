"""A generation's mutants: mutate every seed, simplify, filter, de-duplicate.

Each attempt runs in a `DeadlinePool` worker: mutate the seed (`mutations.py`), `simplify` it
with SymPy (as the original), and apply SAGGA's validity filter. An attempt that does not
simplify within its budget of CPU time is dropped and counted (`deadlines`); it never stalls
the run. What the filter keeps is put in canonical form (Lample & Charton's prefix of the
simplified expression), the key by which mutants are de-duplicated, cached and called novel.

The filter (the original's `_validate`, plus what our language cannot hold):
  - `zoo`, `nan`, `oo`, `I` or a function outside the vocabulary: rejected (`outside`);
  - an integer of magnitude 10**7 or more: rejected (`large integer`);
  - printed length 100 or more: rejected (`long`).

Every attempt draws from its own generator, seeded from (run seed, generation, seed index,
attempt), so the mutants do not depend on how attempts are spread over workers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from genprobe.errors import GenprobeError
from genprobe.runs.pool import DeadlineCounts, DeadlinePool
from genprobe.studies.sagga.mutations import MutationPreset, mutate
from genprobe.tasks.integration.expression import Expr, fold, from_sympy, to_sympy
from genprobe.tasks.integration.prefix import from_prefix, to_prefix

MAX_INTEGER = 10**7
MAX_PRINTED = 100


@dataclass(frozen=True)
class Mutant:
    seed_index: int  # which seed it came from
    problem: Expr  # simplified, canonical
    text: str  # SymPy's printing, what the length fitnesses measure
    key: str  # canonical prefix: what de-duplicates, caches and decides novelty


@dataclass
class MutationReport:
    mutants: list[Mutant] = field(default_factory=list)  # distinct, in attempt order
    attempts: int = 0
    rejected: Counter[str] = field(default_factory=Counter)  # reason -> count
    duplicates: int = 0  # valid mutants equal to an earlier one of this generation
    seconds: float = 0.0  # worker seconds spent mutating and simplifying
    deadlines: DeadlineCounts = field(default_factory=DeadlineCounts)


def canonical_key(problem: Expr) -> str:
    return " ".join(to_prefix(problem))


def largest_integer(expr: Expr) -> int:
    return fold(expr, lambda node, kids: max([abs(node.value), *kids]))


def judge(simplified: sp.Expr) -> tuple[Expr | None, str]:
    """(canonical tree, printed text) of a simplified mutant, or (None, reason rejected)."""
    text = str(simplified)
    if len(text) >= MAX_PRINTED:
        return None, "long"
    try:
        tree = from_sympy(simplified)
    except GenprobeError:
        return None, "outside"
    if largest_integer(tree) >= MAX_INTEGER:
        return None, "large integer"
    return tree, text


def mutate_in_worker(
    preset: MutationPreset, item: tuple[list[str], int]
) -> tuple[str, list[str] | str, str]:
    """("ok", prefix, text) or ("rejected", reason, ""), for one (seed prefix, attempt seed)."""
    tokens, attempt_seed = item
    mutant = mutate(from_prefix(tokens), np.random.default_rng(attempt_seed), preset)
    try:
        simplified = sp.simplify(to_sympy(mutant))
    except GenprobeError:  # a power of two integers too large to build
        return "rejected", "large integer", ""
    tree, text = judge(simplified)
    if tree is None:
        return "rejected", text, ""
    return "ok", to_prefix(tree), text


def attempt_seeds(run_seed: int, generation: int, seed_index: int, n: int) -> list[int]:
    """One integer seed per attempt, independent of scheduling."""
    sequence = np.random.SeedSequence([run_seed, generation, seed_index])
    return [int(s) for s in sequence.generate_state(n, dtype=np.uint64)]


def mutate_generation(
    pool: DeadlinePool,
    seeds: Sequence[Expr],
    per_seed: int,
    preset: MutationPreset,
    *,
    run_seed: int,
    generation: int,
    deadline: float,
) -> MutationReport:
    """`per_seed` attempts on every seed; distinct valid mutants in attempt order."""
    items = [
        (to_prefix(seed), attempt)
        for i, seed in enumerate(seeds)
        for attempt in attempt_seeds(run_seed, generation, i, per_seed)
    ]
    report = MutationReport(attempts=len(items))
    results: dict[int, tuple[str, list[str] | str, str]] = {}
    for done in pool.run(mutate_in_worker, items, deadline=deadline, shared=preset):
        report.seconds += done.seconds
        report.deadlines.add(done)
        if done.status == "done":
            results[done.index] = done.value
        else:
            reason = {"timeout": "simplify timeout", "hang": "simplify hang"}
            report.rejected[reason.get(done.status, "error")] += 1
    seen: set[str] = set()
    for index in sorted(results):
        status, value, text = results[index]
        if status != "ok":
            report.rejected[str(value)] += 1
            continue
        key = " ".join(value)
        if key in seen:
            report.duplicates += 1
            continue
        seen.add(key)
        report.mutants.append(Mutant(index // per_seed, from_prefix(value), text, key))
    return report
