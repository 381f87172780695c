"""The seed study's training step on a GPU: recorded and replayed against launched op by op,
against torch.nn one seed at a time, and whether members stay bit for bit seeds trained alone.

Paper model (Weber et al.: LSTM 32/32, bilinear attention, dropout 0.1), the study's 100,000
training examples, batch 64, SGD 0.125, clip 5, all on the GPU. Measured in one run, each the
median of `--repeats`:
- `torch.nn`: an `nn.LSTM` (cuDNN) model, one seed after another (benchmarks/
  rewriting_throughput.py's baseline, moved to the GPU);
- eager: the stacked trainer's step launched op by op from Python;
- replayed: the same step recorded once as a CUDA graph (what a sweep runs on a GPU).
Member-steps/s = steps per second × members per step, with each step's dropout uniforms drawn
on the host (the trainer's own draw, in threads) and copied over.

Identity: seeds 1..S trained `--identity-steps` steps in stacks of S = `--members` each, and
seeds 1 and S alone; every member's weights must equal its seed's alone. The last lines are
`replay/eager S=N = X.X` and `replay/torch.nn S=N = X.X`.

    python benchmarks/sweep_gpu.py [--members 50 200 1000] [--steps 30] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from rewriting_throughput import BATCH, baseline_rate

from genprobe.data.seq2seq import Seq2SeqTensors, encode
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.training.trainer import SweepTrainer, TrainConfig

DEVICE = torch.device("cuda")


def trainer(data: Seq2SeqTensors, seeds: list[int], replay: bool) -> SweepTrainer:
    config = SweepConfig(seeds=(1,))
    t = SweepTrainer(
        config.model, config.model_shape(), TrainConfig(), seeds, data, lambda m: None, DEVICE
    )
    if not replay:
        t.run_step = lambda inputs: t._step(on_gpu(inputs))
    return t


def on_gpu(inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: value.to(DEVICE, non_blocking=True) for name, value in inputs.items()}


def stacked_rate(data: Seq2SeqTensors, members: int, steps: int, replay: bool) -> float:
    t = trainer(data, list(range(1, members + 1)), replay)
    order = t._epoch_order()
    for step in range(3):  # warm-up, and the recording
        t._train_step(order[:, step * BATCH : (step + 1) * BATCH])
    torch.cuda.synchronize()
    start = time.perf_counter()
    for step in range(3, 3 + steps):
        t._train_step(order[:, step * BATCH : (step + 1) * BATCH])
    torch.cuda.synchronize()
    return members * steps / (time.perf_counter() - start)


def weights_after(data: Seq2SeqTensors, seeds: list[int], steps: int, replay: bool) -> list:
    t = trainer(data, seeds, replay)
    order = t._epoch_order()
    for step in range(steps):
        t._train_step(order[:, step * BATCH : (step + 1) * BATCH])
    return [t.model.member_state(k) for k in range(len(seeds))]


def same(a: dict, b: dict) -> bool:
    return all(torch.equal(a[name].cpu(), b[name].cpu()) for name in a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--steps", type=int, default=30, help="timed steps per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--identity-steps", type=int, default=6)
    args = parser.parse_args()

    config = SweepConfig(seeds=(1,))
    train = config.split("train")
    data = encode(train.src, train.tgt)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(DEVICE)}; paper model, "
          f"batch {BATCH}, {args.steps} steps, median of {args.repeats}")  # fmt: skip

    for members in args.members:
        alone = {s: weights_after(data, [s], args.identity_steps, True)[0] for s in (1, members)}
        stacked = weights_after(data, list(range(1, members + 1)), args.identity_steps, True)
        eager = weights_after(data, list(range(1, members + 1)), args.identity_steps, False)
        print(f"S={members}: seed 1 and seed {members} as trained alone: "
              f"{same(stacked[0], alone[1]) and same(stacked[-1], alone[members])}; "
              f"replayed = eager for all members: "
              f"{all(same(a, b) for a, b in zip(stacked, eager, strict=True))}")  # fmt: skip

    model = config.model
    nn_rates = [baseline_rate(data, model, args.steps, DEVICE, 3) for _ in range(args.repeats)]
    nn_median = statistics.median(nn_rates)
    print(f"torch.nn, one seed at a time: {nn_median:9.0f} member-steps/s")
    ratios = []
    for members in args.members:
        eager = statistics.median(
            stacked_rate(data, members, args.steps, False) for _ in range(args.repeats)
        )
        replay = statistics.median(
            stacked_rate(data, members, args.steps, True) for _ in range(args.repeats)
        )
        print(f"S={members:5d}: eager {eager:9.0f}, replayed {replay:9.0f} member-steps/s "
              f"({1e3 * members / replay:.1f} ms per step)")  # fmt: skip
        ratios.append((members, replay / eager, replay / nn_median))
    for members, vs_eager, vs_nn in ratios:
        print(f"replay/eager S={members} = {vs_eager:.1f}")
        print(f"replay/torch.nn S={members} = {vs_nn:.1f}")


if __name__ == "__main__":
    main()
