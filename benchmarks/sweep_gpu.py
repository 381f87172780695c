"""The seed study's training step on a GPU: recorded and replayed against launched op by op,
against torch.nn one seed at a time, the two sources of dropout uniforms, and whether members
stay bit for bit seeds trained alone.

Paper model (Weber et al.: LSTM 32/32, bilinear attention, dropout 0.1), the study's 100,000
training examples, batch 64, SGD 0.125, clip 5, all on the GPU. Measured in one run, each the
median of `--repeats`:
- `torch.nn`: an `nn.LSTM` (cuDNN) model, one seed after another (benchmarks/
  rewriting_throughput.py's baseline, moved to the GPU);
- eager: the stacked trainer's step launched op by op from Python (uniforms from NumPy);
- replayed: the same step recorded once as a CUDA graph (what a sweep runs on a GPU), with each
  step's dropout uniforms drawn on the host by the trainer's threads and copied over
  (`--noise numpy`, the default) or computed in the recording itself (`--noise counter`).
Member-steps/s = steps per second × members per step.

Identity: seeds 1..S trained `--identity-steps` steps in stacks of S each, and seeds 1 and S
alone; every member's weights must equal its seed's alone, for the LSTM (`--members`) and the
default transformer of `genprobe sweep --arch transformer` (`--transformer-members`), under
both noise sources. Where a stack differs, the parameters whose first-step gradients differ
are listed (the op that splits by stack size is upstream of the first of them in backward).
The last lines are the ratios `replay/eager S=N`, `replay/torch.nn S=N` and
`counter/numpy S=N`.

    python benchmarks/sweep_gpu.py [--members 50 200 1000] [--transformer-members 20 200]
        [--steps 30] [--repeats 3] [--device cuda]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from rewriting_throughput import BATCH, baseline_rate, synchronize

from genprobe.data.seq2seq import Seq2SeqTensors, encode
from genprobe.models.architectures import Architecture
from genprobe.models.architectures.transformer import TransformerSeedConfig
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.training.config import NOISES, TrainConfig
from genprobe.training.trainer import SweepTrainer


def trainer(
    device: torch.device,
    data: Seq2SeqTensors,
    model: Architecture,
    seeds: list[int],
    noise: str,
    replay: bool = True,
) -> SweepTrainer:
    config = SweepConfig(seeds=(1,), model=model)
    t = SweepTrainer(
        model, config.model_shape(), TrainConfig(noise=noise), seeds, data, None, device
    )
    if not replay:
        t.run_step = lambda inputs: t._step({k: v.to(device) for k, v in inputs.items()})
    return t


def take_steps(t: SweepTrainer, first: int, steps: int, order: torch.Tensor | None = None) -> None:
    order = t._epoch_order() if order is None else order
    for step in range(first, first + steps):
        t._train_step(order[:, step * BATCH : (step + 1) * BATCH])


def stacked_rate(t: SweepTrainer, steps: int) -> float:
    order = t._epoch_order()  # drawn on the host before the clock starts
    take_steps(t, 0, 3, order)  # warm-up, and the recording
    synchronize(t.device)
    start = time.perf_counter()
    take_steps(t, 3, steps, order)
    synchronize(t.device)
    return t.model.members * steps / (time.perf_counter() - start)


def weights_after(t: SweepTrainer, steps: int) -> list[dict[str, torch.Tensor]]:
    take_steps(t, 0, steps)
    return [t.model.member_state(k) for k in range(len(t.active))]


def same(a: dict, b: dict) -> bool:
    return all(torch.equal(a[name].cpu(), b[name].cpu()) for name in a)


def gradient_differences(stacked: SweepTrainer, alone: SweepTrainer, k: int) -> list[str]:
    """After both took one step from the same weights: the parameters whose gradient of member
    k differs from the seed's alone, largest difference first."""
    differ = []
    for (name, p), q in zip(
        stacked.model.named_parameters(), alone.model.parameters(), strict=True
    ):
        gap = (p.grad[k] - q.grad[0]).abs().max().item()
        if gap:
            differ.append((gap, name))
    return [f"{name} ({gap:.1e})" for gap, name in sorted(differ, reverse=True)]


