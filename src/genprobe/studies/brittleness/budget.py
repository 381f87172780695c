"""Is it a search problem? A large search on the simple primitives (Welleck et al. 2022,
section 6.1, Figure 3).

On the k1*{exp,sin,cos,tan}(k2*x) problems of `robustness-simple`'s `simple_coeff1` set, the
model returns a beam of B candidates and, at each temperature, the distinct ones among B
samples (ranked by log-probability). Every distinct candidate of a problem is verified once, so
the report can set the probability of the top candidate against those of all the correct ones,
and say how many failures of the ordinary search a larger one would fix, at which rank.

The search is the probe's (`studies/large_search.py`), the model asked through the adapter
the probe and the solve stage ask it with (`IntegrationSequenceModel`), by a beam of B with
as many hypotheses per call as an ordinary batch, its answers verified with the run's own
verifier settings.

Result rows (one per problem, decoding and rank): suite, row, decoding ("beam", "T=0.6", ...),
rank, answer, logprob, outcome, method (what decided the verdict: "backstop" for a timeout at the
wall-clock backstop).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from genprobe.runs.executor import Stage
from genprobe.runs.shards import Outputs, Shard, parquet_bytes
from genprobe.studies.brittleness.config import BrittlenessConfig
from genprobe.studies.brittleness.solve import read_problems
from genprobe.studies.brittleness.study import BUDGET
from genprobe.studies.large_search import large_search
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.tasks.tokens import encode_inputs
from genprobe.under_test.adapters.integration_tokens import (
    Answers,
    IntegrationSequenceModel,
    load_integration_model,
)
from genprobe.under_test.sequences import CandidateJudge
from genprobe.under_test.settings import ModelSettings

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


@dataclass(frozen=True)
class BudgetStage(Stage):
    needs_device: ClassVar[bool] = True
    model: ModelSettings
    verifier: VerifierConfig
    config: BrittlenessConfig

    def setup(self) -> tuple[IntegrationSequenceModel, Verifier]:
        """The model searching by a beam of the budget, as many hypotheses per call as an
        ordinary batch holds (`validated` refused a model that is not seq2seq)."""
        budget, base = self.config.search_budget, self.model.decoding
        assert budget is not None
        batch = max(1, base.batch_size * base.beam_size // budget)
        decoding = replace(base, method="beam", beam_size=budget, batch_size=batch)
        searching = replace(self.model, decoding=decoding)
        return load_integration_model(searching), Verifier(self.verifier)

    def close(self, context: tuple[IntegrationSequenceModel, Verifier]) -> None:
        context[0].close()
        context[1].close()

    def runtime(self) -> dict[str, Any]:
        return self.model.runtime()

    def run(
        self, context: tuple[IntegrationSequenceModel, Verifier], shard: Shard, scratch: Path
    ) -> Outputs:
        model, verifier = context
        rows = shard.spec["rows"]
        problems = [problem.problem for problem in read_problems(rows)]
        task = model.task
        src = encode_inputs(task.source_vocab, [(None, to_prefix(p)) for p in problems], "suite")
        budget = self.config.search_budget
        assert budget is not None

        def judge_of(joined: Answers) -> CandidateJudge:
            return joined.judge_with(problems, verifier.verify_many)

        # every distinct answer of a problem verified once, all problems in one call
        seed = self.model.decoding.seed
        frame = large_search(model, src, budget, self.config.temperatures, seed, judge_of)
        problem = frame.pop("input").to_numpy()
        verdicts = frame.pop("judgement")
        frame = frame.drop(columns="member").assign(
            suite=[rows[i]["suite"] for i in problem],
            row=np.array([int(rows[i]["row"]) for i in problem], dtype=np.int64),
            outcome=[verdict.outcome.value for verdict in verdicts],
            method=[verdict.method for verdict in verdicts],
        )
        return {f"budget/{shard.spec['chunk']:05d}.parquet": parquet_bytes(frame[list(COLUMNS)])}
