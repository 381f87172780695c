"""Is it a search problem? A large search on the simple primitives (Welleck et al. 2022,
section 6.1, Figure 3).

On the k1*{exp,sin,cos,tan}(k2*x) problems of `robustness-simple`'s `simple_coeff1` set, the
model returns a beam of B candidates and, at each temperature, the distinct ones among B
samples (ranked by log-probability). Every distinct candidate of a problem is verified once, so
the report can set the probability of the top candidate against those of all the correct ones,
and say how many failures of the ordinary search a larger one would fix, at which rank.

The search is the probe's (`studies/large_search.py`), the model asked through the adapter
the probe asks it with, its answers verified with the run's own verifier settings.

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

from genprobe.errors import ConfigError
from genprobe.runs.executor import Stage
from genprobe.runs.shards import Outputs, Shard, parquet_bytes
from genprobe.studies.brittleness.config import BrittlenessConfig
from genprobe.studies.brittleness.solve import read_problems
from genprobe.studies.brittleness.study import BUDGET
from genprobe.studies.large_search import judged_once, searched, searched_rows
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.task import IntegrationTask
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.tasks.tokens import encode_inputs
from genprobe.under_test.adapters.integration_tokens import Answers, IntegrationSequenceModel
from genprobe.under_test.adapters.seq2seq import Seq2SeqModel
from genprobe.under_test.sequences import CandidateJudge
from genprobe.under_test.settings import ModelSettings
from genprobe.verification.verdict import Verdict

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

    def setup(self) -> tuple[Seq2SeqModel, Verifier]:
        model = self.model.load()
        if not isinstance(model, Seq2SeqModel):
            model.close()
            raise ConfigError(
                "--search-budget", "a seq2seq model (ckpt: or lc:) that can beam and sample",
                str(self.model.spec),
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
        problems = [problem.problem for problem in read_problems(rows)]
        budget = self.config.search_budget
        # as many hypotheses per model call as an ordinary batch holds
        base = model.decoding
        batch = max(1, base.batch_size * base.beam_size // budget)
        decoding = replace(base, method="beam", beam_size=budget, batch_size=batch)
        task = IntegrationTask()
        asked = IntegrationSequenceModel(model.with_decoding(decoding), task, model.name)
        src = encode_inputs(task.source_vocab, [(None, to_prefix(p)) for p in problems], "suite")
        found = searched(asked, src, budget, self.config.temperatures, base.seed)

        def judge_of(joined: Answers) -> CandidateJudge:
            def judge(member: np.ndarray, row: np.ndarray, rank: np.ndarray) -> list[Verdict]:
                answers = joined.answers[member, row, rank]
                return verifier.verify_many(
                    [(problems[i], a) for i, a in zip(row, answers, strict=True)]
                )

            return judge

        # every distinct answer of a problem verified once, all problems in one call
        frame = searched_rows(found, judged_once(found, judge_of), task.target_vocab)
        problem = frame.pop("input").to_numpy()
        verdicts = frame.pop("judgement")
        frame = frame.drop(columns="member").assign(
            suite=[rows[i]["suite"] for i in problem],
            row=np.array([int(rows[i]["row"]) for i in problem], dtype=np.int64),
            outcome=[verdict.outcome.value for verdict in verdicts],
            method=[verdict.method for verdict in verdicts],
        )
        return {f"budget/{shard.spec['chunk']:05d}.parquet": parquet_bytes(frame[list(COLUMNS)])}
