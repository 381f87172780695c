"""A brittleness run, end to end (Welleck et al. 2022, sections 3.1, 4, 5 and 6).

    training what the model was trained on, as far as the suites use it (training.json: its
             training max_ops and data, read from the model or given, and where from; the
             data's positive integers per coefficient range of Figure 2)
    suites   build the suite tables that need no model (suites/<name>.parquet), or take them
             from the suite cache, where a run with the same suite settings left them
    solve    decode top-k and verify, shard by shard (results/<suite>/<chunk>.parquet)
    suites   build the suites made of the problems the model solved (validation primitives
             perturbed, sums of solved primitives), then solve them
    budget   with a search budget B: beam B and B samples per temperature on the
             k1*{exp,sin,cos,tan}(k2*x) problems, every distinct candidate verified

The files the run reads (the validation file, the training data) are read once before its
directory is made (`read_inputs`): one it cannot use is refused with nothing written, so the
corrected file (another digest in `config.json`) is not refused as another run's.

The run writes result files only; `report.write_report` reads them (through `results.py`).

Every stage is a list of shards run by `run_stage`: a killed run, rerun with the same command,
skips what is done and ends with the results of an uninterrupted one (verification and
generation timeouts aside, which depend on the machine's load).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.errors import ConfigError
from genprobe.runs.cpus import usable_cpus
from genprobe.runs.executor import Executor, LocalExecutor, Stage, relayed, run_stage
from genprobe.runs.rundir import open_run
from genprobe.runs.shards import Outputs, Shard, ShardStore, json_bytes, parquet_bytes
from genprobe.studies.brittleness import budget, solve
from genprobe.studies.brittleness.config import BrittlenessConfig
from genprobe.studies.brittleness.results import read_results, read_suites
from genprobe.studies.brittleness.study import BRITTLENESS, SOLVE, SUITE, TRAINING
from genprobe.studies.brittleness.suite_cache import SuiteCache
from genprobe.studies.brittleness.training import Training, trained_on
from genprobe.tasks.integration.integer_counts import count_integers
from genprobe.tasks.integration.prefix import from_prefix, to_prefix
from genprobe.tasks.integration.suites import (
    DERIVED,
    VALID,
    Primitive,
    SuiteRequest,
    build_suite,
    dataset_primitives,
    derived_suite,
    solved_families,
    solved_primitives,
    validation_candidates,
)
from genprobe.tasks.integration.suites.operators import PAPER_MAX_OPS
from genprobe.tasks.integration.suites.simple import RANGES, range_label
from genprobe.tasks.integration.verifier import VerifierConfig
from genprobe.tasks.verdict import TimeoutPolicy
from genprobe.under_test.settings import sent_to_workers

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


def run_brittleness(
    config: BrittlenessConfig,
    out: str | Path,
    log: Log = lambda message: None,
    executor: Executor | None = None,
) -> Path:
    """Run (or resume) the whole study in `out`; returns the run directory, ready for
    `report.write_report`."""
    config, training = _with_training(config.validated(), log)
    read_inputs(config, training)
    run = open_run(out, BRITTLENESS.kind, config, starts=config.model.check)
    config = sent_to_workers(config)
    run_stage(run, TrainingStage(), [Shard(TRAINING, "training", asdict(training))], executor)
    base = base_suites(config)
    _build_base_suites(run, config, base, log, executor)
    _solve(run, config, base, log, executor)
    wanted = [name for name in DERIVED if name in config.suites]
    solved = _solved_frame(run) if wanted else None
    derived = [
        shard for name in wanted
        if (shard := _derived_shard(solved, config, name, log)) is not None
    ]  # fmt: skip
    if derived:
        log(f"building {', '.join(s.key for s in derived)} from the solved problems")
        run_stage(run, SuiteStage(config), derived, executor)
        _solve(run, config, [s.key for s in derived], log, executor)
    if config.search_budget is not None:
        shards = budget.shards(read_suites(run))
        log(f"search budget {config.search_budget}: {len(shards)} shards")
        run_stage(
            run, budget.BudgetStage(config.model, _verifier(config), config), shards, executor
        )
    return run


def base_suites(config: BrittlenessConfig) -> list[str]:
    """The suites built before any model call: those asked for, and what the derived suites
    and the search budget are made from."""
    names = [s for s in config.suites if s not in DERIVED]
    if "compositionality" in config.suites or config.search_budget is not None:
        names.append("robustness-simple")
    if config.validation is not None and set(DERIVED) & set(config.suites):
        names.append("validation-primitives")
    return list(dict.fromkeys(names))


def read_inputs(config: BrittlenessConfig, training: Training) -> None:
    """Read every file the run will read, as its stages will read it.

    Raises:
        DataFormatError: a malformed file, or one with no row to use (`lines.some_rows`).
    """
    base = base_suites(config)
    for suite, read in (
        ("in-distribution", dataset_primitives),
        ("validation-primitives", validation_candidates),
    ):
        if suite in base:
            read(config.validation, config.split)
    if training.data is not None:
        count_integers(training.data, RANGES)


def _with_training(config: BrittlenessConfig, log: Log) -> tuple[BrittlenessConfig, Training]:
    """The config with what its suites take from the model's training read from the model
    where no option gives it (`training.trained_on`), and the record of what they use (the
    training data's integers are counted only for Figure 2) and where each came from."""
    ran = set(base_suites(config))
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


def _verifier(config: BrittlenessConfig) -> VerifierConfig:
    return VerifierConfig(
        deadline=config.deadline, policy=TimeoutPolicy(config.policy), workers=config.workers
    )


def _solve(
    run: Path, config: BrittlenessConfig, names: Iterable[str], log: Log, executor: Executor | None
) -> None:
    suites = read_suites(run)
    shards = []
    for name in names:
        table = suites[suites["suite"] == name]
        records = table[["row", "problem", "reference"]].to_dict("records")
        for chunk, start in enumerate(range(0, len(records), config.shard_size)):
            rows = records[start : start + config.shard_size]
            spec = solve.shard_spec(name, chunk, rows)
            shards.append(Shard(SOLVE, f"{name}.{chunk:05d}", spec))
    log(f"solving {sum(len(s.spec['rows']) for s in shards)} problems in {len(shards)} shards")
    if not ShardStore(run).pending(shards):
        return  # solved before: no channel to open, no worker to start
    executor = executor or LocalExecutor()
    with relayed(executor, log) as notes:  # each worker's decode/verify schedule, once chosen
        task = solve.SolveStage(
            config.model, _verifier(config), config.k_max, score_references=True,
            overlap=config.overlap, notes=notes,
        )  # fmt: skip
        run_stage(run, task, shards, executor)


# -- building suites -------------------------------------------------------------------


def _build_base_suites(
    run: Path, config: BrittlenessConfig, names: list[str], log: Log, executor: Executor | None
) -> None:
    """Build the suites that need no model; with a suite cache, take those it holds from it
    and keep those built in it."""
    shards = [_build_shard(config, name) for name in names]
    cache = None if config.suite_cache is None else SuiteCache(config.suite_cache, log)
    restored = set()
    if cache is not None:
        pending = ShardStore(run).pending(shards)
        restored = {s.key for s in pending if cache.restore(run, s, _request(config, s))}
    if building := [name for name in names if name not in restored]:
        log(f"building {', '.join(building)}")
    keep = None if cache is None else lambda s: cache.keep(run, s, _request(config, s))
    run_stage(run, SuiteStage(config), shards, executor, on_done=keep)


def _build_shard(config: BrittlenessConfig, name: str) -> Shard:
    return Shard(SUITE, name, {"suite": name, "n": config.sizes.get(name)})


def _request(config: BrittlenessConfig, shard: Shard) -> SuiteRequest:
    """What the suite of a build shard that needs no model is made from."""
    return SuiteRequest(
        n=shard.spec["n"],
        seed=config.seed,
        validation=None if config.validation is None else Path(config.validation),
        method=config.method,
        workers=config.workers or usable_cpus(),
        train_max_ops=config.max_ops,
        split=config.split,
    )


def _derived_shard(
    solved: pd.DataFrame, config: BrittlenessConfig, name: str, log: Log
) -> Shard | None:
    """A derived suite's build shard, its solved primitives carried as data; None (with a
    log line) when there are none to build from. Few solved primitives give fewer problems
    than N (all distinct sums, all coefficients), not an error."""
    if name == "robustness-validation":
        families = {VALID: solved_primitives(solved, {"valid_primitive"}, config.solved_by)}
        if not families[VALID]:
            log("robustness-validation: no validation primitive was solved; skipped")
            return None
    else:
        try:
            families = solved_families(solved, config.solved_by)
        except ConfigError as error:  # no family has a solved primitive
            log(f"compositionality: skipped ({error})")
            return None
    spec = {
        "suite": name,
        "n": config.sizes.get(name),
        "primitives": {
            family: [_primitive_record(p) for p in ps] for family, ps in families.items()
        },
    }
    return Shard(SUITE, name, spec)


def _solved_frame(run: Path) -> pd.DataFrame:
    """Results with the columns `solved_primitives` reads, indexed by suite row."""
    results = read_results(run)
    suites = read_suites(run)
    ranks = results[["suite", "row", "first_correct_rank", "first_generous_rank"]]
    frame = suites.merge(ranks, on=["suite", "row"])
    frame.index = frame["row"]
    return frame


def _primitive_record(primitive: Primitive) -> list[Any]:
    reference = None if primitive.reference is None else " ".join(to_prefix(primitive.reference))
    return [" ".join(to_prefix(primitive.problem)), reference, primitive.row]


def _primitive(record: list[Any]) -> Primitive:
    problem, reference, row = record
    return Primitive(
        from_prefix(problem.split()),
        None if reference is None else from_prefix(reference.split()),
        int(row),
    )


@dataclass(frozen=True)
class SuiteStage(Stage):
    """Builds one suite table per shard (no model needed)."""

    config: BrittlenessConfig

    def run(self, context: None, shard: Shard, scratch: Path) -> Outputs:
        spec, config = shard.spec, self.config
        name, n = spec["suite"], spec["n"]
        notes: tuple[str, ...] = ()
        if "primitives" in spec:
            families = {f: [_primitive(r) for r in rs] for f, rs in spec["primitives"].items()}
            frame = derived_suite(name, families, n, config.seed, exact=False)
        else:
            built = build_suite(name, _request(config, shard))
            frame, notes = built.frame, built.notes
        return {
            f"suites/{name}.parquet": parquet_bytes(frame),
            f"suites/{name}.notes.json": json_bytes(list(notes)),
        }

    def runtime(self) -> dict[str, Any]:
        return {"source": "built"}  # not taken from the suite cache


@dataclass(frozen=True)
class TrainingStage(Stage):
    """Records what the model was trained on (the shard's spec, a `Training`) in training.json,
    with the positive integers of its training data per coefficient range of Figure 2."""

    def run(self, context: None, shard: Shard, scratch: Path) -> Outputs:
        record = dict(shard.spec)
        if record["data"] is not None:
            counts = count_integers(record["data"], RANGES)
            in_range = zip(map(range_label, RANGES), counts.in_range, strict=True)
            record["integers"] = {"total": counts.total, "in_range": dict(in_range)}
        return {"training.json": json_bytes(record)}
