"""The seed-sensitivity study (Weber, Shekhar & Balasubramanian 2018), end to end, on any task.

    check    the model keeps its contract (`model_check`), before anything is written
    open     config.json: the hashed config (a different config in the same directory is refused,
             except the same config with more seeds: the run grows, its trained seeds kept);
             its provenance says whether a member computes what its seed alone computes
    data     data/<role>.jsonl: training, validation and suite examples, for reading (the stages
             regenerate them)
    train    one shard per chunk of seeds, each one stacked model → members/, training/ (and
             with subsets, which examples each member trained on: subsets/)
    predict  one shard per suite → predictions/<suite>.parquet; with subsets, the training
             split's too (predictions/train.parquet: every member on every training example)
    metrics  metrics.json, from the recorded result files only

Every stage is a list of shards run by `run_stage`: rerunning the same command skips what is
done and resumes a killed shard from its scratch directory, with the numbers of an
uninterrupted run. `device` and the executor say where shards run, not what they compute.

A language model has no training: `evaluate_language_model` checks it (loaded once), opens its
run (config.json), writes the suites' data and runs the predict stage, each suite answered by
every way of asking it (`language_model.py`), then metrics.json, as a sweep's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from genprobe.errors import ConfigError, ModelCapabilityError, RunDirError
from genprobe.models.device import check_device
from genprobe.runs.driver import writes_runs
from genprobe.runs.executor import Executor, LocalExecutor, relayed, run_stage
from genprobe.runs.rundir import CONFIG_FILE, lock_run, open_run
from genprobe.runs.shards import Shard, ShardStore, json_bytes
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.studies.seed_sensitivity.memory import check_memory
from genprobe.studies.seed_sensitivity.model_check import check_contract, members_alone
from genprobe.studies.seed_sensitivity.predict import (
    AnswerStage,
    PredictStage,
    predict_shard,
    prediction_path,
)
from genprobe.studies.seed_sensitivity.results import (
    ROLES_FILE,
    incomplete_suites,
    read_sweep,
    write_metrics,
)
from genprobe.studies.seed_sensitivity.study import DATA, KIND, LANGUAGE_MODEL, LEGACY_KIND
from genprobe.studies.seed_sensitivity.train import (
    OnProgress,
    TrainStage,
    train_shards,
    trained_seeds,
)
from genprobe.tasks.files import SUITE_NAME, examples_text
from genprobe.tasks.task import Examples, Task
from genprobe.under_test.sequences import SequenceModel

Log = Callable[[str], None]


@writes_runs
def run_sweep(
    config: SweepConfig,
    out: str | Path,
    device: str = "cpu",
    executor: Executor | None = None,
    on_progress: OnProgress | None = None,
    log: Log = lambda message: None,
) -> Path:
    """Run (or resume) the whole study in `out`; returns the run directory.

    Raises:
        ConfigError: a device name that is not cpu/cuda/cuda:N, a device this machine does
            not have when a stage has work for it, or for a new run a training size larger
            than the training split.
        ResourceError: the sweep cannot fit in the memory free here (`memory.check_memory`).
        RunDirError: `out` holds another run (one with fewer seeds and otherwise the same
            config is grown instead).
    """
    check_device(device)
    if not (Path(out) / CONFIG_FILE).exists():
        config.check_train_size()
    check_memory(config, len(config.seeds), getattr(executor, "workers", None) or 1)
    check_contract(config)  # a broken model writes nothing
    data = {role: config.split(role) for role in config.roles()}  # nor does a data error

    @functools.cache
    def model_notes() -> dict[str, Any]:
        measured_on = device if device == "cpu" or torch.cuda.is_available() else "cpu"
        return {"model": members_alone(config, measured_on)}

    def grows(earlier: SweepConfig) -> bool:
        return _grows(config, earlier, lambda: model_notes()["model"], Path(out))

    run = open_run(out, KIND, config, grows, older_kinds=(LEGACY_KIND,), notes=model_notes)
    _keep_data(run, config.task, data, _describe(config, data))
    if shards := train_shards(config, trained_seeds(run, config)):
        seeds = sum(len(shard.spec["seeds"]) for shard in shards)
        log(f"training {seeds} seeds on {config.train_size:,} examples "
            f"({len(shards)} stacked model{'s' * (len(shards) > 1)})")  # fmt: skip
    executor = executor or LocalExecutor()
    relay = None if on_progress is None else lambda item: on_progress(*item)
    with relayed(executor, relay) as progress:
        run_stage(run, TrainStage(config, device, progress), shards, executor)
    suites = [predict_shard(role, data[role].src, config.seeds) for role in config.predicted()]
    if pending := ShardStore(run).pending(suites):
        log(f"evaluating {', '.join(shard.key for shard in pending)}")
    run_stage(run, PredictStage(run, config, device), suites, executor)
    if stale := incomplete_suites(write_metrics(run)):
        log(f"{', '.join(stale)}: evaluated before the run grew; run `evaluate --src` again")
    return run


def _grows(
    config: SweepConfig, earlier: SweepConfig, alone: Callable[[], dict[str, Any]], out: Path
) -> bool:
    """Whether a run of `earlier` in `out` grows into `config`: more seeds, trained in stacked
    models of their own where each member is bit for bit its seed alone (`alone()`, measured
    only for a config that extends), else only where the earlier stacks stay whole.

    Raises:
        RunDirError: `config` extends `earlier` but the run cannot grow, saying why.
    """
    if not config.extends(earlier):
        return False
    measured = alone()
    if config.keeps_stacks(earlier) or measured["members_equal_alone"]:
        return True
    last = earlier.seed_chunks()[-1]
    largest = measured["largest_difference"]
    differs = (
        f"differs from its seed trained alone (by up to {largest:.2g})"
        if np.isfinite(largest)
        else "may differ from its seed trained alone (its training loss diverged when measured)"
    )
    raise RunDirError(
        f"{out.absolute()} cannot grow from {len(earlier.seeds)} to {len(config.seeds)} seeds: "
        f"the new seeds would join the stacked model of seeds {last[0]}-{last[-1]} "
        f"(--seeds-per-shard {config.seeds_per_shard}), and a member of this model {differs}, "
        "so the grown run would not be the one this command makes anew: choose another --out"
    )


def _keep_data(
    run: Path, task: Task, data: dict[str, Examples], roles: dict[str, Any] | None = None
) -> None:
    """Keep the examples of each role (`data/<role>.jsonl`), and what they are (`roles`, in
    `data/roles.json`), as the run's data shard, unless it is done: each file checked by
    whatever reads it (the trained-on marks of a probe), and made again if damaged."""
    shard, store = Shard(DATA, "roles"), ShardStore(run)
    if store.done(shard):
        return
    files = {f"data/{role}.jsonl": examples_text(task, e).encode() for role, e in data.items()}
    store.keep(shard, files | ({} if roles is None else {ROLES_FILE: json_bytes(roles)}))


def _describe(config: SweepConfig, data: dict[str, Examples]) -> dict[str, Any]:
    """Per role: its split, how many examples, and their shortest and longest length (the
    task's length, which per-length reports use)."""
    splits = {"train": config.task.train_split, "validation": config.task.validation_split}
    described = {}
    for role, examples in data.items():
        lengths = config.task.length(examples.src)
        described[role] = {
            "split": splits.get(role, role),
            "examples": len(examples),
            "lengths": [int(lengths.min()), int(lengths.max())],
        }
    return described


@writes_runs
def evaluate_external(
    run: str | Path,
    src: np.ndarray,
    name: str,
    device: str = "cpu",
    executor: Executor | None = None,
) -> Path:
    """Decode the inputs `src` ((n, L) input ids of the run's task) with every member of a
    trained run and add them to its results as the suite `name`.

    Raises:
        ConfigError: a bad name (or one of the study's own suites) or device.
        RunDirError: not a sweep's run directory, or its training has not finished.
        ModelCapabilityError: an input is longer than the model can take (nothing is decoded).
    """
    check_device(device)
    run = Path(run).absolute()
    config = read_sweep(run)
    lock_run(run)
    _check_name(name, config.roles())
    untaken = np.flatnonzero(~config.takes(src))
    if len(untaken):
        first = int(untaken[0])
        raise ModelCapabilityError(
            f"{name}: the model cannot take {len(untaken)} of the {len(src)} inputs (longer than "
            f"its table of positions or its fixed-length input); the first is row {first + 1}, "
            f"{int((np.asarray(src[first]) > 0).sum())} tokens"
        )
    # the run's own suites too: one whose record is gone is decoded again, not left out
    own = [predict_shard(role, config.split(role).src, config.seeds) for role in config.predicted()]
    shard = predict_shard(name, src, config.seeds)
    run_stage(run, PredictStage(run, config, device), [*own, shard], executor)
    write_metrics(run)
    return run / prediction_path(name)


@writes_runs
def evaluate_language_model(
    config: LanguageModelConfig,
    out: str | Path,
    inputs: tuple[str, np.ndarray] | None = None,
    log: Log = lambda message: None,
) -> Path:
    """Run (or resume) a language model's run of the study in `out`: every member answers the
    task's suites and, given `inputs` (name, (n, L) input ids), a suite of those; returns the
    run directory.

    Everything is checked before anything is written: the settings, the suites' data, the name,
    and the model, loaded once, with every input its members' prompts leave room for, and for a
    new run asked whether it can answer (`SequenceModel.check`: the shots fit, an endpoint
    answers at all). A run whose suites are all answered is read, the model not even loaded; an
    interrupted one asks only the suites it has no answers to (an endpoint's answered requests
    come from its answer cache).

    Raises:
        ConfigError: see `LanguageModelConfig.validated`; a bad name (or one of the task's
            own suites).
        CheckpointError: a model that cannot be loaded.
        ModelCapabilityError: an input longer than a member's prompt leaves room for.
        RunDirError: `out` holds another run.
    """
    config = resolved(config)
    data = {suite: config.split(suite) for suite in config.task.suites()}  # a data error
    suites = {suite: examples.src for suite, examples in data.items()}
    if inputs is not None:
        name, src = inputs
        _check_name(name, tuple(suites))
        suites[name] = src
    shards = [predict_shard(suite, src, config.seeds) for suite, src in suites.items()]
    if (Path(out) / CONFIG_FILE).is_file():
        open_run(out, LANGUAGE_MODEL.kind, config)  # this run, or refused: nothing is written
    pending = ShardStore(out).pending(shards)
    model = _checked_model(config, {s.key: suites[s.key] for s in pending}) if pending else None
    run = open_run(out, LANGUAGE_MODEL.kind, config, starts=None if model is None else model.check)
    _keep_data(run, config.task, data)
    if pending:
        members = len(config.seeds)
        log(f"asking {members} member{'s' * (members > 1)}: "
            f"{', '.join(shard.key for shard in pending)}")  # fmt: skip
    run_stage(run, AnswerStage(config, model), shards)
    write_metrics(run)
    return run


def resolved(config: LanguageModelConfig) -> LanguageModelConfig:
    """`config` validated, with a model's folder and an answer cache as absolute paths (a
    rerun from elsewhere finds them)."""
    config = config.validated()
    return replace(config, model=config.model.absolute())


def _checked_model(config: LanguageModelConfig, suites: dict[str, np.ndarray]) -> SequenceModel:
    """The model, loaded, once every member's prompt of every input of `suites` leaves room
    for its longest answer.

    Raises:
        CheckpointError, ModelCapabilityError: see `evaluate_language_model`.
    """
    task = AnswerStage(config)
    task.runtime()  # a device this machine has, before the model loads there
    model = task.setup()
    for name, src in suites.items():
        untaken = np.flatnonzero(~model.readable(src))
        if len(untaken):
            first = int(untaken[0])
            raise ModelCapabilityError(
                f"{name}: the model cannot be asked {len(untaken)} of the {len(src)} inputs (a "
                "member's prompt leaves too little room in its positions for the longest "
                f"answer; fewer --shots make shorter prompts); the first is row {first + 1}, "
                f"{int((np.asarray(src[first]) > 0).sum())} tokens"
            )
    return model


def _check_name(name: str, own: tuple[str, ...]) -> None:
    """A suite of the user's inputs has a file's name, and not one of the study's own.

    Raises:
        ConfigError: it has not.
    """
    if not SUITE_NAME.match(name):
        raise ConfigError("name", "letters, digits, '_', '-' or '.' (at most 64)", name)
    if name in own:
        raise ConfigError("name", f"a name other than the study's own {', '.join(own)}", name)
