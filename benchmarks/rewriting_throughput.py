"""Training throughput: one nn.LSTM model at a time vs the seed-stacked trainer, and how
close the stacked trainer comes to the machine's matmul peak.

Member-steps/s = SGD steps per second × models trained by each step. The baseline is what a
typical re-implementation does: an `nn.Module` with `nn.Embedding`, `nn.LSTM` encoder and
decoder, Luong general attention and a linear output layer, trained one seed after another on
all cores. Both sides use the same data, batch 64, dropout 0.1, summed-token loss / sequences,
SGD 0.125, gradient-norm clip 5.

Measured in the same run: the baseline; 50 members as one stack on all cores (the first
version's layout); 50 members as one single-threaded stack per core, run at once (what a sweep
does now: `--seeds-per-shard`, `--workers`); the FLOPs of one member-step, counted by
`torch.utils.flop_counter` from the real shapes (the matmuls of forward and backward); the
machine's matmul peak (a 2048³ float32 matmul on all cores). Prints medians over repeats; the
last lines are `speedup_S50 = X.X` and `peak_fraction = Y.YY`.

`--profile` also splits a single-threaded stack's step (MEMBERS / cores members, the sweep's
layout) by kind of op (self CPU time under torch's profiler): matmuls, the transcendental
functions (tanh, sigmoid, exp, softmax), copies and the rest. It prints the peak fraction that
layout would reach if its step did nothing but its matmuls, and nothing but its matmuls and
transcendental functions (their profiled seconds against the same steps' unprofiled time): the
ceilings of removing overhead.

    python benchmarks/rewriting_throughput.py [--steps 20] [--repeats 3] [--profile]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import torch
import torch.nn.functional as F
from op_profile import op_seconds
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from genprobe.data.seq2seq import PAD, encode
from genprobe.models.architectures import ModelShape
from genprobe.models.architectures.recurrent import RecurrentConfig
from genprobe.tasks.rewriting.suites import generate
from genprobe.training.trainer import SweepTrainer, TrainConfig

BATCH = 64
# The rewriting task's: 40 symbols + padding; 240 output tokens + PAD, BOS, EOS.
SHAPE = ModelShape(src_vocab=41, tgt_vocab=243, src_len=10, tgt_len=31, max_positions=60)


class Baseline(nn.Module):
    def __init__(self, c: RecurrentConfig) -> None:
        super().__init__()
        self.src_emb = nn.Embedding(SHAPE.src_vocab, c.emb, padding_idx=PAD)
        self.tgt_emb = nn.Embedding(SHAPE.tgt_vocab, c.emb, padding_idx=PAD)
        self.encoder = nn.LSTM(c.emb, c.hidden, batch_first=True)
        self.decoder = nn.LSTM(c.emb, c.hidden, batch_first=True)
        self.attn = nn.Linear(c.hidden, c.hidden, bias=False)
        self.out = nn.Linear(2 * c.hidden, c.hidden, bias=False)
        self.gen = nn.Linear(c.hidden, SHAPE.tgt_vocab)
        self.drop = nn.Dropout(c.dropout)
        for p in self.parameters():
            nn.init.uniform_(p, -c.init_range, c.init_range)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        lengths = (src != PAD).sum(1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(
            self.drop(self.src_emb(src)), lengths, batch_first=True, enforce_sorted=False
        )
        enc, state = self.encoder(packed)
        enc, _ = nn.utils.rnn.pad_packed_sequence(enc, batch_first=True, total_length=src.shape[1])
        dec, _ = self.decoder(self.drop(self.tgt_emb(tgt_in)), state)
        scores = self.attn(dec) @ enc.transpose(1, 2)
        scores = scores.masked_fill((src == PAD).unsqueeze(1), float("-inf"))
        context = torch.softmax(scores, -1) @ enc
        return self.gen(self.drop(torch.tanh(self.out(torch.cat([context, dec], -1)))))


def baseline_rate(
    data, config: RecurrentConfig, steps: int, device: str | torch.device = "cpu", warmup: int = 0
) -> float:
    """Steps/s of one `Baseline` model, timed after `warmup` untimed steps."""
    model = Baseline(config).to(device)
    data = data.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.125)
    order = torch.randperm(len(data), generator=torch.Generator().manual_seed(0)).to(device)
    for step in range(warmup + steps):
        if step == warmup:
            synchronize(device)
            start = time.perf_counter()
        nn_step(model, opt, data, order[step * BATCH : (step + 1) * BATCH], 5.0)
    synchronize(device)
    return steps / (time.perf_counter() - start)


def nn_step(model: nn.Module, opt, data, idx: torch.Tensor, max_grad_norm: float) -> None:
    """One torch.nn training step on examples `idx`: summed token loss / batch, clipped."""
    logits = model(data.src[idx], data.tgt_in[idx])
    loss = F.cross_entropy(
        logits.flatten(0, 1), data.tgt_out[idx].flatten(), ignore_index=PAD, reduction="sum"
    )
    opt.zero_grad()
    (loss / len(idx)).backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    opt.step()


def synchronize(device: str | torch.device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


MEMBERS = 50


def stacked_trainer(data, config: RecurrentConfig, members: int) -> SweepTrainer:
    return SweepTrainer(
        config, SHAPE, TrainConfig(batch_size=BATCH), list(range(members)), data, lambda m: None
    )


def stacked_rate(data, config: RecurrentConfig, members: int, steps: int) -> float:
    trainer = stacked_trainer(data, config, members)
    order = trainer._epoch_order()
    start = time.perf_counter()
    for step in range(steps):
        trainer._train_step(order[:, step * BATCH : (step + 1) * BATCH])
    return members * steps / (time.perf_counter() - start)


def flops_per_member_step(data, config: RecurrentConfig) -> int:
    trainer = stacked_trainer(data, config, 1)
    with FlopCounterMode(display=False) as counter:
        trainer._train_step(trainer._epoch_order()[:, :BATCH])
    return counter.get_total_flops()


def matmul_peak() -> float:
    """GFLOP/s of a 2048³ float32 matmul on all cores (median of 5)."""
    a = torch.randn(2048, 2048)
    a @ a

    def once() -> float:
        start = time.perf_counter()
        a @ a
        return 2 * 2048**3 / (time.perf_counter() - start) / 1e9

    return statistics.median(once() for _ in range(5))


TRANSCENDENTAL = "tanh, sigmoid, exp"
# kinds of op for --profile: aten op name -> kind (anything else is "other")
OP_KINDS = {
    **dict.fromkeys(("aten::bmm", "aten::baddbmm", "aten::mm", "aten::addmm"), "matmuls"),
    **dict.fromkeys(
        ("aten::tanh", "aten::sigmoid", "aten::exp", "aten::exp_", "aten::_log_softmax"),
        TRANSCENDENTAL,
    ),
    "aten::_softmax": TRANSCENDENTAL,
    **dict.fromkeys(("aten::copy_", "aten::cat"), "copies"),
}


def step_profile(
    data, config: RecurrentConfig, members: int, steps: int
) -> tuple[float, dict[str, float]]:
    """`steps` training steps of one single-threaded stack, after a warm-up: their wall
    seconds, then their `op_seconds`."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    trainer = stacked_trainer(data, config, members)
    order = trainer._epoch_order()

    def train() -> None:
        for step in range(steps):
            trainer._train_step(order[:, step * BATCH : (step + 1) * BATCH])

    train()
    start = time.perf_counter()
    train()
    wall = time.perf_counter() - start
    seconds = op_seconds(train, OP_KINDS)
    torch.set_num_threads(threads)
    return wall, seconds


