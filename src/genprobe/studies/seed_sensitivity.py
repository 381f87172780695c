"""The seed-sensitivity study (Weber, Shekhar & Balasubramanian 2018), end to end.

data → S seeds trained as one stacked model → greedy decoding of every suite → validity rule →
`predictions/<suite>.parquet` → `metrics.json` → report. Every stage writes its outputs
atomically and is skipped when they exist, so rerunning the same command resumes a killed run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from genprobe.data.seq2seq import N_SPECIAL, decoded_outputs, encode
from genprobe.decoding.greedy import greedy
from genprobe.errors import ConfigError, RunDirError
from genprobe.models.lstm import LSTMConfig, StackedSeq2Seq
from genprobe.runs.atomic import atomic_path, write_json
from genprobe.runs.rundir import open_run, read_config
from genprobe.tasks.rewriting.formats import input_lines, output_lines, read_inputs, write_srctgt
from genprobe.tasks.rewriting.grammar import Grammar
from genprobe.tasks.rewriting.suites import TEST_SUITES, Examples, generate
from genprobe.tasks.rewriting.validity import valid_outputs
from genprobe.training.trainer import Progress, SweepTrainer, TrainConfig

KIND = "rewriting-sweep"
MEMBER_FORMAT = "genprobe.lstm-seq2seq/1"
SUITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class SweepConfig:
    seeds: tuple[int, ...]
    grammar: Grammar = field(default_factory=Grammar)
    data_seed: int = 0  # every split is drawn from this seed and its own name
    train_size: int = 100_000
    validation_size: int = 2_000
    suite_size: int = 2_000
    emb: int = 32
    hidden: int = 32
    dropout: float = 0.1
    init_range: float = 0.1
    train: TrainConfig = field(default_factory=TrainConfig)
    device: str = "cpu"
    eval_batch_size: int = 500  # examples decoded at once by all members

    def __post_init__(self) -> None:
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ConfigError("seeds", "a non-empty list of distinct integers", self.seeds)
        for name in (
            "train_size",
            "validation_size",
            "suite_size",
            "emb",
            "hidden",
            "eval_batch_size",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        if not 0 <= self.dropout < 1:
            raise ConfigError("dropout", "in [0, 1)", self.dropout)
        if not self.init_range > 0:
            raise ConfigError("init_range", "> 0", self.init_range)
        if self.device != "cpu" and not self.device.startswith("cuda"):
            raise ConfigError("device", "cpu, cuda or cuda:N", self.device)
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise ConfigError(
                "device", "a device that exists here (no CUDA GPU is visible)", self.device
            )

    def model_config(self) -> LSTMConfig:
        return LSTMConfig(
            src_vocab=self.grammar.n_symbols + 1,
            tgt_vocab=len(self.grammar.output_tokens) + N_SPECIAL,
            emb=self.emb,
            hidden=self.hidden,
            dropout=self.dropout,
            init_range=self.init_range,
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["seeds"] = list(self.seeds)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SweepConfig:
        d = dict(d)
        d["seeds"] = tuple(d["seeds"])
        d["grammar"] = Grammar(**d["grammar"])
        d["train"] = TrainConfig(**d["train"])
        return cls(**d)


Log = Callable[[str], None]


def run_sweep(
    config: SweepConfig,
    out: str | Path,
    on_progress: Callable[[Progress], None] | None = None,
    log: Log = lambda message: None,
) -> Path:
    """Run (or resume) the whole study in `out`; returns the run directory."""
    run = open_run(out, KIND, config.to_dict())
    data = build_data(config)
    for split, examples in data.items():
        if not (run / "data" / f"{split}.src").exists():
            write_srctgt(run / "data" / split, config.grammar, examples)
    if not _members_done(run, config):
        log(f"training {len(config.seeds)} seeds on {config.train_size:,} examples")
        _train(config, data, run, on_progress)
    model = load_members(run, config.device)
    for suite in TEST_SUITES:
        if not (run / "predictions" / f"{suite}.parquet").exists():
            log(f"evaluating {suite}")
            write_predictions(run, config, model, suite, data[suite].src)
    write_metrics(run)
    return run


def build_data(config: SweepConfig) -> dict[str, Examples]:
    sizes = {"train": config.train_size, "validation": config.validation_size}
    sizes.update(dict.fromkeys(TEST_SUITES, config.suite_size))
    return {
        split: generate(split, n, config.data_seed, config.grammar) for split, n in sizes.items()
    }


def _train(
    config: SweepConfig,
    data: dict[str, Examples],
    run: Path,
    on_progress: Callable[[Progress], None] | None,
) -> None:
    validation = data["validation"].src

    def validate(model: StackedSeq2Seq) -> np.ndarray:
        return decode_and_check(model, config, validation)[2].mean(axis=1)

    trainer = SweepTrainer(
        config.model_config(),
        config.train,
        config.seeds,
        encode(data["train"].src, data["train"].tgt),
        validate,
        device=config.device,
        checkpoint=run / "training" / "state.pt",
    )
    results = trainer.run(on_progress)
    for seed, result in results.items():
        with atomic_path(_member_path(run, seed)) as tmp:
            torch.save(
                {
                    "format": MEMBER_FORMAT,
                    "config": config.model_config().to_dict(),
                    "seed": seed,
                    "training": result.summary(),
                    "state": result.state,
                },
                tmp,
            )
    write_json(run / "training.json", {str(s): r.summary() for s, r in results.items()})
    (run / "training" / "state.pt").unlink(missing_ok=True)


def _member_path(run: Path, seed: int) -> Path:
    return run / "members" / f"seed={seed}.pt"


def _members_done(run: Path, config: SweepConfig) -> bool:
    return (run / "training.json").exists() and all(
        _member_path(run, s).exists() for s in config.seeds
    )


def load_members(run: str | Path, device: str = "cpu") -> StackedSeq2Seq:
    """Stack every member checkpoint of a run, in the order of the run's seeds."""
    run = Path(run)
    config = SweepConfig.from_dict(read_config(run)["config"])
    states = []
    for seed in config.seeds:
        path = _member_path(run, seed)
        try:
            checkpoint = torch.load(path, map_location=device, weights_only=True)
        except FileNotFoundError:
            raise RunDirError(f"{path} is missing: run the sweep to finish training") from None
        if checkpoint.get("format") != MEMBER_FORMAT:
            raise RunDirError(f"{path}: not a {MEMBER_FORMAT} checkpoint")
        states.append(checkpoint["state"])
    return StackedSeq2Seq.from_members(config.model_config(), states).to(device)


