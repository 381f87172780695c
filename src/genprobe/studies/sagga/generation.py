"""One SAGGA generation, the unit of work of a search: mutate, ask the model, verify, score.

    mutate   every seed `per_seed` times in the deadline pool; distinct valid mutants
    model    one call on the whole generation (batched beam), through a query cache, so a
             problem met in an earlier generation is not asked again
    verify   the top-k candidates of every problem in the verifier's pool, in rank order
    score    the fitness of every mutant (zero unless the model failed it)

A mutant the model cannot read (longer than its position table), or whose check lies outside
the environment, is `unsupported`: neither failure nor success (the original counted it as
solved). A model with no answer for a problem (SymPy timing out, say) failed it.

The shard's spec is the generation number, its seeds (prefix) and attempts per seed; its files
are `generations/NNNNN.parquet` (one row per distinct mutant) and `generations/NNNNN.json`
(the generation's effort: attempts, rejections by reason, duplicates, model queries, seconds).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sympy as sp

from genprobe.models.base import Candidate, infix_text
from genprobe.models.cached import CachedModel
from genprobe.runs.executor import StageTask
from genprobe.runs.shards import Outputs, Shard, json_bytes, parquet_bytes
from genprobe.studies.sagga.config import SaggaConfig
from genprobe.studies.sagga.embedding import make_embedder
from genprobe.studies.sagga.fitness import Fitness, make_fitness
from genprobe.studies.sagga.mutants import Mutant, mutate_generation
from genprobe.studies.sagga.mutations import PRESETS
from genprobe.studies.sagga.seeds import TARGETS, read_problem_file
from genprobe.tasks.integration.expression import X, to_sympy
from genprobe.tasks.integration.prefix import from_prefix, to_prefix
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.verification.pool import DeadlinePool
from genprobe.verification.ranked import RankedResult, verify_ranked
from genprobe.verification.verdict import Outcome, TimeoutPolicy

STAGE = "generation"
DIFFERENCE_SECONDS = 1.0


def generation_path(generation: int, suffix: str) -> str:
    return f"generations/{generation:05d}.{suffix}"


def generation_shard(generation: int, seeds: Sequence[str], per_seed: int) -> Shard:
    """`seeds` as prefix strings."""
    spec = {"generation": generation, "seeds": list(seeds), "per_seed": per_seed}
    return Shard(STAGE, f"{generation:05d}", spec)


def verifier_config(config: SaggaConfig) -> VerifierConfig:
    return VerifierConfig(
        deadline=config.deadline, policy=TimeoutPolicy(config.policy), workers=config.workers
    )


def build_fitness(config: SaggaConfig) -> Fitness:
    targets: Sequence[str] = TARGETS
    if config.targets_file is not None:
        targets = [str(p) for p in read_problem_file(config.targets_file)]
    embedder = make_embedder(config.embedding) if config.fitness == "target_problems" else None
    return make_fitness(
        config.fitness, length=config.target_length, embedder=embedder, targets=targets
    )


@dataclass
class Context:
    model: CachedModel
    verifier: Verifier
    pool: DeadlinePool
    fitness: Fitness

    def close(self) -> None:
        self.model.close()
        self.verifier.close()
        self.pool.close()


@dataclass(frozen=True)
class GenerationTask(StageTask):
    config: SaggaConfig

    def setup(self) -> Context:
        config = self.config
        model = CachedModel(config.model.load(min_beam=config.k))
        pool = DeadlinePool(config.workers or os.cpu_count() or 1)
        return Context(model, Verifier(verifier_config(config)), pool, build_fitness(config))

    def close(self, context: Context) -> None:
        context.close()

    def runtime(self) -> dict[str, Any]:
        return self.config.model.runtime()

    def run(self, context: Context, shard: Shard, scratch: Path) -> Outputs:
        spec, config = shard.spec, self.config
        generation = int(spec["generation"])
        start = time.perf_counter()
        report = mutate_generation(
            context.pool,
            [from_prefix(seed.split()) for seed in spec["seeds"]],
            int(spec["per_seed"]),
            PRESETS[config.preset],
            run_seed=config.seed,
            generation=generation,
            deadline=config.mutation_deadline,
        )
        mutated = time.perf_counter()
        queries, hits = context.model.queries, context.model.hits
        frame, verifier_seconds, answered = evaluate(context, report.mutants, config)
        frame.insert(0, "generation", generation)
        statuses = frame["status"].value_counts()
        stats = {
            "generation": generation,
            "seeds": len(spec["seeds"]),
            "attempts": report.attempts,
            "rejected": dict(sorted(report.rejected.items())),
            "duplicates": report.duplicates,
            "mutants": len(report.mutants),
            **{s: int(statuses.get(s, 0)) for s in ("solved", "failed", "unsupported")},
            "queries": context.model.queries - queries,
            "cache_hits": context.model.hits - hits,
            "mutation_worker_seconds": round(report.seconds, 3),
            "verifier_seconds": round(verifier_seconds, 3),
            "seconds": {
                "mutate": round(mutated - start, 3),
                "model": round(answered, 3),
                "verify_and_score": round(time.perf_counter() - mutated - answered, 3),
            },
        }
        return {
            generation_path(generation, "parquet"): parquet_bytes(frame),
            generation_path(generation, "json"): json_bytes(stats),
        }


def evaluate(
    context: Context, mutants: Sequence[Mutant], config: SaggaConfig
) -> tuple[pd.DataFrame, float, float]:
    """(one row per mutant, verifier seconds, model seconds)."""
    problems = [m.problem for m in mutants]
    start = time.perf_counter()
    readable = context.model.readable(problems)
    asked = [p for p, ok in zip(problems, readable, strict=True) if ok]
    answers = iter(context.model.candidates(asked, config.k))
    candidates = [next(answers)[: config.k] if ok else [] for ok in readable]
    answered = time.perf_counter() - start
    ranked = verify_ranked(
        problems, [[c.answer for c in cs] for cs in candidates], context.verifier.verify_many,
        config.k,
    )  # fmt: skip
    policy = TimeoutPolicy(config.policy)
    status = [_status(ok, r, policy) for ok, r in zip(readable, ranked, strict=True)]
    failed = np.array([s == "failed" for s in status], dtype=bool)
    texts = [m.text for m in mutants]
    fitness = context.fitness(texts, failed) if mutants else np.zeros(0)
    differences = _differences(context.pool, mutants, candidates, failed & (fitness >= config.tau))
    frame = pd.DataFrame(
        {
            "position": np.arange(len(mutants), dtype=np.int64),
            "seed_index": [m.seed_index for m in mutants],
            "problem": [m.key for m in mutants],
            "text": texts,
            "length": [len(t) for t in texts],
            "status": status,
            "fitness": np.asarray(fitness, dtype=float),
            "first_pass_rank": pd.array([r.first_pass(policy) for r in ranked], dtype="Int32"),
            "outcome": [r.verdicts[0].outcome.value if r.verdicts else None for r in ranked],
            "detail": [r.verdicts[0].detail[:300] if r.verdicts else "" for r in ranked],
            "answers": [[_answer_text(c) for c in cs] for cs in candidates],
            "difference": differences,
        }
    )
    verifier_seconds = sum(v.seconds for r in ranked for v in r.verdicts)
    return frame, verifier_seconds, answered


def _status(readable: bool, result: RankedResult, policy: TimeoutPolicy) -> str:
    if not readable:
        return "unsupported"
    if result.first_pass(policy) is not None:
        return "solved"
    if result.verdicts and all(v.outcome is Outcome.UNSUPPORTED for v in result.verdicts):
        return "unsupported"
    return "failed"


def _answer_text(candidate: Candidate) -> str:
    answer = candidate.answer
    if isinstance(answer, str):
        return answer
    if isinstance(answer, tuple):
        return " ".join(answer)
    return infix_text(answer) or " ".join(to_prefix(answer))


def difference_in_worker(shared: None, pair: tuple[list[str], list[str]]) -> str:
    """F' - f, as SymPy writes it after its automatic simplification only."""
    problem, answer = (to_sympy(from_prefix(tokens)) for tokens in pair)
    return sp.sstr(sp.diff(answer, X) - problem)[:300]


def _differences(
    pool: DeadlinePool,
    mutants: Sequence[Mutant],
    candidates: Sequence[list[Candidate]],
    wanted: np.ndarray,
) -> list[str | None]:
    """F' - f of the top answer of each wanted failure (None where it did not parse)."""
    rows = [i for i in np.flatnonzero(wanted) if candidates[i] and candidates[i][0].parsed]
    items = [(to_prefix(mutants[i].problem), to_prefix(candidates[i][0].answer)) for i in rows]
    out: list[str | None] = [None] * len(mutants)
    for done in pool.run(difference_in_worker, items, deadline=DIFFERENCE_SECONDS):
        if done.status == "done":
            out[rows[done.index]] = done.value
    return out
