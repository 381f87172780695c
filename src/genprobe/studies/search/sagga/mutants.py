"""A generation's mutants: mutate every seed, simplify, filter, de-duplicate.

Each attempt mutates its seed (`tasks/integration/mutations.py`); every distinct raw mutant not
met before is then simplified with SymPy (as the original) in a `DeadlinePool` worker, and
SAGGA's validity filter applied. A mutant that does not simplify within its budget of CPU time
is dropped and counted (`deadlines`); it never stalls the run. What simplify and the filter
made of each raw mutant is kept in a `SimplifyMemo` for the rest of the search: a GA meets the
same raw mutant often (the basis is mutated in every generation), and simplify is a function of
its input, so the mutants are the same with the memo as without it, at a fraction of the CPU.

`form="automatic"` skips `simplify`: a mutant is what SymPy's automatic evaluation makes of the
tree (numbers folded, like terms and powers collected, terms ordered), and the filter judges
that. A deviation from the original (`form="simplified"`, the default), for a search several
times cheaper per mutant: mutants then keep forms that simplify would have rewritten, such as
a product of sums.

What the filter keeps is put in canonical form (Lample & Charton's prefix of the expression),
the key by which mutants are de-duplicated, cached and called novel.

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
from genprobe.tasks.integration.expression import Expr, fold, from_sympy, to_sympy
from genprobe.tasks.integration.mutations import MutationParams, mutate
from genprobe.tasks.integration.prefix import from_prefix, to_prefix

MAX_INTEGER = 10**7
MAX_PRINTED = 100
MUTANT_FORMS = ("simplified", "automatic")


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
    simplified: int = 0  # raw mutants simplified (the others came from the memo)
    seconds: float = 0.0  # worker seconds spent simplifying
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


Judged = tuple[str, list[str] | str, str]  # ("ok", prefix, text) or ("rejected", reason, "")


def simplify_in_worker(form: str, tokens: list[str]) -> Judged:
    """What simplify (unless `form` is "automatic") and the filter make of one raw mutant,
    given as prefix tokens."""
    try:
        expression = to_sympy(from_prefix(tokens))
    except GenprobeError:  # a power of two integers too large to build
        return "rejected", "large integer", ""
    tree, text = judge(sp.simplify(expression) if form == "simplified" else expression)
    if tree is None:
        return "rejected", text, ""
    return "ok", to_prefix(tree), text


class SimplifyMemo:
    """The judged form of every raw mutant simplified so far, by its prefix; the oldest are
    forgotten past `limit`. A mutant over its CPU budget is kept as such (the budget is CPU
    time, so load does not decide it); one killed at the wall-clock backstop is not."""

    def __init__(self, limit: int = 1 << 18) -> None:
        self.limit = limit
        self._judged: dict[str, Judged] = {}

    def get(self, key: str) -> Judged | None:
        return self._judged.get(key)

    def put(self, key: str, judged: Judged) -> None:
        if len(self._judged) >= self.limit:
            del self._judged[next(iter(self._judged))]
        self._judged[key] = judged

    def close(self) -> None:
        self._judged.clear()


def attempt_seeds(run_seed: int, generation: int, seed_index: int, n: int) -> list[int]:
    """One integer seed per attempt, independent of scheduling."""
    sequence = np.random.SeedSequence([run_seed, generation, seed_index])
    return [int(s) for s in sequence.generate_state(n, dtype=np.uint64)]


def mutate_generation(
    pool: DeadlinePool,
    seeds: Sequence[Expr],
    per_seed: int,
    params: MutationParams,
    *,
    run_seed: int,
    generation: int,
    deadline: float,
    form: str = "simplified",
    memo: SimplifyMemo | None = None,
) -> MutationReport:
    """`per_seed` attempts on every seed; distinct valid mutants in attempt order, in `form`
    (MUTANT_FORMS). Raw mutants found in `memo` (which must hold this form only) are not
    simplified again; what is simplified is added to it."""
    memo = SimplifyMemo() if memo is None else memo
    raw = [
        canonical_key(mutate(seed, np.random.default_rng(attempt), params))
        for i, seed in enumerate(seeds)
        for attempt in attempt_seeds(run_seed, generation, i, per_seed)
    ]
    judged = {key: memo.get(key) for key in dict.fromkeys(raw)}
    todo = [key for key, known in judged.items() if known is None]
    report = MutationReport(attempts=len(raw), simplified=len(todo))
    items = [key.split() for key in todo]
    for done in pool.run(simplify_in_worker, items, deadline=deadline, shared=form):
        report.seconds += done.seconds
        report.deadlines.add(done)
        key = todo[done.index]
        if done.status == "done":
            judged[key] = done.value
            memo.put(key, done.value)
        elif done.status == "timeout":
            judged[key] = ("rejected", "simplify timeout", "")
            memo.put(key, judged[key])
        else:
            judged[key] = ("rejected", "simplify hang" if done.status == "hang" else "error", "")
    seen: set[str] = set()
    for index, raw_key in enumerate(raw):
        status, value, text = judged[raw_key]  # type: ignore[misc]
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
