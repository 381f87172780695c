"""One SAGGA generation: mutate, ask the model, verify, score. Three kinds of shard, so that a
cluster spreads the verification, the slow part with a fast model:

    propose   one shard, where the model is: mutate every seed `per_seed` times in the
              deadline pool, keep the distinct valid mutants, ask the model about all of them
              in one call (batched beam), the model remembering its answers, so a problem
              met in an earlier generation is not asked again
    verify    shards of `verify_chunk` problems, on any worker: check each problem's top-k
              candidates in rank order in the verifier's pool, and print F' - f of every
              failure's top answer (SymPy's automatic simplification only, 1 s at most)
    score     one shard: the fitness of every mutant over the whole generation (zero unless the
              model failed it), and the generation's files

A mutant the model cannot read (longer than its position table), or whose check lies outside
the environment, is `unsupported`: neither failure nor success (the original counted it as
solved). A model with no answer for a problem (SymPy timing out, say) failed it.

Files: the parts `generations/NNNNN/proposed.json` and `generations/NNNNN/verified-CCCC.json`,
then the generation: `generations/NNNNN.parquet` (one row per distinct mutant) and
`generations/NNNNN.json` (its effort: attempts, raw mutants simplified (the others came from
the worker's memo), rejections by reason, duplicates, model queries, seconds, and `deadlines`:
of the mutants simplified and of the candidates verified, how many ran, hit their CPU budget
or were killed at the wall-clock backstop). Each shard's spec
holds what it needs (seeds, or problems and candidates), so any worker can run it; the verdicts
do not depend on how the problems were chunked.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import sympy as sp

from genprobe.runs.cpus import usable_cpus
from genprobe.runs.executor import Stage
from genprobe.runs.pool import DeadlineCounts, DeadlinePool
from genprobe.runs.shards import Outputs, Shard, json_bytes, parquet_bytes
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.fitness import Fitness, make_fitness
from genprobe.studies.search.loop import generation_path
from genprobe.studies.search.sagga.mutants import Mutant, SimplifyMemo, mutate_generation
from genprobe.studies.search.sagga.seeds import TARGETS, read_problem_file
from genprobe.studies.search.sagga.study import GENERATION, PROPOSE, VERIFY
from genprobe.tasks.integration.expression import Expr, X, to_sympy
from genprobe.tasks.integration.limits import TRUSTED_LIMITS
from genprobe.tasks.integration.mutations import MUTATION_PARAMS
from genprobe.tasks.integration.prefix import from_prefix, to_prefix
from genprobe.tasks.integration.printing import shown_answer
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.tasks.verdict import Outcome, TimeoutPolicy, deadline_counts
from genprobe.under_test.adapters.integration_tokens import (
    IntegrationSequenceModel,
    load_integration_model,
)
from genprobe.verification.ranked import RankedResult, verify_ranked

DIFFERENCE_SECONDS = 1.0
Row = dict[str, Any]


def proposed_path(generation: int) -> str:
    return f"generations/{generation:05d}/proposed.json"


def verified_path(generation: int, chunk: int) -> str:
    return f"generations/{generation:05d}/verified-{chunk:04d}.json"


def verifier_config(config: SearchConfig) -> VerifierConfig:
    return VerifierConfig(
        deadline=config.deadline, policy=TimeoutPolicy(config.policy), workers=config.workers
    )


def build_fitness(config: SearchConfig) -> Fitness:
    targets: Sequence[str] = TARGETS
    if config.targets_file is not None:
        targets = [str(p) for p in read_problem_file(config.targets_file)]
    return make_fitness(
        config.fitness, length=config.target_length, targets=targets, embedding=config.embedding
    )


def deadline_pool(config: SearchConfig) -> DeadlinePool:
    return DeadlinePool(config.workers or usable_cpus())


# -- the three shards ----------------------------------------------------------------------


def propose_shard(generation: int, seeds: Sequence[str], per_seed: int) -> Shard:
    """`seeds` as prefix strings."""
    spec = {"generation": generation, "seeds": list(seeds), "per_seed": per_seed}
    return Shard(PROPOSE, f"{generation:05d}", spec)


def verify_shards(generation: int, proposal: Sequence[Row], chunk: int) -> list[Shard]:
    """The readable problems of a proposal, with their candidates, `chunk` per shard."""
    rows = [
        {key: row[key] for key in ("position", "problem", "candidates")}
        for row in proposal
        if row["readable"]
    ]
    return [
        Shard(
            VERIFY,
            f"{generation:05d}-{start // chunk:04d}",
            {
                "generation": generation,
                "chunk": start // chunk,
                "rows": rows[start : start + chunk],
            },
        )
        for start in range(0, len(rows), chunk)
    ]


def score_shard(generation: int, proposed: Row, verified: Sequence[Row]) -> Shard:
    """`proposed`: the proposal's file; `verified`: its verify shards' files."""
    spec = {"generation": generation, "proposed": proposed, "verified": list(verified)}
    return Shard(GENERATION, f"{generation:05d}", spec)


class _ToolsStage(Stage):
    """A task whose context is a tuple of things to close (a model, pools)."""

    def close(self, context: tuple[Any, ...]) -> None:
        for part in context:
            part.close()


@dataclass(frozen=True)
class ProposeStage(_ToolsStage):
    config: SearchConfig
    needs_device: ClassVar[bool] = True

    def setup(self) -> tuple[IntegrationSequenceModel, DeadlinePool, SimplifyMemo]:
        model = load_integration_model(self.config.model, min_beam=self.config.k, remember=True)
        return model, deadline_pool(self.config), SimplifyMemo()

    def runtime(self) -> dict[str, Any]:
        return self.config.model.runtime()

    def run(
        self,
        context: tuple[IntegrationSequenceModel, DeadlinePool, SimplifyMemo],
        shard: Shard,
        scratch: Path,
    ) -> Outputs:
        (model, pool, memo), spec, config = context, shard.spec, self.config
        generation = int(spec["generation"])
        start = time.perf_counter()
        report = mutate_generation(
            pool,
            [from_prefix(seed.split()) for seed in spec["seeds"]],
            int(spec["per_seed"]),
            MUTATION_PARAMS[config.mutation_params],
            run_seed=config.seed,
            generation=generation,
            deadline=config.mutation_deadline,
            form=config.mutant_form,
            memo=memo,
        )
        mutated = time.perf_counter()
        queries, hits = model.queries, model.hits
        rows = propose(model, report.mutants, config.k)
        effort = {
            "generation": generation,
            "seeds": len(spec["seeds"]),
            "attempts": report.attempts,
            "rejected": dict(sorted(report.rejected.items())),
            "duplicates": report.duplicates,
            "simplified": report.simplified,
            "mutants": len(report.mutants),
            "queries": model.queries - queries,
            "cache_hits": model.hits - hits,
            "mutation_worker_seconds": round(report.seconds, 3),
            "deadlines": {"mutation": asdict(report.deadlines)},
            "seconds": {
                "mutate": round(mutated - start, 3),
                "model": round(time.perf_counter() - mutated, 3),
            },
        }
        return {proposed_path(generation): json_bytes({"effort": effort, "rows": rows})}


@dataclass(frozen=True)
class VerifyStage(_ToolsStage):
    config: SearchConfig

    def setup(self) -> tuple[Verifier, DeadlinePool]:
        return Verifier(verifier_config(self.config)), deadline_pool(self.config)

    def run(self, context: tuple[Verifier, DeadlinePool], shard: Shard, scratch: Path) -> Outputs:
        verifier, pool = context
        start = time.perf_counter()
        rows = verify(verifier, pool, shard.spec["rows"], self.config)
        result = {"seconds": round(time.perf_counter() - start, 3), "rows": rows}
        path = verified_path(int(shard.spec["generation"]), int(shard.spec["chunk"]))
        return {path: json_bytes(result)}


@dataclass(frozen=True)
class ScoreStage(Stage):
    config: SearchConfig

    def setup(self) -> Fitness:
        return build_fitness(self.config)

    def run(self, context: Fitness, shard: Shard, scratch: Path) -> Outputs:
        spec = shard.spec
        generation, proposed, verified = int(spec["generation"]), spec["proposed"], spec["verified"]
        start = time.perf_counter()
        frame = scored_frame(
            proposed["rows"], [r for part in verified for r in part["rows"]], context
        )
        frame.insert(0, "generation", generation)
        statuses = frame["status"].value_counts()
        effort = proposed["effort"]
        # parts written before deadlines were counted have none (a run resumed mid-generation)
        checked = [
            DeadlineCounts(**r.get("deadlines", {})) for part in verified for r in part["rows"]
        ]
        stats = {
            **effort,
            "deadlines": {
                **effort.get("deadlines", {}),
                "verification": asdict(sum(checked, DeadlineCounts())),
            },
            **{s: int(statuses.get(s, 0)) for s in ("solved", "failed", "unsupported")},
            "verifier_seconds": round(float(frame.pop("verifier_seconds").sum()), 3),
            "seconds": {
                **effort["seconds"],
                "verify": round(sum(part["seconds"] for part in verified), 3),
                "score": round(time.perf_counter() - start, 3),
            },
        }
        return {
            generation_path(generation, "parquet"): parquet_bytes(frame),
            generation_path(generation, "json"): json_bytes(stats),
        }


# -- the steps, also used whole by the report's nearby search --------------------------------


def propose(model: IntegrationSequenceModel, mutants: Sequence[Mutant], k: int) -> list[Row]:
    """One row per mutant: its problem, whether the model can read it, its top-k candidates
    (`candidates`, typed for the verifier; `answers`, printed), the model asked through the
    adapter every study asks it with (`IntegrationSequenceModel.answers`)."""
    problems = [m.problem for m in mutants]
    readable = model.reads(problems)
    ranked = model.answers([p if ok else None for p, ok in zip(problems, readable, strict=True)], k)
    rows = []
    for position, (mutant, ok) in enumerate(zip(mutants, readable, strict=True)):
        answers = [a for a in ranked.answers[0, position] if a is not None]
        rows.append(
            {
                "position": position,
                "seed_index": mutant.seed_index,
                "problem": mutant.key,
                "text": mutant.text,
                "readable": bool(ok),
                "candidates": [encode_answer(a) for a in answers],
                "answers": [shown_answer(a) for a in answers],
            }
        )
    return rows


def verify(
    verifier: Verifier, pool: DeadlinePool, rows: Sequence[Row], config: SearchConfig
) -> list[Row]:
    """Verdicts of readable problems' candidates (rows of `propose`)."""
    policy = TimeoutPolicy(config.policy)
    problems = [from_prefix(row["problem"].split(), TRUSTED_LIMITS) for row in rows]
    answers = [[decode_answer(c) for c in row["candidates"]] for row in rows]
    ranked = verify_ranked(problems, answers, verifier.verify_many, config.k)
    status = [_status(result, policy) for result in ranked]
    failed = [
        i
        for i, s in enumerate(status)
        if s == "failed" and answers[i] and isinstance(answers[i][0], Expr)
    ]
    found = _differences(pool, [(problems[i], answers[i][0]) for i in failed])
    differences = {failed[j]: text for j, text in found.items()}
    out = []
    for i, (row, result) in enumerate(zip(rows, ranked, strict=True)):
        first = result.verdicts[0] if result.verdicts else None
        out.append(
            {
                "position": row["position"],
                "status": status[i],
                "first_pass_rank": result.first_pass(policy),
                "outcome": None if first is None else first.outcome.value,
                "detail": "" if first is None else first.detail[:300],
                "difference": differences.get(i),
                "verifier_seconds": sum(v.seconds for v in result.verdicts),
                "deadlines": asdict(
                    deadline_counts((v.outcome.value, v.method) for v in result.verdicts)
                ),
            }
        )
    return out


