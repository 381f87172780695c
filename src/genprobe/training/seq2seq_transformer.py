"""Training the integration transformer on (integrand, primitive) prefix pairs.

AdamW with linear warm-up, gradient-norm clipping, bf16 (or fp16 with loss scaling) autocast on
GPU, batches of similar lengths, in a run directory its study opened
(`genprobe.studies.integration_train`, which holds the config, sizes and presets). After every
epoch, every ten minutes and when the time budget runs out, `model.pt` (the model, readable as
`ckpt:DIR`) and `metrics.jsonl`, recorded as the run's checkpoint shard (`ShardStore.keep`, so
that every reader checks them), and then `state.pt` are saved. `state.pt` (weights, optimizer,
step, RNGs, position in the epoch, the metrics so far) is written last and alone decides where
a rerun resumes, so an interrupted run, even one killed between two of these files, resumes at
the batch where it stopped and ends with the same weights as an uninterrupted one. After every
epoch (and at a time-budget stop), the caller's `validate` measures the network on held-out
problems (the study: Fail@1 of greedy decoding, verified) and its metrics are appended to
`metrics.jsonl`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from genprobe.data.teacher_forcing import decoder_io
from genprobe.errors import DataFormatError, GenprobeError
from genprobe.models.checkpoints import load_transformer, transformer_bytes
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig, pad_sequences
from genprobe.runs.checkpoint import CHECKPOINT, LAST, METRICS, MODEL
from genprobe.runs.resume import load_state, save_state
from genprobe.runs.shards import Shard, ShardStore
from genprobe.tasks.integration.datasets import read_dataset
from genprobe.tasks.integration.vocab import EOS_INDEX, PAD_INDEX, encode_tokens
from genprobe.training.loss import token_cross_entropy

STATE = "state.pt"
SAVE_EVERY_SECONDS = 600
REPORT_EVERY = 20  # steps between calls of `on_step` (each waits for the GPU to catch up)

# metrics of the network (in eval mode) on the validation problems (input prefix text)
Validate = Callable[[Seq2SeqTransformer, Sequence[str]], dict[str, float]]


class TrainSettings(Protocol):
    """What the trainer reads of its run's config (the integration-train study's
    `IntegrationTrainConfig`)."""

    valid_size: int  # problems held out of the training data when it has no validation split
    seed: int
    device: str  # "auto": cuda when available
    precision: str  # "auto", "fp32", "bf16" or "fp16"
    lr: float
    weight_decay: float
    batch_size: int
    clip: float
    epochs: int
    epoch_size: int | None  # None: the whole training set

    def model_config(self) -> TransformerConfig: ...

    def learning_rate(self, step: int, total_steps: int) -> float: ...

    def identity(self) -> dict[str, Any]: ...


@dataclass
class Pairs:
    """Encoded examples: source ids `<s> sub Y' f <s>` and target ids `F` (no EOS)."""

    src: list[np.ndarray]
    tgt: list[np.ndarray]
    problems: list[str]  # the input prefix text, for validation

    def __len__(self) -> int:
        return len(self.src)

    def subset(self, index: Sequence[int]) -> Pairs:
        return Pairs(*([part[i] for i in index] for part in (self.src, self.tgt, self.problems)))


def split_file(path: str | Path, split: str) -> Path | None:
    """The file holding `split` of the dataset `path`: itself where it has splits (JSONL,
    Parquet), the sibling `integration generate` writes beside a text `NAME.train`
    (`NAME.valid`), or None."""
    path = Path(path)
    if path.suffix in (".jsonl", ".parquet") or split == "train":
        return path
    sibling = path.with_suffix(f".{split}")
    return sibling if path.suffix == ".train" and sibling.is_file() else None


def read_training_pairs(path: str | Path, split: str, max_len: int) -> Pairs:
    """Encode the rows of a dataset's `split` (see `split_file`; none if it has no such file);
    rows longer than `max_len` tokens are left out.

    Raises:
        DataFormatError: a row with a token outside the vocabulary (file and line); no row of
            the train split (another split may be empty).
    """
    found = split_file(path, split)
    if found is None:
        return Pairs([], [], [])
    path = found
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


def _rows(path: Path, split: str) -> list[tuple[int, str, str]]:
    """(line, problem, answer) of a dataset's split; a text file holds one split."""
    tabular = path.suffix in (".jsonl", ".parquet")
    rows = read_dataset(path, split if tabular else None, may_be_empty=split != "train")
    for row in rows:
        if row.output is None:
            raise DataFormatError(path, row.row, "a training pair needs an antiderivative")
    return [(row.row, row.input, row.output) for row in rows]


