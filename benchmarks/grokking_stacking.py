"""Training throughput of the grokking MLP: S seeds stacked in one model vs one seed at a time.

Member-steps/s = training steps per second × models trained by each step. The task is x+y mod
97 at training fraction 0.5 (4,704 equations), full batch or `--batch` of them (Power et al.
train with 512), the model genprobe's `mlp` (each
operand embedded, one hidden layer, ReLU), AdamW with weight decay 1. The baseline trains the
S seeds one after another as a researcher would: an `nn.Module` of the same shape,
`F.cross_entropy`, `clip_grad_norm_`, `torch.optim.AdamW`. The stacked side is what a sweep
over time runs (`OverTimeTrainer._train_step` over S members: forward, per-member loss,
backward, per-member clipping, AdamW). Only the steps are timed; the sides alternate, repeat by
repeat; one torch thread, as a sweep's workers run.

A third side is the stacked model with subset seeds (`--subsets`: each member on its own 70 %
of the equations, an epoch a permutation of it), which must be no slower than without.

Prints the median member-steps/s of each side, `S=N: stacked/baseline = X` (the target is
≥ 10× at S = 100 on a CPU) and `subsets/stacked` (the target: ≥ 1.0 within noise).

    python benchmarks/grokking_stacking.py [--members 100] [--batch 512] [--baseline-seeds 5]
        [--steps 10] [--repeats 5] [--hidden 64] [--emb 32]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn

from genprobe.data.seq2seq import PAD, Seq2SeqTensors, encode
from genprobe.models.architectures.mlp import MLPConfig
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.tasks import load_task
from genprobe.training.over_time import OverTimeTrainer
from genprobe.training.trainer import TrainConfig


class PlainMLP(nn.Module):
    """The `mlp` architecture as one `nn.Module`: embed each position, concatenate, one hidden
    layer, every output position scored at once."""

    def __init__(self, vocab: int, positions: int, emb: int, hidden: int, outputs: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.hidden = nn.Linear(positions * emb, hidden)
        self.out = nn.Linear(hidden, outputs)

    def forward(self, src: torch.Tensor) -> torch.Tensor:
        return self.out(F.relu(self.hidden(self.embed(src).flatten(1))))


def baseline_rate(config: SweepConfig, data: Seq2SeqTensors, seeds: int, steps: int) -> float:
    """Member-steps/s of seeds trained one after another by a plain torch loop."""
    shape, model, train = config.model_shape(), config.model, config.train
    elapsed = 0.0
    for seed in range(seeds):
        torch.manual_seed(seed)
        net = PlainMLP(shape.src_vocab, shape.src_len, model.emb, model.hidden,
                       shape.tgt_len * shape.tgt_vocab)  # fmt: skip
        opt = torch.optim.AdamW(net.parameters(), lr=train.lr, weight_decay=train.weight_decay)
        start = time.perf_counter()
        for _ in range(steps):
            logits = net(data.src).view(len(data), shape.tgt_len, shape.tgt_vocab)
            loss = F.cross_entropy(
                logits[:, : data.tgt_out.shape[1]].flatten(0, 1),
                data.tgt_out.flatten(),
                ignore_index=PAD,
                reduction="sum",
            ) / len(data)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), train.max_grad_norm)
            opt.step()
        elapsed += time.perf_counter() - start
    return seeds * steps / elapsed


def stacked_rate(
    config: SweepConfig, data: Seq2SeqTensors, members: int, steps: int, subsets: bool = False
) -> float:
    """Member-steps/s of one stacked model of S members, as a sweep's trainer steps it; with
    `subsets`, each member on its own 70 % of the examples (`--subsets`)."""
    train = replace(config.train, subsets=True) if subsets else config.train
    trainer = OverTimeTrainer(
        config.model, config.model_shape(), train, list(range(members)), data,
        roles={"train": data}, validation_role="train",
    )  # fmt: skip
    batch = trainer._epoch_order()[:, : config.train.batch_size]
    trainer._train_step(batch)  # warm-up
    start = time.perf_counter()
    for _ in range(steps):
        trainer._train_step(batch)
    return members * steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="+", default=[100])
    parser.add_argument("--batch", type=int, default=None, help="default: the full batch")
    parser.add_argument("--baseline-seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--emb", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)

    task = load_task("binary_operation", {"operation": "x+y", "p": 97, "train_fraction": 0.5})
    size = task.split_spec("train").size
    config = SweepConfig(
        seeds=(0,),
        task=task,
        train_size=size,
        model=MLPConfig(emb=args.emb, hidden=args.hidden),
        train=TrainConfig(
            batch_size=args.batch or size, optimizer="adamw", lr=3e-3, weight_decay=1.0, steps=1
        ),
    )
    train = config.split("train")
    data = encode(train.src, train.tgt)
    batch = encode(train.src[: config.train.batch_size], train.tgt[: config.train.batch_size])
    print(
        f"mlp (emb {args.emb}, hidden {args.hidden}) on x+y mod 97, {size:,} equations, batch "
        f"{config.train.batch_size:,}, {args.steps} steps, median of {args.repeats}; baseline over "
        f"{args.baseline_seeds} seeds one at a time; 1 torch thread"
    )
    for members in args.members:
        baseline, stacked, subset = [], [], []
        for _ in range(args.repeats):
            baseline.append(baseline_rate(config, batch, args.baseline_seeds, args.steps))
            stacked.append(stacked_rate(config, data, members, args.steps))
            subset.append(stacked_rate(config, data, members, args.steps, subsets=True))
        b, s, u = (statistics.median(rates) for rates in (baseline, stacked, subset))
        print(f"S={members}: baseline {b:,.1f}  stacked {s:,.1f}  stacked on subsets {u:,.1f} "
              "member-steps/s")  # fmt: skip
        print(f"S={members}: stacked/baseline = {s / b:.2f}")
        print(f"S={members}: subsets/stacked = {u / s:.2f}  subsets/baseline = {u / b:.2f}")


if __name__ == "__main__":
    main()
