"""Reading a brittleness run's result files: its recorded config, its examples (one row per
problem: its suite's metadata, the model's candidates and their verdicts) and the search
budget's rows.

A run is a preset of the probe (`preset.py`): its rows are the probe's (`studies/probe/
results.py`), read as the study's examples here (`probe_examples`). A run made before holds
suite tables (`suites/<name>.parquet`) and solve shards (`results/<suite>/<chunk>.parquet`, of
`RESULT_SCHEMA`), read as they are. Shard files are found through their manifests and checked
against their sha256 (`ShardStore.outputs`): a damaged or missing one is a `DamagedFileError`
naming it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from genprobe.errors import GenprobeError, RunDirError
from genprobe.runs.pool import DeadlineCounts
from genprobe.runs.provenance import config_hash
from genprobe.runs.rundir import read_config
from genprobe.runs.shards import MANIFESTS, ShardStore
from genprobe.studies.brittleness.study import (
    BRITTLENESS,
    BUDGET,
    SOLVE,
    SUITE,
    TRAINING,
    TRAINING_FILE,
)
from genprobe.studies.probe.decode import MODEL_DEADLINES
from genprobe.studies.probe.study import DECODE, SUITES
from genprobe.studies.probe.suites import SUITES_FILE
from genprobe.tasks.integration.suites.simple import COEFF1_TEMPLATES, SIMPLE_SETS
from genprobe.tasks.integration.suites.table import suite_frame
from genprobe.tasks.verdict import Outcome

# the solve shards' rows of runs made before the preset: one per problem
CANDIDATE = pa.struct(
    [
        ("rank", pa.int32()),
        ("answer", pa.string()),
        ("parsed", pa.bool_()),
        ("score", pa.float64()),
        ("logprob", pa.float64()),
        ("outcome", pa.string()),
        ("method", pa.string()),
        ("seconds", pa.float64()),
    ]
)
RESULT_SCHEMA = pa.schema(
    [
        ("suite", pa.string()),
        ("row", pa.int64()),
        ("problem", pa.string()),
        ("reference", pa.string()),
        ("readable", pa.bool_()),
        ("n_candidates", pa.int32()),
        ("first_correct_rank", pa.int32()),
        ("first_generous_rank", pa.int32()),
        ("reference_logprob", pa.float64()),
        ("candidates", pa.list_(CANDIDATE)),
    ]
)
BUDGET_COLUMNS = ("suite", "row", "decoding", "rank", "answer", "logprob", "outcome", "method")
SUM_SET = r"^(?P<set>.+) k=(?P<k>\d+)$"  # the probe's set of a sum of k solved problems
PASSING_GENEROUS = (Outcome.CORRECT.value, Outcome.TIMEOUT.value)


def read_recorded(run: str | Path) -> dict[str, Any]:
    """The run's `config.json`: its kind, config hash and config.

    Raises:
        RunDirError: no config.json, or a run of another study.
    """
    return BRITTLENESS.recorded(run)


def read_suites(run: str | Path) -> pd.DataFrame:
    """Every suite table of the run, with `row`: the problem's position in its suite."""
    files = _recorded(run, SUITE)
    frames = []
    for file in files:
        frame = suite_frame(pd.read_parquet(file).to_dict("records"))
        frame.insert(0, "row", range(len(frame)))
        frames.append(frame)
    if not frames:
        raise RunDirError(f"{run} has no suites yet: run the study")
    return pd.concat(frames, ignore_index=True)


def read_results(run: str | Path) -> pd.DataFrame:
    """Every solved shard's rows; ranks as nullable integers."""
    files = _recorded(run, SOLVE)
    if not files:
        raise RunDirError(f"{run} has no results yet: run the study")
    table = pa.concat_tables([pq.read_table(file, schema=RESULT_SCHEMA) for file in files])
    frame = table.to_pandas()
    for column in ("first_correct_rank", "first_generous_rank", "n_candidates"):
        frame[column] = frame[column].astype("Int64")
    return frame