@dataclass
class TrainingData:
    """A dataset's pairs, read before its run directory is opened (a data error writes
    nothing)."""

    train: Pairs
    valid: Pairs  # the dataset's validation split; none: held out of `train` by the trainer
    valid_from: str  # where the validation problems come from, for the metrics


def read_training_data(path: str | Path, max_len: int, valid_size: int) -> TrainingData:
    """The training and validation pairs of the dataset `path` (see `split_file`).

    Raises:
        DataFormatError: a row the vocabulary cannot encode, no training pair (after the
            length limit), or no validation split and too few pairs to hold `valid_size` out.
    """
    train = read_training_pairs(path, "train", max_len)
    if not len(train):
        raise DataFormatError(path, None, "no training pairs (after the length limit)")
    valid = read_training_pairs(path, "valid", max_len)
    if not len(valid) and len(train) <= valid_size:
        raise DataFormatError(
            path, None, f"{len(train)} training pairs (after the length limit) and no "
            f"validation split: holding out --valid-size {valid_size} leaves none to train "
            "on; lower --valid-size or give a validation split",
        )  # fmt: skip
    valid_from = str(split_file(path, "valid")) if len(valid) else "held out of the data"
    return TrainingData(train, valid, valid_from)


def split_valid(
    train: Pairs, valid: Pairs, size: int, rng: np.random.Generator
) -> tuple[Pairs, Pairs]:
    """`size` validation pairs: from `valid` if it has any, else held out of `train`."""
    if len(valid):
        return train, valid.subset(rng.permutation(len(valid))[:size])
    order = rng.permutation(len(train))
    return train.subset(order[size:]), train.subset(order[:size])


def batch_indices(
    pairs: Pairs, batch_size: int, n_examples: int, rng: np.random.Generator
) -> list[list[int]]:
    """One epoch's batches, shuffled, each of examples of similar source length."""
    order = rng.choice(len(pairs), size=n_examples, replace=n_examples > len(pairs))
    pool = batch_size * 50  # sort within pools of 50 batches: little padding, still shuffled
    chunks = []
    for start in range(0, len(order), pool):
        part = sorted(order[start : start + pool], key=lambda i: len(pairs.src[i]))
        chunks += [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
    return [chunks[i] for i in rng.permutation(len(chunks))]


def collate(pairs: Pairs, chosen: Sequence[int]) -> tuple[torch.Tensor, ...]:
    """(src, tgt_in, tgt_out) padded LongTensors of the chosen examples."""
    src = pad_sequences([pairs.src[i] for i in chosen], PAD_INDEX)
    tgt = pad_sequences([pairs.tgt[i] for i in chosen], PAD_INDEX)
    lengths = torch.tensor([len(pairs.tgt[i]) for i in chosen])
    return (src, *decoder_io(tgt, lengths, EOS_INDEX, PAD_INDEX))


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _autocast(device: torch.device, precision: str) -> tuple[torch.dtype | None, bool]:
    """(autocast dtype or None, needs a grad scaler)."""
    if precision == "auto":
        if device.type != "cuda":
            return None, False
        precision = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return {"fp32": (None, False), "bf16": (torch.bfloat16, False), "fp16": (torch.float16, True)}[
        precision
    ]


def _train_step(
    network: Seq2SeqTransformer,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    dtype: torch.dtype | None,
    clip: float,
    n_tokens: int,
    src: torch.Tensor,
    tgt_in: torch.Tensor,
    tgt_out: torch.Tensor,
) -> torch.Tensor:
    """One optimizer step on a batch of `n_tokens` target tokens; the mean token loss, left on
    the device (reading it waits for the step, so the caller reads it only when it reports)."""
    with torch.autocast(src.device.type, dtype=dtype, enabled=dtype is not None):
        logits = network(src, tgt_in)
    target = tgt_out.reshape(-1)
    losses = token_cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), target, PAD_INDEX)
    loss = losses.sum() / n_tokens
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(network.parameters(), clip)
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()


