"""Training throughput: one nn.LSTM model at a time vs the seed-stacked trainer.

Member-steps/s = SGD steps per second × models trained by each step. The baseline is what a
typical re-implementation does: an `nn.Module` with `nn.Embedding`, `nn.LSTM` encoder and
decoder, Luong general attention and a linear output layer, trained one seed after another.
Both sides use the same data, batch 64, dropout 0.1, summed-token loss / sequences, SGD 0.125,
gradient-norm clip 5. Prints medians over repeats; the last line is `speedup_S50 = X.X`.

    python benchmarks/rewriting_throughput.py [--steps 20] [--repeats 3] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from genprobe.data.seq2seq import PAD, encode
from genprobe.models.recurrent import RecurrentConfig
from genprobe.tasks.rewriting.suites import generate
from genprobe.training.trainer import SweepTrainer, TrainConfig

BATCH = 64


class Baseline(nn.Module):
    def __init__(self, c: RecurrentConfig) -> None:
        super().__init__()
        self.src_emb = nn.Embedding(c.src_vocab, c.emb, padding_idx=PAD)
        self.tgt_emb = nn.Embedding(c.tgt_vocab, c.emb, padding_idx=PAD)
        self.encoder = nn.LSTM(c.emb, c.hidden, batch_first=True)
        self.decoder = nn.LSTM(c.emb, c.hidden, batch_first=True)
        self.attn = nn.Linear(c.hidden, c.hidden, bias=False)
        self.out = nn.Linear(2 * c.hidden, c.hidden, bias=False)
        self.gen = nn.Linear(c.hidden, c.tgt_vocab)
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


def baseline_rate(data, config: RecurrentConfig, steps: int) -> float:
    model = Baseline(config)
    opt = torch.optim.SGD(model.parameters(), lr=0.125)
    order = torch.randperm(len(data), generator=torch.Generator().manual_seed(0))
    start = time.perf_counter()
    for step in range(steps):
        idx = order[step * BATCH : (step + 1) * BATCH]
        logits = model(data.src[idx], data.tgt_in[idx])
        loss = F.cross_entropy(
            logits.flatten(0, 1), data.tgt_out[idx].flatten(), ignore_index=PAD, reduction="sum"
        )
        opt.zero_grad()
        (loss / BATCH).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
    return steps / (time.perf_counter() - start)


def stacked_rate(data, config: RecurrentConfig, members: int, steps: int) -> float:
    trainer = SweepTrainer(
        config, TrainConfig(batch_size=BATCH), list(range(members)), data, lambda m: None
    )
    order = trainer._epoch_order()
    start = time.perf_counter()
    for step in range(steps):
        trainer._train_step(order[:, step * BATCH : (step + 1) * BATCH])
    return members * steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    train = generate("train", BATCH * args.steps * 2, seed=0)
    data = encode(train.src, train.tgt)
    config = RecurrentConfig(src_vocab=41, tgt_vocab=243)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.steps} steps")

    def median(measure) -> float:
        measure()  # warm-up
        return statistics.median(measure() for _ in range(args.repeats))

    base = median(lambda: baseline_rate(data, config, args.steps))
    print(f"baseline nn.LSTM, one model at a time: {base:8.1f} member-steps/s")
    rates = {}
    for members in (1, 10, 50):
        rates[members] = median(lambda m=members: stacked_rate(data, config, m, args.steps))
        print(
            f"stacked trainer, S = {members:2d}:            {rates[members]:8.1f} member-steps/s "
            f"({rates[members] / base:.1f}x)"
        )
    print(f"speedup_S50 = {rates[50] / base:.1f}")


if __name__ == "__main__":
    main()