def decode_and_check(
    model: StackedSeq2Seq, config: SweepConfig, src: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy outputs of every member: ((S, N, M) token indices, (S, N) lengths, (S, N) valid)."""
    k = config.grammar.group_size
    device = next(model.parameters()).device
    chunks = []
    for start in range(0, len(src), config.eval_batch_size):
        part = src[start : start + config.eval_batch_size]
        tokens = greedy(model, torch.as_tensor(part, device=device), max_len=k * src.shape[1] + 1)
        chunks.append(tokens.cpu().numpy())
    out, length = decoded_outputs(np.concatenate(chunks, axis=1))
    members, n, width = out.shape
    valid = valid_outputs(
        config.grammar,
        np.tile(src, (members, 1)),
        out.reshape(members * n, width),
        length.reshape(-1),
    )
    return out, length, valid.reshape(members, n)


def write_predictions(
    run: Path, config: SweepConfig, model: StackedSeq2Seq, suite: str, src: np.ndarray
) -> Path:
    out, _, valid = decode_and_check(model, config, src)
    members, n, _ = out.shape
    inputs = input_lines(config.grammar, src)
    table = pd.DataFrame(
        {
            "seed": np.repeat(np.array(config.seeds), n),
            "suite": suite,
            "index": np.tile(np.arange(n), members),
            "input": inputs * members,
            "output": output_lines(config.grammar, out.reshape(members * n, -1)),
            "valid": valid.reshape(-1),
        }
    )
    path = run / "predictions" / f"{suite}.parquet"
    with atomic_path(path) as tmp:
        table.to_parquet(tmp, index=False)
    return path


def evaluate_external(run: str | Path, src_path: str | Path, name: str | None = None) -> Path:
    """Evaluate every member of a finished run on the inputs of `src_path` (a .src or .tsv file)."""
    run = Path(run)
    config = SweepConfig.from_dict(read_config(run)["config"])
    name = name or Path(src_path).stem
    if not SUITE_NAME.match(name):
        raise ConfigError("name", "letters, digits, '_', '-' or '.' (at most 64)", name)
    src = read_inputs(src_path, config.grammar)
    model = load_members(run, config.device)
    path = write_predictions(run, config, model, name, src)
    write_metrics(run)
    return path


def read_predictions(run: str | Path) -> pd.DataFrame:
    files = sorted((Path(run) / "predictions").glob("*.parquet"))
    if not files:
        raise RunDirError(f"{run} has no predictions yet")
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def write_metrics(run: Path) -> dict[str, Any]:
    """Per-seed accuracy on every evaluated suite plus the training summary → metrics.json."""
    predictions = read_predictions(run)
    accuracy = predictions.groupby(["seed", "suite"])["valid"].mean().unstack("suite")
    training = read_training(run)
    per_seed = {
        str(seed): {
            "accuracy": {s: float(v) for s, v in row.items()},
            "training": training.get(str(seed)),
        }
        for seed, row in accuracy.iterrows()
    }
    suites = [s for s in TEST_SUITES if s in accuracy.columns]
    suites += sorted(set(accuracy.columns) - set(suites))
    n_examples = predictions.groupby("suite")["index"].nunique()
    metrics = {"suites": suites, "n_examples": n_examples.to_dict(), "seeds": per_seed}
    write_json(run / "metrics.json", metrics)
    return metrics


def read_training(run: str | Path) -> dict[str, Any]:
    """Per seed (as a string): epochs, best epoch, validation accuracy per epoch."""
    path = Path(run) / "training.json"
    return json.loads(path.read_text()) if path.exists() else {}