def _to_device(batch: Sequence[torch.Tensor], device: torch.device) -> list[torch.Tensor]:
    """The batch on `device`; to a GPU from pinned memory without waiting, so that the next
    batch is prepared while the GPU still runs this step."""
    if device.type != "cuda":
        return [t.to(device) for t in batch]
    return [t.pin_memory().to(device, non_blocking=True) for t in batch]


def _weighted_mean(values: list[torch.Tensor], weights: list[int]) -> float:
    """sum(value · weight) / sum(weight) of scalar tensors, read back in one copy (0 if none)."""
    if not values:
        return 0.0
    read = torch.stack(values).tolist()
    return sum(v * w for v, w in zip(read, weights, strict=True)) / max(sum(weights), 1)


@dataclass
class _Progress:
    """Where training stands; saved in `state.pt`."""

    epoch: int = 0
    batches_done: int = 0  # of this epoch
    step: int = 0
    elapsed: float = 0.0  # training seconds, all invocations together
    epoch_rng: dict | None = None  # the data RNG at this epoch's start


def trained(run: Path, epochs: int) -> bool:
    """Whether the training in `run` is over: its `state.pt` (which alone says where it
    stands; a damaged one is set aside, see `runs.resume`) is past `epochs` epochs, and the
    model and metrics it saved before are as recorded (a damaged one is named in a warning).
    A rerun then builds no network and reads no data."""
    restart = "training starts again from the first step (its next save replaces model.pt)"
    state = load_state(run / STATE, "cpu", restart)
    done = state is not None and state.get("progress", {}).get("epoch", 0) >= epochs
    return done and ShardStore(run).finished(CHECKPOINT, LAST)


