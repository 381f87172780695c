"""A sweep's results, read only from the files its shards recorded, and `metrics.json`.

Predictions and training summaries are found through the shard manifests, so a file that no
finished shard lists is never counted; `metrics.json` is the driver's own shard, checked when
it is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.analysis.judged import from_predictions
from genprobe.analysis.rates import accuracy
from genprobe.errors import RunDirError
from genprobe.runs.rundir import read_config
from genprobe.runs.shards import Shard, ShardStore, json_bytes, parquet_bytes
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.studies.seed_sensitivity.study import (
    DATA,
    LANGUAGE_MODEL,
    METRICS,
    METRICS_FILE,
    PREDICT,
    SEED_SENSITIVITY,
    TRAIN,
)
from genprobe.tasks.files import read_examples
from genprobe.tasks.lines import json_lines
from genprobe.tasks.task import Task
from genprobe.tasks.tokens import encode_inputs

ROLES_FILE = "data/roles.json"  # per role of the study's data: split, examples, lengths
TRAINING_FILE = "data/train.jsonl"  # the examples every seed trained on (of subsets: drew from)
SUBSETS = "subsets"  # a train shard's folder of its members' training examples


def read_sweep(run: str | Path) -> SweepConfig:
    """The config of a sweep's run directory.

    Raises:
        RunDirError: no config.json, or a run of another study.
    """
    return SweepConfig.from_identity(SEED_SENSITIVITY.recorded(run)["config"])


def read_members(run: str | Path) -> SweepConfig | LanguageModelConfig:
    """The config of a run whose members the study reports: a sweep's (its seeds), or a
    language model's (its ways of asking, `language_model.py`).

    Raises:
        RunDirError: no config.json, or a run of another study.
    """
    if _of_language_model(run):
        return LanguageModelConfig.from_identity(LANGUAGE_MODEL.recorded(run)["config"])
    return read_sweep(run)


def read_config_hash(run: str | Path) -> str:
    """The hash of the config the run was made with (a sweep's or a language model's)."""
    study = LANGUAGE_MODEL if _of_language_model(run) else SEED_SENSITIVITY
    return study.recorded(run)["hash"]


def _of_language_model(run: str | Path) -> bool:
    return read_config(run).get("kind") in LANGUAGE_MODEL.kinds


def member_labels(config: SweepConfig | LanguageModelConfig) -> dict[int, str]:
    """Each member's label by its number (`seed`), as the probe and the search name a run's
    members: a sweep's "seed=3", a language model's "format=1 draw=0"."""
    if isinstance(config, LanguageModelConfig):
        return {seed: cell.label() for seed, cell in zip(config.seeds, config.cells(), strict=True)}
    return {seed: f"seed={seed}" for seed in config.seeds}


def read_model_notes(run: str | Path) -> dict[str, Any] | None:
    """What was measured of the model before the run trained (`model_check.members_alone`);
    None for runs made before it was measured."""
    return SEED_SENSITIVITY.recorded(run).get("provenance", {}).get("model")


def read_predictions(
    run: str | Path, config: SweepConfig | LanguageModelConfig | None = None
) -> pd.DataFrame:
    """Every recorded prediction, as judged outputs (`analysis.judged`; `predict.predictions`
    describes the rows): the files of runs made before the schema (`valid`, no `role`) read
    through `judged.from_predictions`, beside any a resumed run wrote since.

    Raises:
        RunDirError: no suite has been evaluated yet.
        DamagedFileError: a recorded predictions file is missing or damaged.
    """
    files = ShardStore(run).outputs(PREDICT)
    if not files:
        raise RunDirError(f"{run} has no predictions yet")
    config = config or read_members(run)
    frames = [pd.read_parquet(f) for f in files]
    return pd.concat([_judged(frame, config, run) for frame in frames], ignore_index=True)


def _judged(
    frame: pd.DataFrame, config: SweepConfig | LanguageModelConfig, run: str | Path
) -> pd.DataFrame:
    """A predictions file's rows as judged outputs, those of runs made before the schema (and
    before per-length reports: no `length`) converted."""
    if "valid" not in frame:
        return frame
    if "length" not in frame:
        task = config.task
        rows = [(None, line.split()) for line in frame["input"]]
        length = task.length(encode_inputs(task.source_vocab, rows, run))
        frame.insert(frame.columns.get_loc("valid") + 1, "length", length)
    return from_predictions(frame, member_labels(config))


def trained_lengths(run: str | Path) -> tuple[int, int] | None:
    """The shortest and longest training example (the task's length); None for runs made
    before it was recorded."""
    path = ShardStore(run).file(DATA, ROLES_FILE)
    if path is None:
        return None
    low, high = json.loads(path.read_text(encoding="utf-8"))["train"]["lengths"]
    return low, high


def training_inputs(run: str | Path, task: Task) -> np.ndarray | None:
    """(n, L) the inputs every seed of the sweep trained on; None where the run kept none.

    Raises:
        DamagedFileError: the training file is not the one the run recorded.
        DataFormatError: it cannot be read (a run made before data was recorded).
    """
    path = ShardStore(run).file(DATA, TRAINING_FILE)
    return None if path is None else read_examples(path, task, outputs=False).src


def training_pairs(run: str | Path) -> list[tuple[str, str]]:
    """Each training example's input and the output it was trained on (`data/train.jsonl`'s),
    in order, tokens separated by one space: in a user's data an output may differ from what
    the task's rule makes of its input.

    Raises:
        RunDirError: the run kept no training examples (made before they were recorded).
        DamagedFileError: the training file is not the one the run recorded.
    """
    path = ShardStore(run).required(DATA, TRAINING_FILE, "run the sweep again to record it")
    return [
        (" ".join(str(row["input"]).split()), " ".join(str(row["output"]).split()))
        for _, row in json_lines(path, objects=True)
    ]


def read_training(run: str | Path) -> dict[str, Any]:
    """Per seed (as a string): epochs, best epoch, validation accuracy per epoch, the step its
    training loss went NaN or inf (`diverged`, absent from older runs)."""
    summaries: dict[str, Any] = {}
    for path in ShardStore(run).outputs(TRAIN, ".json"):
        summaries.update(json.loads(path.read_text(encoding="utf-8")))
    return summaries


def subset_path(shard: Shard) -> str:
    return f"{SUBSETS}/{shard.key}.parquet"


def subset_bytes(subsets: dict[int, np.ndarray], examples: int) -> bytes:
    """Which of the `examples` training examples each member (seed → its example indices)
    trained on, as a train shard's file: per seed, its row of the matrix as packed bits."""
    rows = []
    for seed, indices in subsets.items():
        trained = np.zeros(examples, dtype=bool)
        trained[indices] = True
        rows.append({"seed": seed, "examples": examples, "trained": np.packbits(trained).tobytes()})
    return parquet_bytes(pd.DataFrame(rows))


