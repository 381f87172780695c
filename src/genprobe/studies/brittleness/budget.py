"""Is it a search problem? A large search on the simple primitives (Welleck et al. 2022,
section 6.1, Figure 3).

On the k1*{exp,sin,cos,tan}(k2*x) problems of `robustness-simple`'s `simple_coeff1` set, the
model returns a beam of B candidates and, at each temperature, the distinct ones among B
samples (ranked by log-probability). Every distinct candidate of a problem is verified once, so
the report can set the probability of the top candidate against those of all the correct ones,
and say how many failures of the ordinary search a larger one would fix, at which rank.

Result rows (one per problem, decoding and rank): suite, row, decoding ("beam", "T=0.6", ...),
rank, answer, logprob, outcome, method (what decided the verdict: "backstop" for a timeout at the
wall-clock backstop).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from genprobe.errors import ConfigError
from genprobe.models.adapters.seq2seq import Seq2SeqModel
from genprobe.models.settings import ModelSettings
from genprobe.runs.executor import StageTask
from genprobe.runs.shards import Outputs, Shard, parquet_bytes
from genprobe.studies.brittleness.config import BrittlenessConfig
from genprobe.studies.brittleness.solve import read_problems
from genprobe.studies.brittleness.study import BUDGET
from genprobe.tasks.integration.under_test import answer_text
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig

TEMPLATES = ("k1*exp(k2*x)", "k1*sin(k2*x)", "k1*cos(k2*x)", "k1*tan(k2*x)")
# a beam of 500 is heavy: small shards lose little when interrupted
SHARD_PROBLEMS = 16
COLUMNS = ("suite", "row", "decoding", "rank", "answer", "logprob", "outcome", "method")


def problems_of(suites: pd.DataFrame) -> pd.DataFrame:
    """The suite rows the large search runs on."""
    chosen = suites[
        (suites["suite"] == "robustness-simple")
        & (suites["set"] == "simple_coeff1")
        & suites["template"].isin(TEMPLATES)
    ]
    return chosen[["suite", "row", "problem", "reference"]]


def shards(suites: pd.DataFrame) -> list[Shard]:
    records = problems_of(suites).to_dict("records")
    return [
        Shard(
            BUDGET,
            f"{chunk:05d}",
            {"chunk": chunk, "rows": records[start : start + SHARD_PROBLEMS]},
        )
        for chunk, start in enumerate(range(0, len(records), SHARD_PROBLEMS))
    ]


def decodings(config: BrittlenessConfig) -> dict[str, dict[str, Any]]:
    """Decoding name -> the decoding settings that differ from the model's own."""
    budget = config.search_budget
    out = {"beam": {"method": "beam", "beam_size": budget}}
    for temperature in config.temperatures:
        out[f"T={temperature:g}"] = {
            "method": "sample",
            "temperature": temperature,
            "samples": budget,
        }
    return out


@dataclass(frozen=True)
class BudgetTask(StageTask):
    needs_device: ClassVar[bool] = True
    model: ModelSettings
    verifier: VerifierConfig
    config: BrittlenessConfig

    def setup(self) -> tuple[Seq2SeqModel, Verifier]:
        model = self.model.load()
        if not isinstance(model, Seq2SeqModel):
            model.close()
            raise ConfigError(
                "--search-budget", "a seq2seq model (ckpt: or lc:) that can beam and sample",
                self.model.spec,
            )  # fmt: skip
        return model, Verifier(self.verifier)

    def close(self, context: tuple[Seq2SeqModel, Verifier]) -> None:
        context[0].close()
        context[1].close()

    def runtime(self) -> dict[str, Any]:
        return self.model.runtime()

    def run(self, context: tuple[Seq2SeqModel, Verifier], shard: Shard, scratch: Path) -> Outputs:
        model, verifier = context
        rows = shard.spec["rows"]
        problems = read_problems(rows)
        budget = self.config.search_budget
        # as many hypotheses per model call as an ordinary batch holds
        base = model.decoding
        batch = max(1, base.batch_size * base.beam_size // budget)
        found: dict[str, list] = {}
        for name, change in decodings(self.config).items():
            decoding = replace(base, batch_size=batch, **change)
            found[name] = model.with_decoding(decoding).candidates(
                [p.problem for p in problems], budget
            )
        # every distinct answer of a problem, verified once, all problems in one call
        distinct: dict[tuple[int, str], Any] = {}
        for i in range(len(problems)):
            for candidates in found.values():
                for candidate in candidates[i]:
                    distinct.setdefault((i, answer_text(candidate.answer)), candidate.answer)
        keys = list(distinct)
        verdicts = verifier.verify_many([(problems[i].problem, distinct[i, a]) for i, a in keys])
        verdict = dict(zip(keys, verdicts, strict=True))
        records = [
            {
                "suite": rows[i]["suite"],
                "row": problem.row,
                "decoding": name,
                "rank": rank,
                "answer": answer_text(candidate.answer),
                "logprob": candidate.logprob,
                "outcome": verdict[i, answer_text(candidate.answer)].outcome.value,
                "method": verdict[i, answer_text(candidate.answer)].method,
            }
            for i, problem in enumerate(problems)
            for name, candidates in found.items()
            for rank, candidate in enumerate(candidates[i], start=1)
        ]
        frame = pd.DataFrame(records, columns=COLUMNS)
        return {f"budget/{shard.spec['chunk']:05d}.parquet": parquet_bytes(frame)}