class Trainer:
    """Trains in the run directory `run`, opened by its study for `config` (a new one, or one
    made by the same config, resumed from `state.pt`), on `data`, from the weights `start`
    (a state dict of the config's model; None: a random initialization)."""

    def __init__(
        self,
        config: TrainSettings,
        run: Path,
        data: TrainingData,
        start: dict[str, torch.Tensor] | None = None,
    ) -> None:
        self.config, self.out, self.data, self.start = config, run, data, start

    def run(
        self,
        validate: Validate,
        on_step: Callable[[int, int, float], None] | None = None,
        on_epoch: Callable[[dict[str, Any]], None] | None = None,
        time_budget: float | None = None,
    ) -> list[dict[str, Any]]:
        """Train; `validate` gives the held-out metrics of every epoch, `on_step(step_in_epoch,
        steps_in_epoch, loss)` (every `REPORT_EVERY` steps) and `on_epoch(metrics)` report
        progress. Stops after `time_budget` seconds of training in this call (at a step
        boundary, then validates and saves; the same call later goes on from there). Returns
        every epoch's metrics, earlier calls' included."""
        c = self.config
        device = _device(c.device)
        torch.manual_seed(c.seed)
        rng = np.random.default_rng(c.seed)
        train, valid = split_valid(self.data.train, self.data.valid, c.valid_size, rng)
        network = Seq2SeqTransformer(c.model_config())
        if self.start is not None:
            network.load_state_dict(self.start)
        network = network.to(device)
        optimizer = torch.optim.AdamW(network.parameters(), lr=c.lr, weight_decay=c.weight_decay)
        dtype, scaled = _autocast(device, c.precision)
        scaler = torch.amp.GradScaler(device.type, enabled=scaled)
        at, history = _Progress(), []
        restart = "training starts again from the first step (its next save replaces model.pt)"
        if (state := load_state(self.out / STATE, device, restart)) is not None:
            at, history = self._resume(state, network, optimizer, scaler, rng, device)
        if at.epoch >= c.epochs:  # trained, its model or metrics lost: kept again as saved
            self._keep(network, at, history)
        n_examples = c.epoch_size or len(train)
        started = last_save = time.perf_counter()
        elapsed_before = at.elapsed
        for epoch in range(at.epoch, c.epochs):
            if at.epoch_rng is None:
                at.epoch, at.batches_done, at.epoch_rng = epoch, 0, rng.bit_generator.state
            else:  # resuming inside this epoch: draw its batches again, skip the done ones
                rng.bit_generator.state = at.epoch_rng
            plan = batch_indices(train, c.batch_size, n_examples, rng)
            network.train()
            # each step's mean loss stays on the device until the epoch's end (reading one
            # waits for its step); the epoch's loss is their mean weighted by target tokens
            losses, token_counts, epoch_start = [], [], time.perf_counter()
            stop = False
            for i in range(at.batches_done, len(plan)):
                for group in optimizer.param_groups:
                    group["lr"] = c.learning_rate(at.step, c.epochs * len(plan))
                batch = collate(train, plan[i])
                n_tokens = int((batch[2] != PAD_INDEX).sum())
                loss = _train_step(
                    network, optimizer, scaler, dtype, c.clip, n_tokens, *_to_device(batch, device)
                )
                now = time.perf_counter()
                at.step, at.batches_done = at.step + 1, i + 1
                at.elapsed = elapsed_before + now - started
                losses.append(loss)
                token_counts.append(n_tokens)
                if on_step is not None and (i % REPORT_EVERY == 0 or i + 1 == len(plan)):
                    on_step(i + 1, len(plan), float(loss))
                stop = time_budget is not None and now - started > time_budget
                if stop:
                    break
                if now - last_save > SAVE_EVERY_SECONDS and i + 1 < len(plan):
                    self._save(network, optimizer, scaler, rng, at, history)
                    last_save = now
            network.eval()
            metrics = {
                "epoch": epoch, "step": at.step, "train_loss": _weighted_mean(losses, token_counts),
                "train_seconds": round(time.perf_counter() - epoch_start, 2),
                **validate(network, valid.problems),
                "valid_size": len(valid), "valid_from": self.data.valid_from,
                "elapsed": round(at.elapsed, 2),
            }  # fmt: skip
            if at.batches_done < len(plan):
                metrics["partial"] = at.batches_done / len(plan)
            else:
                at.epoch, at.batches_done, at.epoch_rng = epoch + 1, 0, None
            history.append(metrics)
            self._save(network, optimizer, scaler, rng, at, history)
            last_save = time.perf_counter()
            if on_epoch is not None:
                on_epoch(metrics)
            if stop:
                break
        return history

    def _resume(
        self, state, network, optimizer, scaler, rng: np.random.Generator, device: torch.device
    ) -> tuple[_Progress, list[dict[str, Any]]]:
        if "network" in state:
            network.load_state_dict(state["network"])
        else:  # saved before state.pt held the weights and the metrics
            network.load_state_dict(load_transformer(self.out / MODEL)[0].state_dict())
        optimizer.load_state_dict(state["optimizer"])
        scaler.load_state_dict(state["scaler"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"].cpu())
        if "cuda_rng" in state:
            torch.cuda.set_rng_state(state["cuda_rng"].cpu(), device)
        if "history" in state:
            history = state["history"]
        else:
            history = list(map(json.loads, (self.out / METRICS).read_text().splitlines()))
        # a partly trained epoch's validation is replaced when the epoch is finished
        return _Progress(**state["progress"]), [m for m in history if "partial" not in m]

    def _keep(self, network, at: _Progress, history: list[dict[str, Any]]) -> None:
        """Write model.pt and metrics.jsonl, recorded as the run's checkpoint shard (replacing
        the last save's), which every reader checks them against."""
        model = transformer_bytes(network, self.config.identity(), step=at.step, epoch=at.epoch)
        metrics = "".join(json.dumps(m) + "\n" for m in history).encode()
        ShardStore(self.out).keep(Shard(CHECKPOINT, LAST), {MODEL: model, METRICS: metrics})

    def _save(self, network, optimizer, scaler, rng, at: _Progress, history) -> None:
        self._keep(network, at, history)
        state = {
            "network": network.state_dict(), "optimizer": optimizer.state_dict(),
            "scaler": scaler.state_dict(), "rng": rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(), "progress": asdict(at), "history": history,
        }  # fmt: skip
        if next(network.parameters()).is_cuda:
            state["cuda_rng"] = torch.cuda.get_rng_state(next(network.parameters()).device)
        save_state(self.out / STATE, state)  # last: the point a rerun resumes from
