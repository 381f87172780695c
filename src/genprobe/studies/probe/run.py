"""A probe run, end to end: which inputs break a model, and do all its seeds break on them?

    check    the model is a token task's (a finished sweep), its task the one asked for, the
             families and relations ones the task declares, and for a new run the model
             answers as set (an endpoint, the shots: `SequenceModel.check`): before anything
             is written
    open     config.json: the hashed config, with the task resolved from the model
    suites   suites.npz and suites.json: each suite's inputs (origins, references, which
             the model trained on where it knows), kind, name, size and the perturbed inputs
             the task refused (`suites.py`); a rerun takes them from there
    decode   one shard per suite: every member decodes and the verifier judges
             (results/<suite>.parquet, `decode.py`)
    search   with --search-budget: a large search on the chosen suites' inputs, a few per
             shard (large-search/<suite>/<chunk>.parquet, `large_search.py`)

Every stage is a list of shards run by `run_stage`: rerunning the same command skips what is
done, so a killed run ends with the results of an uninterrupted one, on the same suites.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from genprobe.errors import ConfigError
from genprobe.runs.executor import Executor, LocalExecutor, run_stage
from genprobe.runs.rundir import open_run
from genprobe.runs.shards import ShardStore
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.decode import DecodeTask, decode_shard
from genprobe.studies.probe.large_search import LargeSearchTask, search_shards
from genprobe.studies.probe.study import KIND
from genprobe.studies.probe.suites import build_suites, saved_suites, write_suites
from genprobe.tasks.registry import task_name
from genprobe.under_test.adapters.integration_tokens import as_sequence_model
from genprobe.under_test.registry import absolute_spec, training_inputs
from genprobe.under_test.sequences import SequenceModel

Log = Callable[[str], None]


def resolved(config: ProbeConfig) -> tuple[ProbeConfig, SequenceModel]:
    """`config` with the model's own task where it names none, and a sweep's directory, a
    language model's folder and an answer cache as absolute paths (workers and later commands
    may run elsewhere), validated; and the model, loaded on the CPU to tell its task.

    Raises:
        ConfigError: a task other than the model's, or any setting out of range.
        RunDirError: the model's run directory is not a finished sweep.
    """
    config.check_model_settings()  # before the model loads
    asked = config.load_task() if config.task else None
    model = as_sequence_model(config.model, asked, **{**config.model_settings(), "device": "cpu"})
    own, options = task_name(model.task), model.task.options()
    if asked is not None and (task_name(asked), asked.options()) != (own, options):
        shown = " ".join(f"{k}={v}" for k, v in options.items())
        given = " ".join([config.task, *(f"{k}={v}" for k, v in config.task_options)])
        raise ConfigError("--task", f"the model's own task ({own} {shown}) or left out", given)
    spec = absolute_spec(config.model)
    options_items = tuple(sorted(options.items()))
    cache = config.cache_dir and str(Path(config.cache_dir).absolute())
    inputs = tuple(str(Path(path).absolute()) for path in config.inputs)
    config = replace(
        config, model=spec, task=own, task_options=options_items, cache_dir=cache, inputs=inputs
    )
    return config.validated(), model


def run_probe(
    config: ProbeConfig,
    out: str | Path,
    executor: Executor | None = None,
    log: Log = lambda message: None,
) -> Path:
    """Run (or resume) the probe study in `out`; returns the run directory.

    Raises:
        ConfigError, RunDirError: see `resolved`; `out` holds another run.
    """
    config, model = resolved(config)
    suites = saved_suites(Path(out), config)
    if suites is None:  # a data error writes nothing
        task = config.load_task()
        suites = build_suites(config, task, training_inputs(config.model, task))
    run = open_run(out, KIND, config, starts=model.check)
    write_suites(run, suites)
    shards = [decode_shard(suite, config.k) for suite in suites if len(suite.src)]
    if pending := ShardStore(run).pending(shards):
        log(f"decoding {len(pending)} suites: {', '.join(shard.key for shard in pending)}")
    executor = executor or LocalExecutor(workers=config.workers)
    run_stage(run, DecodeTask(config), shards, executor)
    if config.search_budget is not None:
        shards = search_shards(suites, config)
        if pending := ShardStore(run).pending(shards):
            log(f"large search (budget {config.search_budget}): {len(pending)} shards")
        run_stage(run, LargeSearchTask(config), shards, executor)
    return run