def read_subsets(run: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Which training examples each member trained on, with subsets (`--subsets`): the seeds
    (S,), ascending, and (S, N) bool, row k member k's, column i training example i (of
    `data/train.jsonl`).

    Raises:
        RunDirError: the run trained no member on a subset (or its training has not
            finished).
        DamagedFileError: a subsets file (or its shard's manifest) is missing or damaged.
    """
    files = [f for f in ShardStore(run).outputs(TRAIN, ".parquet") if f.parent.name == SUBSETS]
    if not files:
        raise RunDirError(
            f"{Path(run).absolute()} has no subsets: its members did not train on subsets of "
            "the training split (--subsets), or its training has not finished"
        )
    table = pd.concat([pd.read_parquet(f) for f in files]).sort_values("seed")
    trained = [
        np.unpackbits(np.frombuffer(row.trained, np.uint8), count=row.examples).astype(bool)
        for row in table.itertuples()
    ]
    return table["seed"].to_numpy(), np.stack(trained)


TOKEN_ACCURACY = "token_accuracy"  # the predictions' column of per-token scores, if any


def accuracy_by(predictions: pd.DataFrame, by: str, suites: tuple[str, ...] = ()) -> pd.DataFrame:
    """Accuracy (`analysis.rates.accuracy`) per seed (rows, ascending) and suite (columns:
    `suites` first, in order, then others by name) or example `length` (ascending), in [0, 1]:
    what metrics.json records and the report summarizes."""
    table = accuracy(predictions, ["seed", by]).unstack(by).sort_index().sort_index(axis=1)
    return suites_first(table, suites) if by == "suite" else table


def token_accuracy_by(
    predictions: pd.DataFrame, by: str, suites: tuple[str, ...] = ()
) -> pd.DataFrame:
    """As `accuracy_by`, the mean per-token score (`token_accuracy`) in [0, 1]."""
    table = predictions.groupby(["seed", by])[TOKEN_ACCURACY].mean().unstack(by)
    return suites_first(table, suites) if by == "suite" else table


def suites_first(table: pd.DataFrame, suites: tuple[str, ...]) -> pd.DataFrame:
    """`table`'s columns (suites) with `suites` first, in order, then the others by name."""
    own = [suite for suite in suites if suite in table.columns]
    return table[own + sorted(set(table.columns) - set(own))]


def write_metrics(run: str | Path) -> dict[str, Any]:
    """Per-seed accuracy on every evaluated suite plus the training summary (none for a
    language model) → metrics.json, kept as the run's metrics shard (`read_metrics` reads
    it)."""
    run = Path(run)
    config = read_members(run)
    predictions = read_predictions(run, config)
    right = accuracy_by(predictions, "suite", config.task.suites())
    training = read_training(run)
    per_seed = {
        str(seed): {
            "accuracy": {suite: float(value) for suite, value in row.dropna().items()},
            "training": training.get(str(seed)),
        }
        for seed, row in right.iterrows()
    }
    if TOKEN_ACCURACY in predictions:
        tokens = token_accuracy_by(predictions, "suite", config.task.suites())
        for seed, row in tokens.iterrows():
            per_seed[str(seed)][TOKEN_ACCURACY] = {s: float(v) for s, v in row.dropna().items()}
    n_examples = predictions.groupby("suite")["index"].nunique()
    metrics = {
        "suites": list(right.columns),
        "n_examples": n_examples.to_dict(),
        "seeds": per_seed,
    }
    ShardStore(run).keep(Shard(METRICS, "all"), {METRICS_FILE: json_bytes(metrics)})
    return metrics


def read_metrics(run: str | Path) -> dict[str, Any]:
    """What `write_metrics` last wrote.

    Raises:
        RunDirError: the run has none yet.
        DamagedFileError: `metrics.json` is not the one the run recorded.
    """
    path = ShardStore(run).required(METRICS, METRICS_FILE, "run the command that made it")
    return json.loads(path.read_text(encoding="utf-8"))


def incomplete_suites(metrics: dict[str, Any]) -> list[str]:
    """The suites some seed has no accuracy on (added with `evaluate --src` before the run grew
    by more seeds)."""
    seeds = metrics["seeds"].values()
    return [suite for suite in metrics["suites"] if any(suite not in s["accuracy"] for s in seeds)]


DEVICE_FACTS = ("device", "gpu", "torch_threads", "cpu", "kernels", "host")


def shard_devices(run: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Where each finished shard ran, as its manifest records it (device, GPU name on CUDA,
    torch threads, host): the training shards', then the prediction shards'."""
    store = ShardStore(run)

    def facts(stage: str) -> list[dict[str, Any]]:
        return [{k: m[k] for k in DEVICE_FACTS if k in m} for m in store.manifests(stage)]

    return facts(TRAIN), facts(PREDICT)
