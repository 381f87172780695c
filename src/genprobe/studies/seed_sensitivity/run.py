"""The seed-sensitivity study (Weber, Shekhar & Balasubramanian 2018), end to end.

    open     config.json: the hashed config (a different config in the same directory is refused,
             except the same config with more seeds: the run grows, its trained seeds kept)
    data     data/<split>.src/.tgt, the authors' files, for reading (the stages regenerate them)
    train    one shard per chunk of seeds, each one stacked model → members/, training/
    predict  one shard per suite → predictions/<suite>.parquet
    metrics  metrics.json, from the recorded result files only

Every stage is a list of shards run by `run_stage`: rerunning the same command skips what is
done and resumes a killed shard from its scratch directory, with the numbers of an
uninterrupted run. `device` and the executor say where shards run, not what they compute.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from genprobe.errors import ConfigError, RunDirError
from genprobe.runs.executor import Executor, LocalExecutor, run_stage
from genprobe.runs.rundir import open_run, read_config
from genprobe.runs.shards import ShardStore
from genprobe.studies.seed_sensitivity.config import KIND, SPLITS, SUITES, SweepConfig
from genprobe.studies.seed_sensitivity.device import check_device
from genprobe.studies.seed_sensitivity.predict import PredictTask, predict_shard, prediction_path
from genprobe.studies.seed_sensitivity.results import incomplete_suites, write_metrics
from genprobe.studies.seed_sensitivity.train import OnProgress, TrainTask, train_shards
from genprobe.tasks.rewriting.formats import read_inputs, write_srctgt

SUITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

Log = Callable[[str], None]


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
        ConfigError: a device name that is not cpu/cuda/cuda:N, or a device this machine does
            not have when a stage has work for it.
        RunDirError: `out` holds another run (one with fewer seeds and otherwise the same
            config is grown instead).
    """
    check_device(device)
    run = open_run(
        out, KIND, config.to_dict(), lambda stored: config.extends(SweepConfig.from_dict(stored))
    )
    data = {split: config.split(split) for split in SPLITS}
    for split, examples in data.items():
        if not (run / "data" / f"{split}.src").exists():
            write_srctgt(run / "data" / split, config.grammar, examples)
    shards = train_shards(config)
    if pending := ShardStore(run).pending(shards):
        seeds = sum(len(shard.spec["seeds"]) for shard in pending)
        log(f"training {seeds} seeds on {config.train_size:,} examples "
            f"({len(pending)} stacked model{'s' * (len(pending) > 1)})")  # fmt: skip
    executor = executor or LocalExecutor()
    with _relayed(on_progress, executor) as progress:
        run_stage(run, TrainTask(config, device, progress), shards, executor)
    suites = [predict_shard(suite, data[suite].src, config.seeds) for suite in SUITES]
    if pending := ShardStore(run).pending(suites):
        log(f"evaluating {', '.join(shard.key for shard in pending)}")
    run_stage(run, PredictTask(run, config, device), suites, executor)
    if stale := incomplete_suites(write_metrics(run)):
        log(f"{', '.join(stale)}: evaluated before the run grew; run `evaluate --src` again")
    return run


@contextmanager
def _relayed(on_progress: OnProgress | None, executor: Executor) -> Iterator[Any]:
    """A queue (the executor's channel) that shards put `(shard, Progress)` on wherever they
    run; a thread here hands each item to `on_progress`. None when there is nobody to tell."""
    if on_progress is None:
        yield None
        return
    with executor.channel() as queue:

        def relay() -> None:
            while (item := queue.get()) is not None:
                on_progress(*item)

        thread = threading.Thread(target=relay, daemon=True)
        thread.start()
        try:
            yield queue
        finally:
            queue.put(None)
            thread.join()


def evaluate_external(
    run: str | Path,
    src_path: str | Path,
    name: str | None = None,
    device: str = "cpu",
    executor: Executor | None = None,
) -> Path:
    """Decode the inputs of `src_path` (a .src or .tsv file) with every member of a trained run
    and add them to its results as the suite `name` (default: the file's stem).

    Raises:
        ConfigError: a bad name (or one of the study's own suites) or device.
        DataFormatError: a malformed input file.
        RunDirError: not a sweep's run directory, or its training has not finished.
    """
    check_device(device)
    run = Path(run).absolute()
    stored = read_config(run)
    if stored.get("kind") != KIND:
        raise RunDirError(f"{run} holds a {stored.get('kind')} run, not a {KIND}")
    config = SweepConfig.from_dict(stored["config"])
    name = name or Path(src_path).stem
    if not SUITE_NAME.match(name):
        raise ConfigError("name", "letters, digits, '_', '-' or '.' (at most 64)", name)
    if name in SUITES:
        raise ConfigError("name", f"a name other than the study's suites {SUITES}", name)
    shard = predict_shard(name, read_inputs(src_path, config.grammar), config.seeds)
    run_stage(run, PredictTask(run, config, device), [shard], executor)
    write_metrics(run)
    return run / prediction_path(name)