def _worker_rates(members: int, steps: int, repeats: int) -> list[float]:
    torch.set_num_threads(1)
    data, config = problem(steps)
    stacked_rate(data, config, members, steps)  # warm-up
    return [stacked_rate(data, config, members, steps) for _ in range(repeats)]


def per_core_rates(cores: int, steps: int, repeats: int) -> list[float]:
    """Aggregate member-steps/s of `cores` single-threaded stacks of MEMBERS/cores run at once."""
    with ProcessPoolExecutor(cores, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [
            pool.submit(_worker_rates, MEMBERS // cores, steps, repeats) for _ in range(cores)
        ]
        per_worker = [f.result() for f in futures]
    return [sum(rates) for rates in zip(*per_worker, strict=True)]


def problem(steps: int):
    train = generate("train", BATCH * steps * 2, seed=0)
    return encode(train.src, train.tgt), RecurrentConfig()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="split the step by kind of op")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    data, config = problem(args.steps)
    print(f"torch {torch.__version__}, {cores} cores, {args.steps} steps, {args.repeats} repeats")

    def median(measure) -> float:
        measure()  # warm-up
        return statistics.median(measure() for _ in range(args.repeats))

    base = median(lambda: baseline_rate(data, config, args.steps))
    print(f"baseline nn.LSTM, one model at a time:      {base:8.1f} member-steps/s")
    one_stack = median(lambda: stacked_rate(data, config, MEMBERS, args.steps))
    print(
        f"one stack of {MEMBERS}, {torch.get_num_threads()} threads:             "
        f"{one_stack:8.1f} member-steps/s ({one_stack / base:.1f}x)"
    )
    split = statistics.median(per_core_rates(cores, args.steps, args.repeats))
    print(
        f"{cores} stacks of {MEMBERS // cores}, one thread each, at once: "
        f"{split:8.1f} member-steps/s ({split / base:.1f}x)"
    )
    flops = flops_per_member_step(data, config)
    peak = matmul_peak()
    achieved = max(one_stack, split) * flops / 1e9
    print(f"FLOPs per member-step (matmuls, fwd + bwd): {flops / 1e6:8.1f} MFLOP")
    print(f"achieved: {achieved:.1f} GFLOP/s; matmul peak (2048^3, {cores} cores): {peak:.1f}")
    if args.profile:
        members = MEMBERS // cores
        wall, seconds = step_profile(data, config, members, min(args.steps, 5))
        print(f"one thread, {members} members, self CPU time by kind of op:")
        for kind, spent in seconds.items():
            print(f"  {kind:20s} {100 * spent / sum(seconds.values()):5.1f}%")
        rate = members * min(args.steps, 5) / wall  # member-steps/s, unprofiled
        print(f"one thread alone: {rate:.1f} member-steps/s")
        per_core_peak = peak / cores
        for only in (["matmuls"], ["matmuls", TRANSCENDENTAL]):
            bound = rate * flops / 1e9 / per_core_peak * wall / sum(seconds[k] for k in only)
            print(f"peak fraction if the step did only its {' and '.join(only)}: {bound:.2f}")
    print(f"speedup_S50 = {max(one_stack, split) / base:.1f}")
    print(f"peak_fraction = {achieved / peak:.2f}")


if __name__ == "__main__":
    main()
