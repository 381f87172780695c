"""Run generation attempts in parallel, de-duplicate, count rejections.

Attempts are numbered 0, 1, 2, ...; attempt i draws its randomness from (seed, i) only. They run
in rounds of `round_size` in a deadline pool; each round's results are taken in attempt order,
and IBP's cache of known primitives is updated between rounds, in the same order. The output is
therefore the same for a given seed whatever the number of workers or the machine's load: the
deadline is a budget of the worker's CPU time (`runs.pool`). Only an attempt whose CPU time is
within a few percent of its budget can go either way (SymPy's caches, the processor).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from genprobe.errors import ConfigError
from genprobe.runs.pool import DeadlinePool
from genprobe.tasks.integration.generation_config import DEFAULT_DEADLINES, GeneratorConfig
from genprobe.tasks.integration.generators import attempt

# most primitives kept for IBP; beyond this the cache stops growing
MAX_CACHE_ENTRIES = 200_000


@dataclass(frozen=True)
class Row:
    input: str  # `sub Y' f` prefix
    output: str  # F prefix
    count: int  # times it was generated
    n_ops: int | None = None  # operators drawn for its random expression (first time generated)


@dataclass
class GenerationReport:
    rows: list[Row]
    # one per attempt: "ok" (a new pair, kept), "duplicate" (an input already kept), "surplus"
    # (a new pair after the n-th), "filtered" (refused by `keep`), "timeout" (CPU budget), "hang"
    # (wall-clock backstop), "error", or the generator's rejection reason
    counters: Counter = field(default_factory=Counter)
    attempts: int = 0


# (input, output) -> whether a pair may be kept at all
Keep = Callable[[str, str], bool]


class Kept:
    """The first `n` distinct inputs of the pairs taken in attempt order (of those `keep`
    allows), with one outcome counted per attempt (`GenerationReport.counters`)."""

    def __init__(self, n: int, keep: Keep | None = None) -> None:
        self.n = n
        self.keep = keep
        self.first_seen: dict[
            str, tuple[str, int, int | None]
        ] = {}  # input -> output, count, n_ops
        self.counters: Counter = Counter()
        self.attempts = 0

    @property
    def complete(self) -> bool:
        return len(self.first_seen) >= self.n

    def take(self, problem: str, output: str, n_ops: int | None) -> None:
        """An accepted pair: new and kept ("ok"), a "duplicate", new after the n-th
        ("surplus"), or one `keep` refuses ("filtered")."""
        if self.keep is not None and not self.keep(problem, output):
            self.counters["filtered"] += 1
        elif problem in self.first_seen:
            kept_output, count, kept_ops = self.first_seen[problem]
            self.first_seen[problem] = (kept_output, count + 1, kept_ops)
            self.counters["duplicate"] += 1
        elif not self.complete:
            self.first_seen[problem] = (output, 1, n_ops)
            self.counters["ok"] += 1
        else:
            self.counters["surplus"] += 1

    def report(self) -> GenerationReport:
        rows = [Row(problem, *seen) for problem, seen in self.first_seen.items()]
        return GenerationReport(rows, self.counters, self.attempts)


def generate(
    config: GeneratorConfig,
    n: int,
    *,
    seed: int = 0,
    workers: int = 1,
    deadline: float | None = None,
    start_method: str | None = None,
    round_size: int = 64,
    max_attempts: int | None = None,
    on_progress: Callable[[int, int, Counter], None] | None = None,
    keep: Keep | None = None,
) -> GenerationReport:
    """Generate up to `n` distinct (input, output) pairs.

    Args:
        config: what to generate (method, tree settings, filters).
        n: number of distinct inputs wanted.
        seed: the data depends only on it (and on `config`, `round_size`).
        workers: worker processes.
        deadline: CPU seconds per attempt; default Lample & Charton's (fwd 3, bwd 5, ibp 8).
        max_attempts: stop after this many attempts even if fewer than `n` pairs were found
            (default 1000 * n + 1000).
        on_progress: called after every attempt with (attempts, distinct pairs, counters).
        keep: only pairs (input, output) it allows are kept (the others count as "filtered").
    """
    config = config.validated()
    if n < 1:
        raise ConfigError("n", "at least 1", n)
    deadline = deadline or DEFAULT_DEADLINES[config.method]
    max_attempts = max_attempts or 1000 * n + 1000
    kept = Kept(n, keep)
    cache: dict[str, str] = {}
    with DeadlinePool(workers, start_method=start_method) as pool:
        while not kept.complete and kept.attempts < max_attempts:
            start = kept.attempts
            jobs = [(seed, i) for i in range(start, min(start + round_size, max_attempts))]
            results = {}
            for result in pool.run(attempt, jobs, deadline=deadline, shared=(config, cache)):
                results[result.index] = result
                status = result.value.status if result.status == "done" else result.status
                if status != "ok":  # pairs are counted below, once known new or not
                    kept.counters[status] += 1
                if on_progress is not None:
                    on_progress(start + len(results), len(kept.first_seen), kept.counters)
            for index in range(len(jobs)):
                result = results[index]
                if result.status != "done":
                    continue
                outcome = result.value
                for key, primitive in outcome.learned:
                    known = cache.get(key)
                    if (known is None and len(cache) < MAX_CACHE_ENTRIES) or (
                        known is not None and len(primitive) < len(known)
                    ):
                        cache[key] = primitive
                if outcome.status == "ok":
                    kept.take(outcome.input, outcome.output, outcome.n_ops)
            kept.attempts += len(jobs)
    return kept.report()