UNREAD = {
    "status": "unsupported", "first_pass_rank": None, "outcome": None, "detail": "",
    "difference": None, "verifier_seconds": 0.0,
}  # fmt: skip


def scored_frame(
    proposal: Sequence[Row], verified: Sequence[Row], fitness: Fitness
) -> pd.DataFrame:
    """One row per mutant: the proposal joined with its verdicts (problems the model cannot
    read have none), scored over the whole generation."""
    by_position = {row["position"]: row for row in verified}
    rows = [{**row, **by_position.get(row["position"], UNREAD)} for row in proposal]
    texts = [row["text"] for row in rows]
    failed = np.array([row["status"] == "failed" for row in rows], dtype=bool)
    return pd.DataFrame(
        {
            "position": np.arange(len(rows), dtype=np.int64),
            "seed_index": [row["seed_index"] for row in rows],
            "problem": [row["problem"] for row in rows],
            "text": texts,
            "length": [len(t) for t in texts],
            "status": [row["status"] for row in rows],
            "fitness": np.asarray(fitness(texts, failed) if rows else np.zeros(0), dtype=float),
            "first_pass_rank": pd.array([row["first_pass_rank"] for row in rows], dtype="Int32"),
            "outcome": [row["outcome"] for row in rows],
            "detail": [row["detail"] for row in rows],
            "answers": [row["answers"] for row in rows],
            "difference": [row["difference"] for row in rows],
            "verifier_seconds": np.array([row["verifier_seconds"] for row in rows], dtype=float),
        }
    )


