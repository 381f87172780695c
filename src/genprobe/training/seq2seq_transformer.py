"""Training the integration transformer on (integrand, primitive) prefix pairs.

AdamW with linear warm-up, gradient-norm clipping, bf16 (or fp16 with loss scaling) autocast on
GPU, batches of similar lengths, and one checkpoint per epoch: `model.pt` (the model, readable
as `ckpt:DIR`) and `state.pt` (optimizer, step, RNG) in the run directory, so an interrupted run
resumes where its last epoch ended. After every epoch, Fail@1 of greedy decoding on held-out
problems is measured with the verifier and appended to `metrics.jsonl`.

Sizes: `SMALL` trains on two CPU cores; `PAPER` is Lample & Charton's (dim 1024, 6 + 6 layers,
8 heads), for GPUs.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from genprobe.errors import ConfigError, DataFormatError, GenprobeError
from genprobe.models.adapters.seq2seq import DecodingConfig, Seq2SeqModel
from genprobe.models.checkpoints import load_transformer, save_transformer
from genprobe.models.inputs import read_input
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig
from genprobe.runs.atomic import atomic_path, write_text
from genprobe.tasks.integration.datasets import read_text_dataset
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.tasks.integration.vocab import EOS_INDEX, PAD_INDEX, encode_tokens
from genprobe.training.loss import token_cross_entropy

SMALL = TransformerConfig(dim=128, n_enc_layers=2, n_dec_layers=2, n_heads=4, max_positions=1024)
PAPER = TransformerConfig(dim=1024, n_enc_layers=6, n_dec_layers=6, n_heads=8)
SIZES = {"small": SMALL, "paper": PAPER}


@dataclass(frozen=True)
class TrainConfig:
    data: str  # L&C text (`count|input<TAB>output`), or JSONL/Parquet from `generate`
    size: str = "small"  # "small" or "paper"
    dropout: float = 0.0  # L&C trained without dropout
    lr: float = 5e-4
    warmup: int = 1000  # steps of linear warm-up
    weight_decay: float = 0.0
    batch_size: int = 64  # examples per step
    clip: float = 5.0  # gradient-norm clipping (L&C: 5)
    epochs: int = 10
    epoch_size: int | None = None  # examples per epoch [default: the whole training set]
    valid_size: int = 300  # held-out problems for Fail@1 (from the valid split, else train)
    verify_deadline: float = 2.0
    max_len: int = 256  # longest sequence kept for training and decoded in validation
    seed: int = 0
    device: str = "auto"  # auto: cuda when available
    extra: dict[str, Any] = field(default_factory=dict)  # free-form notes, kept in config.json

    def validated(self) -> TrainConfig:
        if self.size not in SIZES:
            raise ConfigError("size", f"one of {sorted(SIZES)}", self.size)
        for name in ("batch_size", "epochs", "valid_size", "max_len"):
            if getattr(self, name) < 1:
                raise ConfigError(name, "at least 1", getattr(self, name))
        if not self.lr > 0:
            raise ConfigError("lr", "a positive number", self.lr)
        return self

    def model_config(self) -> TransformerConfig:
        base = SIZES[self.size]
        return TransformerConfig(**{**base.to_dict(), "dropout": self.dropout})


@dataclass
class Pairs:
    """Encoded examples: source ids `<s> sub Y' f <s>` and target ids `F` (no EOS)."""

    src: list[np.ndarray]
    tgt: list[np.ndarray]
    problems: list[str]  # the input prefix text, for validation

    def __len__(self) -> int:
        return len(self.src)


def read_pairs(path: str | Path, split: str | None, max_len: int) -> Pairs:
    """Encode a dataset's rows (of `split` where the file has splits); rows longer than
    `max_len` tokens are left out.

    Raises:
        DataFormatError: a row with a token outside the vocabulary (file and line).
    """
    path = Path(path)
    rows = _rows(path, split)
    out = Pairs([], [], [])
    for line, problem, answer in rows:
        try:
            src = encode_tokens(["<s>", *problem.split(), "<s>"])
            tgt = encode_tokens(answer.split())
        except GenprobeError as error:
            raise DataFormatError(path, line, str(error)) from None
        if max(len(src), len(tgt) + 1) <= max_len:
            out.src.append(np.asarray(src, dtype=np.int64))
            out.tgt.append(np.asarray(tgt, dtype=np.int64))
            out.problems.append(problem)
    return out


def _rows(path: Path, split: str | None) -> list[tuple[int, str, str]]:
    if path.suffix in (".jsonl", ".parquet"):
        import pandas as pd

        try:
            frame = (
                pd.read_parquet(path)
                if path.suffix == ".parquet"
                else pd.read_json(path, lines=True)
            )
        except (OSError, ValueError) as error:
            raise DataFormatError(path, None, f"cannot read: {error}") from None
        if not {"input", "output"} <= set(frame.columns):
            raise DataFormatError(path, None, "expected 'input' and 'output' columns")
        if split is not None and "split" in frame:
            frame = frame[frame["split"] == split]
        return [
            (int(i) + 1, a, b)
            for i, a, b in zip(frame.index, frame["input"], frame["output"], strict=True)
        ]
    if split not in (None, "train"):
        return []  # L&C's text files hold one split each
    try:
        rows = read_text_dataset(path)
    except (OSError, UnicodeDecodeError) as error:
        raise DataFormatError(path, None, f"cannot read: {error}") from None
    return [(number, row.input, row.output) for number, row in enumerate(rows, start=1)]


def split_valid(
    train: Pairs, valid: Pairs, size: int, rng: np.random.Generator
) -> tuple[Pairs, Pairs]:
    """`size` validation pairs: from `valid` if it has any, else held out of `train`."""
    if len(valid):
        chosen = rng.permutation(len(valid))[:size]
        return train, Pairs(
            *([part[i] for i in chosen] for part in (valid.src, valid.tgt, valid.problems))
        )
    order = rng.permutation(len(train))
    held, kept = order[:size], order[size:]

    def take(index: np.ndarray) -> Pairs:
        return Pairs(*([part[i] for i in index] for part in (train.src, train.tgt, train.problems)))

    return take(kept), take(held)


def batches(pairs: Pairs, batch_size: int, n_examples: int, rng: np.random.Generator):
    """Shuffled batches of similar source length: (src, tgt_in, tgt_out) padded LongTensors."""
    order = rng.choice(len(pairs), size=n_examples, replace=n_examples > len(pairs))
    pool = batch_size * 50  # sort within pools of 50 batches: little padding, still shuffled
    chunks = []
    for start in range(0, len(order), pool):
        part = sorted(order[start : start + pool], key=lambda i: len(pairs.src[i]))
        chunks += [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
    for index in rng.permutation(len(chunks)):
        chosen = chunks[index]
        src = _pad([pairs.src[i] for i in chosen])
        tgt = [pairs.tgt[i] for i in chosen]
        tgt_in = _pad([np.concatenate([[EOS_INDEX], t]) for t in tgt])
        tgt_out = _pad([np.concatenate([t, [EOS_INDEX]]) for t in tgt])
        yield src, tgt_in, tgt_out


def _pad(rows: Sequence[np.ndarray]) -> torch.Tensor:
    width = max(len(r) for r in rows)
    out = np.full((len(rows), width), PAD_INDEX, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return torch.from_numpy(out)


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _autocast(device: torch.device) -> tuple[torch.dtype | None, bool]:
    """(autocast dtype or None, needs a grad scaler): bf16 where supported, else fp16."""
    if device.type != "cuda":
        return None, False
    if torch.cuda.is_bf16_supported():
        return torch.bfloat16, False
    return torch.float16, True


def fail_at_1(network: Seq2SeqTransformer, valid: Pairs, max_len: int, verifier: Verifier) -> float:
    """Share of validation problems whose greedy output the verifier does not pass."""
    model = Seq2SeqModel(
        network,
        DecodingConfig(method="greedy", max_len=max_len, batch_size=64),
        str(next(network.parameters()).device),
    )
    problems = [read_input(p) for p in valid.problems]
    found = model.candidates(problems, 1)
    pairs = [(p, c[0].answer) for p, c in zip(problems, found, strict=True) if c]
    passed = sum(v.passed for v in verifier.verify_many(pairs))
    return 1.0 - passed / len(problems)


class Trainer:
    """Trains in `out` (a run directory opened by the caller); resumes from `state.pt`."""

    def __init__(self, config: TrainConfig, out: Path) -> None:
        self.config = config.validated()
        self.out = out

    def run(
        self,
        on_step: Callable[[int, int, float], None] | None = None,
        on_epoch: Callable[[dict[str, Any]], None] | None = None,
        time_budget: float | None = None,
    ) -> list[dict[str, Any]]:
        """Train; `on_step(step_in_epoch, steps_in_epoch, loss)` and `on_epoch(metrics)` report
        progress. Stops after `time_budget` seconds of training (at a step boundary, then
        validates and saves). Returns every epoch's metrics, resumed ones included."""
        c = self.config
        device = _device(c.device)
        torch.manual_seed(c.seed)
        rng = np.random.default_rng(c.seed)
        train = read_pairs(c.data, "train", c.max_len)
        if not len(train):
            raise DataFormatError(c.data, None, "no training pairs (after the length limit)")
        train, valid = split_valid(train, read_pairs(c.data, "valid", c.max_len), c.valid_size, rng)
        network = Seq2SeqTransformer(c.model_config()).to(device)
        optimizer = torch.optim.AdamW(network.parameters(), lr=c.lr, weight_decay=c.weight_decay)
        dtype, scaled = _autocast(device)
        scaler = torch.amp.GradScaler("cuda", enabled=scaled)
        state_file, metrics_file = self.out / "state.pt", self.out / "metrics.jsonl"
        history: list[dict[str, Any]] = []
        step, start_epoch = 0, 0
        if state_file.exists():
            loaded, _ = load_transformer(self.out / "model.pt")
            network.load_state_dict(loaded.state_dict())
            state = torch.load(state_file, map_location=device, weights_only=True)
            optimizer.load_state_dict(state["optimizer"])
            step, start_epoch = int(state["step"]), int(state["epoch"]) + 1
            rng.bit_generator.state = state["rng"]
            torch.set_rng_state(state["torch_rng"])
            history = [json.loads(line) for line in metrics_file.read_text().splitlines()]
        n_examples = c.epoch_size or len(train)
        steps_per_epoch = math.ceil(n_examples / c.batch_size)
        started = time.perf_counter()
        with Verifier(VerifierConfig(deadline=c.verify_deadline)) as verifier:
            for epoch in range(start_epoch, c.epochs):
                network.train()
                losses, tokens, epoch_start = 0.0, 0, time.perf_counter()
                out_of_time = False
                for i, (src, tgt_in, tgt_out) in enumerate(
                    batches(train, c.batch_size, n_examples, rng)
                ):
                    src, tgt_in, tgt_out = src.to(device), tgt_in.to(device), tgt_out.to(device)
                    for group in optimizer.param_groups:
                        group["lr"] = c.lr * min(1.0, (step + 1) / max(c.warmup, 1))
                    with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
                        logits = network(src, tgt_in)
                    target = tgt_out.reshape(-1)
                    n_tokens = int((target != PAD_INDEX).sum())
                    loss = (
                        token_cross_entropy(
                            logits.reshape(-1, logits.shape[-1]).float(), target, PAD_INDEX
                        ).sum()
                        / n_tokens
                    )
                    optimizer.zero_grad(set_to_none=True)
                    scaler.scale(loss).backward()
                    scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(network.parameters(), c.clip)
                    scaler.step(optimizer)
                    scaler.update()
                    step += 1
                    losses += float(loss.detach()) * n_tokens
                    tokens += n_tokens
                    if on_step is not None:
                        on_step(i + 1, steps_per_epoch, float(loss.detach()))
                    if time_budget is not None and time.perf_counter() - started > time_budget:
                        out_of_time = True
                        break
                network.eval()
                train_seconds = time.perf_counter() - epoch_start
                metrics = {
                    "epoch": epoch, "step": step, "train_loss": losses / max(tokens, 1),
                    "train_seconds": round(train_seconds, 2),
                    "valid_fail@1": fail_at_1(network, valid, c.max_len, verifier),
                    "valid_size": len(valid), "elapsed": round(time.perf_counter() - started, 2),
                }  # fmt: skip
                history.append(metrics)
                self._save(network, optimizer, step, epoch, rng, history)
                if on_epoch is not None:
                    on_epoch(metrics)
                if out_of_time:
                    break
        return history

    def _save(
        self, network, optimizer, step: int, epoch: int, rng: np.random.Generator, history
    ) -> None:
        save_transformer(
            self.out / "model.pt", network, asdict(self.config), step=step, epoch=epoch
        )
        state = {
            "optimizer": optimizer.state_dict(), "step": step, "epoch": epoch,
            "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
        }  # fmt: skip
        with atomic_path(self.out / "state.pt") as tmp:
            torch.save(state, tmp)
        write_text(self.out / "metrics.jsonl", "".join(json.dumps(m) + "\n" for m in history))