def read_model_deadlines(run: str | Path) -> DeadlineCounts | None:
    """The model's own deadline hits over every solved shard (`sympy`), None for a model
    without a deadline."""
    total = None
    files = ShardStore(run).outputs(DECODE, ".parquet") if as_probe(run) else _recorded(run, SOLVE)
    for file in files:
        recorded = (pq.read_schema(file).metadata or {}).get(MODEL_DEADLINES.encode())
        if recorded is not None:
            total = (total or DeadlineCounts()) + DeadlineCounts(**json.loads(recorded))
    return total


def read_examples(run: str | Path) -> pd.DataFrame:
    """One row per problem solved: suite, row, problem, reference, readable, n_candidates,
    first_correct_rank and first_generous_rank (1-based, or null), reference_logprob, the
    candidates (a list of {rank, answer, parsed, score, logprob, outcome, method, seconds}) and
    the suite's metadata (set, template, coeff_range, k, ...).

    Raises:
        RunDirError: not a brittleness run, or nothing solved yet.
    """
    if as_probe(run):
        return probe_examples(run)
    suites = read_suites(run).drop(columns=["problem", "reference"])
    return read_results(run).merge(suites, on=["suite", "row"], how="left", validate="1:1")


def as_probe(run: str | Path) -> bool:
    """Whether the run is a preset of the probe (else made before it: its own layout)."""
    return (Path(run) / SUITES_FILE).exists() or (Path(run) / MANIFESTS / SUITES).is_dir()


def probe_examples(run: str | Path) -> pd.DataFrame:
    """The examples of a run made as a probe (`read_examples`), from the probe's rows: each
    suite by the study's name, each candidate as the model gave it (`parsed`: whether it spells
    an expression of the task's tokens; an empty answer without a log-probability is none: one
    the model did not give, fewer than k or none within its deadline), the reference's
    log-probability scored for every problem (the study scored those not solved at rank 1).
    Not recorded by the probe: a candidate's beam score, and the method and seconds of its
    verdict (null)."""
    from genprobe.studies.probe.results import read_results as probe_rows

    rows = probe_rows(run).reset_index(drop=True)
    if "candidates" not in rows:  # k = 1: the answer is the one candidate
        rows["candidates"] = rows["output"].map(lambda text: [text])
        rows["candidate_completions"] = rows["completion"].map(lambda text: [text])
        rows["candidate_outcomes"] = rows["outcome"].map(lambda outcome: [outcome])
        rows["candidate_logprobs"] = rows["output_logprob"].map(lambda logprob: [logprob])
    lists = zip(
        rows["candidates"], rows["candidate_completions"], rows["candidate_outcomes"],
        rows["candidate_logprobs"], strict=True,
    )  # fmt: skip
    # a candidate the model did not give (fewer than k, none within its deadline: no answer,
    # no log-probability) is none
    given = [
        [c for c in _candidates(*ranked) if c["answer"] or c["logprob"] is not None]
        for ranked in lists
    ]
    frame = pd.DataFrame(
        {
            "suite": _study_suites(run, rows["suite"]),
            "row": rows["index"].astype("int64"),
            "problem": rows["input"],
            "reference": rows["reference"].where(rows["reference"].notna(), None),
            "readable": rows["readable"].astype(bool),
            "n_candidates": pd.array([len(c) for c in given], dtype="Int64"),
            "first_correct_rank": rows["first_correct"].astype("Int64"),
            "first_generous_rank": pd.array(
                [_first(c, PASSING_GENEROUS) for c in given], dtype="Int64"
            ),
            "reference_logprob": rows["gold_logprob"].astype(float),
            "candidates": given,
        }
    )
    for column in ("set", "template", "coeff_range"):
        frame[column] = rows[column].where(rows[column].notna() & (rows[column] != ""), None)
    # a sum's set names its terms ("comp_coeff k=2"): the study's set and k
    named = frame["set"].str.extract(SUM_SET)
    summed = named["k"].notna()
    frame.loc[summed, "set"] = named.loc[summed, "set"]
    frame["k"] = pd.array(named["k"].where(summed, None), dtype="Int64")
    # each suite's problems by set and template, as the study's suite tables held them (the
    # report's tables group them in the order they come): the simple primitives' sets and
    # templates in the study's order, others (operator counts, families) as they first come
    keys = [
        _ranks(frame["template"], COEFF1_TEMPLATES), _ranks(frame["set"], SIMPLE_SETS),
        _ranks(frame["suite"], ()),
    ]  # fmt: skip
    order = np.lexsort((frame["row"].to_numpy(), frame["k"].fillna(0).to_numpy(), *keys))
    return frame.iloc[order].reset_index(drop=True)


