"""SAGGA's breeder (Welleck et al. 2022, section 2.2) for the failure search's loop
(`studies/search/loop.py`): a generation is the mutants of every seed, asked of the model and
verified, in three stages (`generation.py`); its failures are novel by canonical form, and the
archive is `archive.parquet` (`archive.jsonl` in a run made before it, until its search goes
on). `basis` is the search's first seeds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.runs.budget import Budget
from genprobe.runs.executor import Executor, run_stage
from genprobe.runs.shards import Shard, ShardStore
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.loop import Log, Parents, Search, keep_archive
from genprobe.studies.search.sagga.generation import (
    ProposeStage,
    ScoreStage,
    VerifyStage,
    propose_shard,
    proposed_path,
    score_shard,
    verified_path,
    verify_shards,
)
from genprobe.studies.search.sagga.results import ARCHIVE_COLUMNS, JSONL_ARCHIVE, archive_file
from genprobe.studies.search.sagga.seeds import named_basis, read_problem_file
from genprobe.studies.search.sagga.study import GENERATION
from genprobe.tasks.integration.expression import Expr
from genprobe.under_test.settings import sent_to_workers


def basis(config: SearchConfig) -> list[Expr]:
    if config.basis_file is not None:
        return read_problem_file(config.basis_file)
    return named_basis(config.basis)


@dataclass
class SaggaBreeder:
    """SAGGA's generations (a `studies.search.loop.Breeder`): every parent (a seed) mutated
    `generation_size // seeds` times, in three stages: propose and verify on the study's
    executor, score here (where the search's embedder already is); the budget is checked after
    each shard. Novel by canonical form; the archive is `archive.parquet`."""

    config: SearchConfig
    run: Path
    runner: Executor
    here: Executor
    budget: Budget
    log: Log
    first: int = 1
    key: str = "problem"

    @property
    def archive_file(self) -> str:
        return archive_file(self.run)  # JSONL_ARCHIVE in a run made before, until it goes on

    def __post_init__(self) -> None:
        config = sent_to_workers(self.config)
        self.tasks = ProposeStage(config), VerifyStage(config), ScoreStage(config)

    def recorded(self, generation: int) -> bool:
        return ShardStore(self.run).finished(GENERATION, f"{generation:05d}")

    def compute(self, generation: int, parents: Parents) -> bool:
        if self.recorded(generation):
            return False  # however its verification was chunked
        seeds = parents.keys
        per_seed = max(1, self.config.generation_size // len(seeds))
        propose, verify, score = self.tasks
        self.log(f"generation {generation}: mutating {len(seeds)} seeds, asking the model")
        asked = propose_shard(generation, seeds, per_seed)
        run_stage(self.run, propose, [asked], self.runner)
        self.budget.check()
        proposed = self._read(asked, proposed_path(generation))
        shards = verify_shards(generation, proposed["rows"], self.config.verify_chunk)
        done = 0

        def verified_one(shard: Shard) -> None:
            nonlocal done
            done += 1
            self.log(f"generation {generation}: verified {done} of {len(shards)} shards")
            self.budget.check()

        self.log(f"generation {generation}: verifying {len(shards)} shards")
        run_stage(self.run, verify, shards, self.runner, on_done=verified_one)
        self.budget.check()
        verified = [self._read(s, verified_path(generation, s.spec["chunk"])) for s in shards]
        run_stage(self.run, score, [score_shard(generation, proposed, verified)], self.here)
        return True

    def failed(self, frame: pd.DataFrame) -> np.ndarray:
        return (frame["status"] == "failed").to_numpy()

    def archived(self, novel: pd.DataFrame) -> pd.DataFrame:
        return novel[list(ARCHIVE_COLUMNS)]

    def stats(
        self, frame: pd.DataFrame, effort: dict[str, Any], fit: pd.DataFrame, search: Search
    ) -> dict[str, Any]:
        novel, lengths = search.archive[-1], [part["length"] for part in search.archive]
        return {
            **effort,
            "problems_found": int((frame["fitness"] > 0).sum()),
            "fitness_found": len(fit),
            "novel_found": len(novel),
            "novel_found_length": float(novel["length"].mean()) if len(novel) else None,
            "archive_size": search.archived,
            "archive_mean_length": float(np.mean(np.concatenate(lengths)))
            if search.archived
            else None,
            "next_seeds": len(search.chosen),
        }

    def write_archive(self, archive: list[pd.DataFrame]) -> None:
        columns = list(ARCHIVE_COLUMNS)
        frame = pd.concat(archive, ignore_index=True) if archive else pd.DataFrame(columns=columns)
        keep_archive(self.run, frame)
        (self.run / JSONL_ARCHIVE).unlink(missing_ok=True)  # a run made before: ARCHIVE holds it

    def _read(self, shard: Shard, path: str) -> Any:
        """The file `path` of a done `shard`, checked against its record."""
        return json.loads(ShardStore(self.run).read(shard)[path])
