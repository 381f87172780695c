"""A probe run, end to end: which inputs break a model, and do all its seeds break on them?

    check    the model is a token task's (a finished sweep), its task (read without loading
             the model) the one asked for, the families and relations ones the task
             declares, and for a new run the model loads and answers as set (an endpoint,
             the shots: `SequenceModel.check`): before anything is written or built
    open     config.json: the hashed config, with the task resolved from the model
    suites   suites.npz and suites.json: each suite's inputs (origins, references, which
             the model trained on where it knows), kind, name, size and the perturbed inputs
             the task refused (`suites.py`); a rerun takes them from there
    decode   one shard per suite (with --shard-size, per as many of its inputs): every
             member decodes and the verifier judges (results/<suite>.parquet, or
             results/<suite>/<chunk>.parquet; `decode.py`)
    derive   with --derived: the task's derived suites, built of the base inputs (and those of
             the task's splits with sets) every member solved, kept in suites.npz and
             suites.json with the others, then decoded as they are (`suites.derived_suites`);
             a rerun takes them from there
    search   with --search-budget: a large search on the chosen suites' inputs, a few per
             shard (large-search/<suite>/<chunk>.parquet, `large_search.py`)

Every stage is a list of shards run by `run_stage`: rerunning the same command skips what is
done, so a killed run ends with the results of an uninterrupted one, on the same suites.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis import rates
from genprobe.analysis.judged import from_probe
from genprobe.errors import ConfigError
from genprobe.runs.config import RunConfig
from genprobe.runs.driver import writes_runs
from genprobe.runs.executor import Executor, LocalExecutor, run_stage
from genprobe.runs.rundir import CONFIG_FILE, open_run
from genprobe.runs.shards import ShardStore
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.decode import DecodeStage, decode_shards
from genprobe.studies.probe.large_search import LargeSearchStage, search_shards
from genprobe.studies.probe.results import read_results
from genprobe.studies.probe.study import KIND
from genprobe.studies.probe.suites import (
    BASE,
    Suite,
    build_suites,
    derived_suites,
    marked_seen,
    saved_suites,
    write_suites,
)
from genprobe.tasks.registry import task_name
from genprobe.tasks.task import Task
from genprobe.tasks.verdict import TimeoutPolicy

Log = Callable[[str], None]


def resolved(config: ProbeConfig) -> ProbeConfig:
    """`config` with the model's own task where it names none (learned without loading the
    model: `ModelSpec.task_of`), and a sweep's directory, a language model's folder, an answer
    cache and the files of inputs as absolute paths (workers and later commands may run
    elsewhere), validated.

    Raises:
        ConfigError: a task other than the model's, or any setting out of range.
        RunDirError: the model's run directory holds no sweep.
    """
    asked = config.load_task() if config.task else None
    task = config.model.spec.task_of(asked)
    own, options = task_name(task), task.options()
    if asked is not None and (task_name(asked), asked.options()) != (own, options):
        shown = " ".join(f"{k}={v}" for k, v in options.items())
        given = " ".join([config.task, *(f"{k}={v}" for k, v in config.task_options)])
        raise ConfigError("--task", f"the model's own task ({own} {shown}) or left out", given)
    options_items = tuple(sorted(options.items()))
    inputs = tuple(str(Path(path).absolute()) for path in config.inputs)
    config = replace(
        config, model=config.model.absolute(), task=own, task_options=options_items, inputs=inputs
    )
    return config.validated()


def _answers(config: ProbeConfig, task: Task) -> None:
    """What a new run asks of the model before it writes anything: that it loads (on the
    CPU) and answers as set (`SequenceModel.check`: an endpoint answers, the shots fit).

    Raises:
        GenprobeError: it does not.
    """
    config.model.sequence_model(task, device="cpu").check()


@writes_runs
def run_probe(
    config: ProbeConfig,
    out: str | Path,
    executor: Executor | None = None,
    log: Log = lambda message: None,
    *,
    kind: str = KIND,
    recorded: RunConfig | None = None,
) -> Path:
    """Run (or resume) the probe study in `out`; returns the run directory. `kind` and
    `recorded`: the run's kind and the config its directory records (by default the probe's,
    `config`); a brittleness run records its `BrittlenessConfig` (`studies/brittleness/run.py`).

    Raises:
        ConfigError, RunDirError: see `resolved`; `out` holds another run.
    """
    config = resolved(config)
    task = config.load_task()
    recorded = config if recorded is None else recorded
    if not (Path(out) / CONFIG_FILE).exists():  # a new run: the model answers before any suite
        _answers(config, task)  # is built (a paper-size one takes minutes)
    suites = saved_suites(Path(out), recorded)
    if suites is None:  # a data error writes nothing
        suites = build_suites(config, task, config.model.spec.training_inputs(task))
    run = open_run(out, kind, recorded)
    write_suites(run, suites)
    shards = [
        shard
        for suite in suites
        if len(suite.src)
        for shard in decode_shards(suite, config.k, config.shard_size)
    ]
    if pending := ShardStore(run).pending(shards):
        if config.shard_size is None:
            log(f"decoding {len(pending)} suites: {', '.join(shard.key for shard in pending)}")
        else:  # a shard's key is its suite's and its number: the shards counted by suite
            counted = Counter(shard.key.rpartition(".")[0] for shard in pending)
            by_suite = ", ".join(f"{suite} ({n})" for suite, n in counted.items())
            log(f"decoding {len(pending)} shards of {len(counted)} suites: {by_suite}")
    executor = executor or LocalExecutor(workers=config.workers)
    run_stage(run, DecodeStage(config), shards, executor)
    if config.derived and not any(suite.kind == "derived" for suite in suites):
        suites = [*suites, *_derived(run, config, task, suites)]
        write_suites(run, suites)
        built = ", ".join(f"{s.key} ({len(s.src)})" for s in suites if s.kind == "derived")
        log(f"built of the inputs every member solved: {built}")
    shards = [
        shard
        for suite in suites
        if suite.kind == "derived" and len(suite.src)
        for shard in decode_shards(suite, config.k, config.shard_size)
    ]
    if pending := ShardStore(run).pending(shards):
        what = "derived suites" if config.shard_size is None else "shards of derived suites"
        log(f"decoding {len(pending)} {what}")
    run_stage(run, DecodeStage(config), shards, executor)
    if config.search_budget is not None:
        shards = search_shards(suites, config)
        if pending := ShardStore(run).pending(shards):
            log(f"large search (budget {config.search_budget}): {len(pending)} shards")
        run_stage(run, LargeSearchStage(config), shards, executor)
    return run


def _derived(run: Path, config: ProbeConfig, task: Task, suites: list[Suite]) -> list[Suite]:
    """The derived suites, of the inputs every member solved (the base inputs, and those of the
    task's splits whose inputs have sets: the integration task's `robustness-simple`, whose
    solved primitives its compositionality sums too), marked seen as the others are."""
    results = read_results(run)
    sources = [s for s in suites if s.key == BASE or (s.kind == "task" and "set" in s.columns)]
    solved = [
        (s, every_member_solved(results, len(s.src), s.key, config.solved_by)) for s in sources
    ]
    derived = derived_suites(config, task, solved)
    if suites[0].seen is None:
        return derived
    return marked_seen(derived, config.model.spec.training_inputs(task))


def every_member_solved(
    results: pd.DataFrame, n: int, suite: str = BASE, solved_by: str = "paper"
) -> np.ndarray:
    """(n,) whether every member solved each of the n inputs of `suite` (default: the base
    inputs), in the decode stage's result rows (`rates.first_pass`): `paper`, its first
    candidate right (a timeout fails); `code`, a right or timed-out candidate at rank 1, or at
    any rank for a base input (the brittleness authors' code: their validation problems at
    any rank)."""
    rows = results[results["suite"] == suite]
    if rows.empty:
        return np.zeros(n, dtype=bool)
    passing = rates.STRICT if solved_by == "paper" else rates.PASSING[TimeoutPolicy.GENEROUS.value]
    first = rates.first_pass(from_probe(rows), passing)
    within = np.inf if solved_by == "code" and suite == BASE else 1
    every = first["first"].le(within).groupby(first["index"]).all()
    return every.reindex(np.arange(n), fill_value=False).to_numpy(dtype=bool)