def _ranks(values: pd.Series, known: Sequence[str]) -> np.ndarray:
    """Each value's place: those of `known` in its order, then the others as they first come
    (null last)."""
    present = [v for v in values.unique() if v is not None and not pd.isna(v)]
    order = [v for v in known if v in present] + [v for v in present if v not in known]
    return pd.Categorical(values, categories=order).codes.astype(np.int64) % (len(order) + 1)


def _candidates(
    outputs: Sequence[str], answers: Sequence[str], outcomes: Sequence[Any], logprobs: Any
) -> list[dict[str, Any]]:
    """An input's candidates as the study's rows hold them (see `probe_examples`)."""
    return [
        {
            "rank": rank,
            "answer": answer,
            "parsed": bool(output),
            "score": None,
            "logprob": None if np.isnan(logprob) else float(logprob),
            "outcome": None if outcome is None else str(outcome),
            "method": None,
            "seconds": None,
        }
        for rank, (output, answer, outcome, logprob) in enumerate(
            zip(outputs, answers, outcomes, logprobs, strict=True), 1
        )
    ]


def _first(candidates: list[dict[str, Any]], passing: tuple[str, ...]) -> int | None:
    """The 1-based rank of the first candidate whose outcome is one of `passing`, or None."""
    return next((c["rank"] for c in candidates if c["outcome"] in passing), None)


def _study_suites(run: str | Path, keys: Sequence[str]) -> list[str]:
    """The study's name of each of a probe run's suites (`preset.study_suite`)."""
    from genprobe.studies.brittleness.config import BrittlenessConfig
    from genprobe.studies.brittleness.preset import model_free, study_suite

    base = model_free(BrittlenessConfig.from_identity(read_recorded(run)["config"]))[0]
    return [study_suite(key, base) for key in keys]


def read_training(run: str | Path) -> dict[str, Any]:
    """What the model was trained on and where each fact came from (`training.Training` as
    JSON); empty for a run made before the run recorded it.

    Raises:
        DamagedFileError: training.json is not the one its shard recorded.
    """
    path = ShardStore(run).file(TRAINING, TRAINING_FILE)
    return {} if path is None else json.loads(path.read_text(encoding="utf-8"))


def read_budget(run: str | Path) -> pd.DataFrame | None:
    """The search budget's rows (`--search-budget`): suite, row, decoding, rank, answer,
    logprob, outcome, method (null in a run made as a probe); None where none was run."""
    if as_probe(run):
        from genprobe.studies.probe.results import read_large_search

        rows = read_large_search(run)
        if rows is None:
            return None
        found = rows.assign(suite=_study_suites(run, rows["suite"]), row=rows["index"], method=None)
        return found[list(BUDGET_COLUMNS)].reset_index(drop=True)
    files = _recorded(run, BUDGET)
    if not files:
        return None
    return pd.concat([pd.read_parquet(file) for file in files], ignore_index=True)


def _recorded(run: str | Path, stage: str) -> list[Path]:
    """The Parquet files the shards of `stage` recorded, checked, in path order."""
    return sorted(ShardStore(run).outputs(stage, ".parquet"))


def made_before(run: str | Path, config: Any) -> bool:
    """Whether `run` holds a finished run of `config` (a `BrittlenessConfig`) made before the
    study ran as a probe: its solve shards and its summary, and no suite of the probe's."""
    run = Path(run)
    try:
        same = read_config(run).get("hash") == config_hash(config.identity())
    except (OSError, ValueError, GenprobeError):
        return False
    return (
        same
        and (run / "shards" / SOLVE).is_dir()
        and (run / "summary.json").is_file()
        and not (run / SUITES_FILE).exists()
    )
