"""Training throughput of a module genprobe did not write: S seeds stacked with torch.func vs
the same seeds one after another.

Member-steps/s = training steps per second × models trained by each step. The model is
`examples/my_model.py` (a decoder-only transformer written as a plain `torch.nn.Module`) on
SCAN's length split, batch 64 per member. The baseline trains the S seeds one after another as
a researcher would: the module, `F.cross_entropy`, `clip_grad_norm_`, `torch.optim.Adam`. The
stacked side is what a sweep runs (`SweepTrainer` over S members of `py:my_model:build`: one
step = forward, per-member loss, backward, per-member clipping, Adam), once with each
`stacking`: `vmap` (one batched call, `torch.func.vmap`), `loop` (the members one after
another, each on its own slices of the stacked weights) and `auto` (what a sweep takes on this
device: the loop on a CPU, vmap on a GPU when the module allows it). Only the steps are timed;
the sides alternate, repeat by repeat; one torch thread on a CPU, as a sweep's workers run.

Prints, per S, the median member-steps/s of each side and `S=N: auto/baseline = X` (with
vmap/baseline and loop/baseline): the target is that auto is never slower than the baseline on
a CPU, and ≥ 5× at S = 50 on a GPU.

    python benchmarks/module_stacking.py [--members 1 10 50] [--steps 5] [--repeats 3]
        [--device cpu] [--width 64] [--layers 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
from rewriting_throughput import nn_step

from genprobe.data.seq2seq import Seq2SeqTensors, encode
from genprobe.models.architectures import load_architecture
from genprobe.models.architectures.module import ModuleArchitecture, joint_sequence
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.device import cpu_threads
from genprobe.tasks import load_task
from genprobe.training.trainer import SweepTrainer, TrainConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
BATCH = 64
TRAIN = TrainConfig(batch_size=BATCH, optimizer="adam", lr=1e-3)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Joint(torch.nn.Module):
    """The module in genprobe's encoder-decoder layout, for the plain training loop."""

    def __init__(self, module: torch.nn.Module, src_vocab: int) -> None:
        super().__init__()
        self.module, self.src_vocab = module, src_vocab

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        logits = self.module(joint_sequence(src, tgt_in, self.src_vocab))
        return logits[:, src.shape[1] :, self.src_vocab :]


def baseline_rate(
    data: Seq2SeqTensors, config: SweepConfig, members: int, steps: int, device
) -> float:
    """Member-steps/s of the S seeds trained one after another by a plain torch loop."""
    data, shape = data.to(device), config.model_shape()
    elapsed = 0.0
    for seed in range(members):
        network = Joint(config.model.build_module(shape, seed), shape.src_vocab).to(device)
        opt = torch.optim.Adam(network.parameters(), lr=TRAIN.lr)
        order = torch.as_tensor(np.random.default_rng(seed).permutation(len(data)), device=device)
        synchronize(device)
        start = time.perf_counter()
        for step in range(steps):
            nn_step(network, opt, data, order[step * BATCH :][:BATCH], TRAIN.max_grad_norm)
        synchronize(device)
        elapsed += time.perf_counter() - start
    return members * steps / elapsed


def stacked_rate(
    data: Seq2SeqTensors, config: SweepConfig, members: int, steps: int, device
) -> float:
    """Member-steps/s of one stacked model of S members, as a sweep's trainer steps it."""
    trainer = SweepTrainer(
        config.model, config.model_shape(), TRAIN, list(range(members)), data,
        lambda m: np.zeros(m.members), device=device,
    )  # fmt: skip
    order = trainer._epoch_order()
    trainer._train_step(order[:, :BATCH])  # warm-up
    synchronize(trainer.device)
    start = time.perf_counter()
    for step in range(steps):
        trainer._train_step(order[:, step * BATCH :][:, :BATCH])
    synchronize(trainer.device)
    return members * steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    device = torch.device(args.device)

    task = load_task("scan", {"split": "length"})
    options = {"width": args.width, "layers": args.layers}
    configs = {
        stacking: SweepConfig(
            seeds=(0,),
            task=task,
            model=load_architecture("py:my_model:build", {**options, "stacking": stacking}),
        )
        for stacking in ("vmap", "loop", "auto")
    }
    train = configs["auto"].split("train")
    data = encode(train.src, train.tgt)
    auto = configs["auto"].model.initialized(configs["auto"].model_shape(), [0]).to(device)
    print(
        f"examples/my_model.py ({', '.join(f'{k}={v}' for k, v in options.items())}) on SCAN "
        f"length, batch {BATCH}, {args.steps} steps, median of {args.repeats}; device "
        f"{torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}; "
        f"auto stacks with: {auto.stacking()}"
    )
    assert isinstance(configs["auto"].model, ModuleArchitecture)
    sides = {
        "baseline": lambda s: baseline_rate(data, configs["auto"], s, args.steps, device),
        **{
            name: lambda s, c=config: stacked_rate(data, c, s, args.steps, device)
            for name, config in configs.items()
        },
    }
    print(f"{'S':>4} " + " ".join(f"{name:>12}" for name in sides) + "   member-steps/s")
    with cpu_threads():
        for members in args.members:
            for side in sides.values():  # warm-up
                side(members)
            rates = [[side(members) for side in sides.values()] for _ in range(args.repeats)]
            median = dict(
                zip(sides, (statistics.median(r) for r in zip(*rates, strict=True)), strict=True)
            )
            print(f"{members:>4} " + " ".join(f"{rate:>12.1f}" for rate in median.values()))
            base = median["baseline"]
            print(
                f"S={members}: auto/baseline = {median['auto'] / base:.2f} "
                f"(vmap/baseline {median['vmap'] / base:.2f}, "
                f"loop/baseline {median['loop'] / base:.2f})"
            )


if __name__ == "__main__":
    main()
