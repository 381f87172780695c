"""Training throughput: S seeds of a transformer as one stacked model vs one torch.nn model at
a time.

Member-steps/s = training steps per second × models trained by each step. The stacked side is
what a sweep runs: a `SweepTrainer` over S members, one `_train_step` (forward, per-member
loss, backward, per-member clipping, Adam) per iteration. The baseline trains the same S seeds
one after another as a plain torch.nn model (`tests/models/nn_reference.py`:
`nn.TransformerEncoderLayer` / `nn.TransformerDecoderLayer`, pre-LN, GELU, embeddings +
sinusoidal positions, output `nn.Linear`) with `F.cross_entropy`, `clip_grad_norm_` and
`torch.optim.Adam`. Both sides: the same task's data and shapes, batch 64 per member, summed
token loss / sequences, Adam 1e-3, clip 5, dropout 0.1 (torch.nn also drops attention weights
and feed-forward units, which the stacked model does not), the same steps per member, one
torch thread as a sweep's workers run (`studies.seed_sensitivity.device.CPU_THREADS`). Only the
steps are timed, not building the models; the two sides alternate, repeat by repeat.

Prints, per layout, the median member-steps/s of each side, the FLOPs of one member-step
(`torch.utils.flop_counter`: the matmuls, forward and backward) and so the GFLOP/s each side
reaches, the machine's matmul peak with the same threads, and `ratio = X` (stacked ÷ baseline
member-steps/s). A third column, a stack of one member, separates what stacking gains from what
the stacked code gains without it. `--profile` adds the ops of one stacked step that take the
most time.

    python benchmarks/transformer_throughput.py [--members 20] [--steps 5] [--repeats 3]
        [--device cpu] [--decoder-only | --encoder-decoder] [--profile]
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from rewriting_throughput import nn_step
from torch.utils.flop_counter import FlopCounterMode

from genprobe.data.seq2seq import N_SPECIAL, Seq2SeqTensors, encode
from genprobe.models.architectures import ModelShape
from genprobe.models.architectures.transformer import TransformerSeedConfig
from genprobe.studies.seed_sensitivity.device import CPU_THREADS
from genprobe.tasks.registry import load_task
from genprobe.training.trainer import SweepTrainer, TrainConfig

BATCH = 64
TRAIN = TrainConfig(batch_size=BATCH, optimizer="adam", lr=1e-3, max_grad_norm=5.0)


def _nn_reference():
    """tests/models/nn_reference.py, imported by path (tests/ is not a package)."""
    path = Path(__file__).parents[1] / "tests" / "models" / "nn_reference.py"
    spec = importlib.util.spec_from_file_location("nn_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NNTransformer = _nn_reference().NNTransformer
Model = tuple[TransformerSeedConfig, ModelShape]  # an architecture's options and its shape


def problem(task_name: str, steps: int) -> tuple[Seq2SeqTensors, ModelShape]:
    """One epoch of `steps` batches of the task's training data, and the model's shape."""
    task = load_task(task_name)
    train = task.generate(task.train_split, BATCH * steps, seed=0)
    shape = ModelShape(
        src_vocab=len(task.source_vocab) + 1,  # + padding
        tgt_vocab=len(task.target_vocab) + N_SPECIAL,
        src_len=train.src.shape[1],
        tgt_len=train.tgt.shape[1] + 1,
        max_positions=train.src.shape[1] + train.tgt.shape[1] + 2,
    )
    return encode(train.src, train.tgt), shape


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def baseline_rate(data: Seq2SeqTensors, model: Model, members: int, steps: int, device) -> float:
    """Member-steps/s of the S seeds trained one after another as torch.nn models."""
    data = data.to(device)
    elapsed = 0.0
    for seed in range(members):
        torch.manual_seed(seed)
        network = NNTransformer(*model).to(device).train()
        opt = torch.optim.Adam(network.parameters(), lr=TRAIN.lr)
        order = torch.as_tensor(np.random.default_rng(seed).permutation(len(data)), device=device)
        synchronize(device)
        start = time.perf_counter()
        for step in range(steps):
            idx = order[step * BATCH : (step + 1) * BATCH]
            nn_step(network, opt, data, idx, TRAIN.max_grad_norm)
        synchronize(device)
        elapsed += time.perf_counter() - start
    return members * steps / elapsed


def stacked_trainer(data, model: Model, members: int, device) -> SweepTrainer:
    return SweepTrainer(*model, TRAIN, list(range(members)), data, lambda m: None, device=device)


def stacked_rate(data: Seq2SeqTensors, model: Model, members: int, steps: int, device) -> float:
    """Member-steps/s of one stacked model of S members, as a sweep's trainer steps it."""
    trainer = stacked_trainer(data, model, members, device)
    order = trainer._epoch_order()
    # On a GPU the first steps run op by op and the third records the step (training.captured).
    warmup = 3 if device.type == "cuda" else 0
    for step in range(warmup + steps):
        if step == warmup:
            synchronize(device)
            start = time.perf_counter()
        trainer._train_step(order[:, step % steps * BATCH :][:, :BATCH])
    synchronize(device)
    return members * steps / (time.perf_counter() - start)