def identity(
    device: torch.device, data: Seq2SeqTensors, model: Architecture, members: int, args
) -> str:
    lines = []
    for noise in NOISES:
        seeds, steps = list(range(1, members + 1)), args.identity_steps
        stack = weights_after(trainer(device, data, model, seeds, noise), steps)
        ends = {0: 1, members - 1: members}  # member k: seed
        checks = {
            k: same(stack[k], weights_after(trainer(device, data, model, [seed], noise), steps)[0])
            for k, seed in ends.items()
        }
        line = f"  {noise}: seed 1 and seed {members} as trained alone: {all(checks.values())}"
        if members > 1:
            eager = weights_after(trainer(device, data, model, seeds, noise, False), 3)
            replayed = weights_after(trainer(device, data, model, seeds, noise), 3)
            line += f"; replayed = eager: {all(map(same, replayed, eager))}"
        lines.append(line)
        one = trainer(device, data, model, seeds, noise, False)
        take_steps(one, 0, 1)
        for k in (k for k, equal in checks.items() if not equal):
            solo = trainer(device, data, model, [ends[k]], noise, False)
            take_steps(solo, 0, 1)
            differ = gradient_differences(one, solo, k) or "none"
            lines.append(f"    first-step gradients of seed {ends[k]} that differ: {differ}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--transformer-members", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--steps", type=int, default=30, help="timed steps per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--identity-steps", type=int, default=6)
    parser.add_argument("--train-size", type=int, default=100_000)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    device = torch.device(args.device)

    config = SweepConfig(seeds=(1,), train_size=args.train_size)
    train = config.split("train")
    data = encode(train.src, train.tgt).to(device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"torch {torch.__version__}, {name}; paper model, batch {BATCH}, "
          f"{args.steps} steps, median of {args.repeats}", flush=True)  # fmt: skip

    for model, sizes in (
        (config.model, args.members),
        (TransformerSeedConfig(), args.transformer_members),
    ):
        for members in sizes:
            print(f"{model.describe()}, S={members}:", flush=True)
            print(identity(device, data, model, members, args), flush=True)

    def median(members: int, noise: str, replay: bool = True) -> float:
        seeds = list(range(1, members + 1))
        rates = [
            stacked_rate(trainer(device, data, config.model, seeds, noise, replay), args.steps)
            for _ in range(args.repeats)
        ]
        return statistics.median(rates)

    nn_rates = [
        baseline_rate(data, config.model, args.steps, device, 3) for _ in range(args.repeats)
    ]
    nn_median = statistics.median(nn_rates)
    print(f"torch.nn, one seed at a time: {nn_median:9.0f} member-steps/s", flush=True)
    ratios = []
    for members in args.members:
        eager, numpy, counter = (
            median(members, "numpy", False),
            median(members, "numpy"),
            median(members, "counter"),
        )
        per_step = {
            noise: f"{1e3 * members / rate:.1f} ms"
            for noise, rate in (("numpy", numpy), ("counter", counter))
        }
        print(
            f"S={members:5d}: eager {eager:9.0f}, replayed {numpy:9.0f} ({per_step['numpy']} "
            f"per step), counter {counter:9.0f} member-steps/s ({per_step['counter']})",
            flush=True,
        )
        ratios.append((members, numpy / eager, numpy / nn_median, counter / numpy))
    for members, vs_eager, vs_nn, vs_numpy in ratios:
        print(f"replay/eager S={members} = {vs_eager:.1f}")
        print(f"replay/torch.nn S={members} = {vs_nn:.1f}")
        print(f"counter/numpy S={members} = {vs_numpy:.1f}")


if __name__ == "__main__":
    main()
