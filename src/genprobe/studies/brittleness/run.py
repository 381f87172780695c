"""A brittleness run, end to end (Welleck et al. 2022, sections 3.1, 4, 5 and 6): a preset of the
probe (`preset.py`), in a run that records the study's config.

    training what the model was trained on, as far as the suites use it (training.json: its
             training max_ops and data, read from the model or given, and where from; the
             data's positive integers per coefficient range of Figure 2)
    probe    `run_probe` with `preset.as_probe`'s settings: the suites that need no model (the
             integration task's splits), decoded top-k and verified; the suites made of the
             problems the model solved (validation primitives perturbed, sums of solved
             primitives), then decoded; with a search budget B, beam B and B samples per
             temperature on the k1*{exp,sin,cos,tan}(k2*x) problems, every distinct candidate
             verified (`studies/probe/run.py`)

The files the run reads (the validation file, the training data) are read before its
directory is made: one it cannot use is refused with nothing written, so the corrected file
(another digest in `config.json`) is not refused as another run's.

The run writes result files only; `report.write_report` reads them (through `results.py`,
which reads runs made before the preset, in their own layout, too: such a run, finished, is
only read again; one killed mid-way is finished in the probe's layout).

Every stage is a list of shards run by `run_stage`: a killed run, rerun with the same command,
skips what is done and ends with the results of an uninterrupted one (verification and
generation timeouts aside, which depend on the machine's load).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from genprobe.runs.driver import writes_runs
from genprobe.runs.executor import Executor, Stage, run_stage
from genprobe.runs.shards import Outputs, Shard, json_bytes
from genprobe.studies.brittleness.config import BrittlenessConfig
from genprobe.studies.brittleness.preset import as_probe, model_free
from genprobe.studies.brittleness.results import made_before
from genprobe.studies.brittleness.study import BRITTLENESS, TRAINING, TRAINING_FILE
from genprobe.studies.brittleness.training import Training, trained_on
from genprobe.studies.probe.run import run_probe
from genprobe.tasks.integration.integer_counts import count_integers
from genprobe.tasks.integration.suites.operators import PAPER_MAX_OPS
from genprobe.tasks.integration.suites.simple import RANGES, range_label

# what the suites take from the model's training (`training.Training`) -> the suites that use it
USES = {
    "max_ops": ("operator-extrapolation",),  # its sets
    "data": ("integer-extrapolation", "robustness-simple"),  # Figure 2's integer shares
}
# the log line of each, when known and when not
SAID = {
    "max_ops": (
        "operator-extrapolation: training max_ops {value} ({source})",
        f"operator-extrapolation: training max_ops not known ({{source}}): {PAPER_MAX_OPS} "
        "assumed; --train-max-ops sets it",
    ),
    "data": (
        "Figure 2: training data {value} ({source})",
        "Figure 2: training data not known ({source}): no integer shares; --train-data gives them",
    ),
}

Log = Callable[[str], None]


@writes_runs
def run_brittleness(
    config: BrittlenessConfig,
    out: str | Path,
    log: Log = lambda message: None,
    executor: Executor | None = None,
) -> Path:
    """Run (or resume) the whole study in `out`; returns the run directory, ready for
    `report.write_report`.

    Raises:
        ConfigError, DataFormatError, RunDirError: bad input, found before anything is written.
    """
    config, training = _with_training(config.validated(), log)
    if training.data is not None:
        count_integers(training.data, RANGES)  # a file it cannot use is refused here
    if made_before(out, config):
        log("a finished run made before the brittleness study ran as a probe: read as it is")
        return Path(out).absolute()
    run = run_probe(as_probe(config), out, executor, log, kind=BRITTLENESS.kind, recorded=config)
    run_stage(run, TrainingStage(), [Shard(TRAINING, "training", asdict(training))], executor)
    return run


def _with_training(config: BrittlenessConfig, log: Log) -> tuple[BrittlenessConfig, Training]:
    """The config with what its suites take from the model's training read from the model
    where no option gives it (`training.trained_on`), and the record of what they use (the
    training data's integers are counted only for Figure 2) and where each came from."""
    ran = set(model_free(config))
    used = [fact for fact, suites in USES.items() if ran & set(suites)]
    if not used:
        return config, Training()
    found = trained_on(config.model.spec, config.train_max_ops, config.train_data)
    values = {fact: getattr(found, fact) for fact in used}
    sources = {fact: found.sources[fact] for fact in used}
    for fact, value in values.items():
        known, unknown = SAID[fact]
        log((unknown if value is None else known).format(value=value, source=sources[fact]))
    changes = {f"train_{fact}": value for fact, value in values.items()}
    return replace(config, **changes), Training(**values, sources=sources)


@dataclass(frozen=True)
class TrainingStage(Stage):
    """Records what the model was trained on (the shard's spec, a `Training`) in training.json,
    with the positive integers of its training data per coefficient range of Figure 2."""

    def run(self, context: None, shard: Shard, scratch: Path) -> Outputs:
        record: dict[str, Any] = dict(shard.spec)
        if record["data"] is not None:
            counts = count_integers(record["data"], RANGES)
            in_range = zip(map(range_label, RANGES), counts.in_range, strict=True)
            record["integers"] = {"total": counts.total, "in_range": dict(in_range)}
        return {TRAINING_FILE: json_bytes(record)}
