"""FWD and BWD generation as a run on the run/shard spine: resumable, on every core, on Ray.

The run directory (`OUT.run` beside the data) holds the config and one file per shard of
`shard_size` consecutive attempts, with every attempt's outcome. FWD and BWD attempts are
independent, so shards run anywhere in any order (the local pool or Ray, one deadline process
per worker); the driver asks for them in waves sized by the yield so far and merges them in
attempt order. The data is therefore what one process making attempts 0, 1, 2, ... would keep:
the first n distinct inputs, the same for any number of workers or machines (`generate` with
the same seed keeps the same pairs). A killed run resumes from its finished shards.

IBP is not here: its cache of known primitives makes each round of attempts depend on all the
rounds before it, so it stays in `generation.generate`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from genprobe.runs.driver import writes_runs
from genprobe.runs.executor import Executor, Stage, run_stage
from genprobe.runs.pool import DeadlinePool
from genprobe.runs.rundir import open_run
from genprobe.runs.shards import Outputs, Shard, ShardStore
from genprobe.tasks.integration.generation import GenerationReport, Kept
from genprobe.tasks.integration.generation_config import GenerationConfig
from genprobe.tasks.integration.generators import attempt

KIND = "integration-generate"
STAGE = "attempts"
# most shards in one wave per worker. Each wave starts the local pool's processes afresh
# (seconds), so waves are sized to the attempts still needed rather than kept small.
WAVE_PER_WORKER = 32


class AttemptsStage(Stage):
    """A shard: attempts `start` to `stop` - 1, each under its CPU deadline."""

    def __init__(self, config: GenerationConfig) -> None:
        self.config = config

    def setup(self) -> DeadlinePool:
        return DeadlinePool(1).__enter__()

    def run(self, context: DeadlinePool, shard: Shard, scratch: Path) -> Outputs:
        start, stop = shard.spec["start"], shard.spec["stop"]
        jobs = [(self.config.seed, index) for index in range(start, stop)]
        outcomes: list[dict[str, Any]] = [{}] * len(jobs)
        shared = (self.config.generator, {})
        for result in context.run(
            attempt, jobs, deadline=self.config.attempt_deadline, shared=shared
        ):
            if result.status != "done":
                outcomes[result.index] = {"status": result.status}
                continue
            outcome = result.value
            outcomes[result.index] = {"status": outcome.status}
            if outcome.status == "ok":
                pair = {"input": outcome.input, "output": outcome.output, "n_ops": outcome.n_ops}
                outcomes[result.index] |= pair
        lines = "".join(json.dumps(outcome) + "\n" for outcome in outcomes)
        return {_file(start): lines.encode()}

    def close(self, context: DeadlinePool) -> None:
        context.close()


def _file(start: int) -> str:
    return f"{STAGE}/{start:012d}.jsonl"


def _shard(config: GenerationConfig, start: int) -> Shard:
    stop = min(start + config.shard_size, config.attempt_limit)
    return Shard(STAGE, f"{start:012d}", {"start": start, "stop": stop})


def _merge(kept: Kept, lines: bytes) -> None:
    """A shard's outcomes, in attempt order."""
    for line in lines.decode().splitlines():
        outcome = json.loads(line)
        kept.attempts += 1
        if outcome["status"] == "ok":
            kept.take(outcome["input"], outcome["output"], outcome["n_ops"])
        else:
            kept.counters[outcome["status"]] += 1


@writes_runs
def generate_run(
    config: GenerationConfig,
    run: str | Path,
    executor: Executor | None = None,
    workers: int = 1,
    on_progress: Callable[[int, int, Counter], None] | None = None,
) -> GenerationReport:
    """Generate up to `config.n` distinct pairs in the run directory `run` (resumed if it
    exists), with shards on `executor` (default: this process).

    Args:
        workers: shards the executor runs at once; waves hold up to `WAVE_PER_WORKER` each.
        on_progress: called with (attempts, distinct pairs, counters) as shards finish and as
            they are merged.

    Raises:
        DifferentRunError: `run` holds a run of another config.
    """
    config = config.validated()
    path = open_run(run, KIND, config)
    store = ShardStore(path)
    task = AttemptsStage(config)
    kept = Kept(config.n)
    start = 0
    while not kept.complete and start < config.attempt_limit:
        wave = []
        for _ in range(_wave_size(kept, config, workers)):
            if start >= config.attempt_limit:
                break
            wave.append(_shard(config, start))
            start = wave[-1].spec["stop"]
        finished = 0

        def shard_done(shard: Shard) -> None:  # attempts made so far; pairs once merged
            nonlocal finished
            finished += shard.spec["stop"] - shard.spec["start"]
            if on_progress is not None:
                on_progress(kept.attempts + finished, len(kept.first_seen), kept.counters)

        run_stage(path, task, wave, executor, on_done=shard_done)
        for shard in wave:
            if kept.complete:
                break
            _merge(kept, store.read(shard)[_file(shard.spec["start"])])
            if on_progress is not None:
                on_progress(kept.attempts, len(kept.first_seen), kept.counters)
    return kept.report()


def _wave_size(kept: Kept, config: GenerationConfig, workers: int) -> int:
    """Shards for the attempts still needed at the yield so far (a half, before any)."""
    found = len(kept.first_seen)
    yield_so_far = found / kept.attempts if kept.attempts and found else 0.5
    needed = (config.n - found) / yield_so_far * 1.1
    wanted = math.ceil(needed / config.shard_size)
    return max(workers, min(wanted, WAVE_PER_WORKER * workers))