def flops_per_member_step(data, model: Model, device) -> int:
    """FLOPs of one member's training step (`torch.utils.flop_counter`: the matmuls)."""
    trainer = stacked_trainer(data, model, 1, device)
    with FlopCounterMode(display=False) as counter:
        trainer._train_step(trainer._epoch_order()[:, :BATCH])
    return counter.get_total_flops() // trainer.lanes  # a GPU pads one member to more lanes


def matmul_peak(device: torch.device) -> float:
    """GFLOP/s of a 2048³ float32 matmul with this process's threads (median of 5)."""
    a = torch.randn(2048, 2048, device=device)
    a @ a

    def once() -> float:
        synchronize(device)
        start = time.perf_counter()
        a @ a
        synchronize(device)
        return 2 * 2048**3 / (time.perf_counter() - start) / 1e9

    return statistics.median(once() for _ in range(5))


def profile_step(data, model: Model, members: int, device, rows: int) -> None:
    """The ops of one stacked training step that take the most time (self time)."""
    trainer = stacked_trainer(data, model, members, device)
    order = trainer._epoch_order()
    trainer._train_step(order[:, :BATCH])  # warm-up
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        trainer._train_step(order[:, :BATCH])
        synchronize(device)
    sort = "self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total"
    print(prof.key_averages().table(sort_by=sort, row_limit=rows))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=20, help="S, seeds per stacked model")
    parser.add_argument("--steps", type=int, default=5, help="training steps per member")
    parser.add_argument("--repeats", type=int, default=3, help="the median of this many")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--task", default="reverse_string")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--ffn", type=int, default=256)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--threads", type=int, default=CPU_THREADS, help="torch CPU threads")
    layout = parser.add_mutually_exclusive_group()
    layout.add_argument("--decoder-only", dest="layouts", action="store_const", const=[True])
    layout.add_argument("--encoder-decoder", dest="layouts", action="store_const", const=[False])
    parser.add_argument("--profile", action="store_true", help="profile one stacked step")
    args = parser.parse_args()
    layouts = args.layouts or [False, True]
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    data, shape = problem(args.task, args.steps)

    where = torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_model()
    print(f"torch {torch.__version__}, {where}, {torch.get_num_threads()} thread(s), {device}")
    print(
        f"task {args.task}: batch {BATCH} × source {data.src.shape[1]} × target "
        f"{data.tgt_in.shape[1]} tokens; S = {args.members}, {args.steps} steps per member, "
        f"median of {args.repeats}; {args.layers} layers, width {args.width}, {args.heads} "
        f"heads, ffn {args.ffn}, dropout {args.dropout}"
    )

    rows = []
    for decoder_only in layouts:
        config = TransformerSeedConfig(
            width=args.width,
            heads=args.heads,
            layers=args.layers,
            ffn=args.ffn,
            dropout=args.dropout,
            decoder_only=decoder_only,
        )
        model = (config, shape)
        # The stack of one member: what the stacked code gives without stacking.
        sides = ((baseline_rate, args.members), (stacked_rate, args.members), (stacked_rate, 1))
        for rate, members in sides:  # warm-up
            rate(data, model, members, args.steps, device)
        # Interleaved, so that a change of load on a shared machine falls on every side.
        rates = [
            [rate(data, model, members, args.steps, device) for rate, members in sides]
            for _ in range(args.repeats)
        ]
        base, stacked, single = (statistics.median(side) for side in zip(*rates, strict=True))
        name = "decoder-only" if decoder_only else "encoder-decoder"
        rows.append((name, base, stacked, single, flops_per_member_step(data, model, device)))
        if args.profile:
            print(f"\none stacked step, {name}:")
            profile_step(data, model, args.members, device, rows=25)

    peak = matmul_peak(device)
    print(f"\nmatmul peak (2048³ float32, {torch.get_num_threads()} thread(s)): {peak:.1f} GFLOP/s")
    unit, columns = "member-steps/s (GFLOP/s)", ("torch.nn, one at a time", "stacked, S = 1")
    print(
        f"{'layout':<16} {'GFLOP per':>11} {columns[0]:>26} "
        f"{f'stacked, S = {args.members}':>26} {columns[1]:>26}"
    )
    print(f"{'':<16} {'member-step':>11} {unit:>26} {unit:>26} {unit:>26}")
    for name, *measured, flops in rows:
        gflop = flops / 1e9
        cells = " ".join(f"{f'{rate:.2f} ({rate * gflop:.1f})':>26}" for rate in measured)
        print(f"{name:<16} {gflop:>11.2f} {cells}")
    for name, base, stacked, _, _ in rows:
        print(f"{name}: ratio = {stacked / base:.2f}")


if __name__ == "__main__":
    main()