def _status(result: RankedResult, policy: TimeoutPolicy) -> str:
    if result.first_pass(policy) is not None:
        return "solved"
    if result.verdicts and all(v.outcome is Outcome.UNSUPPORTED for v in result.verdicts):
        return "unsupported"
    return "failed"


# A candidate travels as "kind text": a parsed answer as prefix, raw output as the model gave it
# (text, or prefix tokens that did not parse), so the verifier judges what it would have judged.
def encode_answer(answer: Expr | str | tuple[str, ...]) -> str:
    if isinstance(answer, Expr):
        return "expr " + " ".join(to_prefix(answer))
    if isinstance(answer, str):
        return "text " + answer
    return "tokens " + " ".join(answer)


def decode_answer(encoded: str) -> Expr | str | tuple[str, ...]:
    kind, _, text = encoded.partition(" ")
    if kind == "expr":
        return from_prefix(text.split(), TRUSTED_LIMITS)
    return text if kind == "text" else tuple(text.split())


def difference_in_worker(shared: None, pair: tuple[list[str], list[str]]) -> str:
    """F' - f, as SymPy writes it after its automatic simplification only."""
    problem, answer = (to_sympy(from_prefix(tokens, TRUSTED_LIMITS)) for tokens in pair)
    return sp.sstr(sp.diff(answer, X) - problem)[:300]


def _differences(pool: DeadlinePool, pairs: Sequence[tuple[Expr, Expr]]) -> dict[int, str]:
    """F' - f of each (problem, answer) pair that finished within its second, by index."""
    items = [(to_prefix(problem), to_prefix(answer)) for problem, answer in pairs]
    done = pool.run(difference_in_worker, items, deadline=DIFFERENCE_SECONDS)
    return {result.index: result.value for result in done if result.status == "done"}
