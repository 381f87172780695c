"""Decoding and verification of brittleness shards in turn, overlapped, and adaptive, in one run.

The three paths run `studies.brittleness.solve.solve` on the same problems with the same model
and verifier settings (beam and k from the options, verification in rank windows, stopping at
the first correct candidate) as one worker runs a solve stage: one verifier pool and one
schedule for all its shards of `--shard-size` problems, a fresh worker (pool started cold) for
each repeat. Only the schedule (`studies.brittleness.schedule`) differs:
- sequential (`--overlap off`): each batch decoded, then its candidates verified;
- overlapped (`--overlap on`): the pool verifies batch b while the model decodes batch b + 1;
- adaptive (`--overlap auto`): both timed on the first steps, then the faster kept.
The problems are the `robustness-simple` suite at `--n` (SAGGA's simple primitives), the work
a brittleness run does most. The model is a checkpoint (`--model ckpt:PATH` or `lc:PATH`) or,
by default, beam_throughput's random-weight `small` transformer: its candidates are meaningless
and do not parse, so the verifier has little to do; a trained checkpoint gives it real work.
Each path runs `--repeats` times, the paths taking turns. Printed: each path's median, the
adaptive path's choice in each repeat (the line a run logs), whether the paths gave the same
verdicts and ranks, and last `adaptive vs best = X.XX`: the faster fixed path's median over
the adaptive path's (1.00: as fast as the better fixed choice; below: the price of probing).

Run: .venv/bin/python benchmarks/solve_overlap.py [--model ckpt:PATH] [--n 10]
     [--beam 10] [--repeats 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from beam_throughput import EOS_BIAS, random_model

from genprobe.decoding.config import DecodingConfig
from genprobe.studies.brittleness.schedule import Schedule
from genprobe.studies.brittleness.solve import read_problems, solve
from genprobe.tasks.integration.suites import robustness_simple
from genprobe.tasks.integration.task import IntegrationTask
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.under_test.adapters.integration_tokens import (
    IntegrationSequenceModel,
    load_integration_model,
)
from genprobe.under_test.adapters.seq2seq import Seq2SeqModel
from genprobe.under_test.settings import ModelSettings

PATHS = {"sequential": "off", "overlapped": "on", "adaptive": "auto"}


def worker(model, problems, k, batch_size, shard_size, schedule) -> list[tuple]:
    """One worker's solve stage; the verdicts and ranks of every problem."""
    rows = []
    with Verifier(VerifierConfig()) as verifier:
        for start in range(0, len(problems), shard_size):
            shard = problems[start : start + shard_size]
            table = solve(model, verifier, "bench", shard, k, batch_size, False, schedule)
            rows += table.to_pylist()
    return [
        (r["row"], r["first_correct_rank"], r["first_generous_rank"],
         [(c["rank"], c["outcome"], c["method"]) for c in r["candidates"]])
        for r in rows
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="ckpt:PATH or lc:PATH [default: random weights]")
    parser.add_argument("--n", type=int, default=10, help="robustness-simple's N")
    parser.add_argument("--beam", type=int, default=10)
    parser.add_argument("--max-len", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--shard-size", type=int, default=256, help="a brittleness run's")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="random model")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch's")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    suite = robustness_simple(n=args.n)
    problems = read_problems(
        suite[["problem", "reference"]].assign(row=suite.index).to_dict("records")
    )
    decoding = DecodingConfig(beam_size=args.beam, max_len=args.max_len, batch_size=args.batch_size)
    if args.model:
        model = load_integration_model(ModelSettings(args.model, decoding))
    else:
        network = random_model(args.seed, EOS_BIAS, "small")
        random = Seq2SeqModel(network, decoding, "cpu", name="random small")
        model = IntegrationSequenceModel(random, IntegrationTask(), random.name)
    print(f"{len(problems)} problems, beam {args.beam}, k {args.beam}, batch {args.batch_size}, "
          f"shards of {args.shard_size}, {torch.get_num_threads()} torch threads, "
          f"{model.members[0]}")  # fmt: skip
    timings: dict[str, list[float]] = {name: [] for name in PATHS}
    results, choices = {}, []
    for _ in range(args.repeats):
        for name, overlap in PATHS.items():
            notes: list[str] = []
            schedule = Schedule(overlap, note=notes.append)
            start = time.perf_counter()
            results[name] = worker(
                model, problems, args.beam, args.batch_size, args.shard_size, schedule
            )
            timings[name].append(time.perf_counter() - start)
            if name == "adaptive":
                choices.append("; ".join(notes) or "no choice made (too few batches)")
    medians = {name: statistics.median(values) for name, values in timings.items()}
    for name, seconds in medians.items():
        print(f"{name}: {seconds:.2f} s (median of {args.repeats}; "
              f"{' '.join(f'{s:.2f}' for s in timings[name])}), "
              f"{len(problems) / seconds:.1f} problems/s")  # fmt: skip
    for repeat, choice in enumerate(choices, 1):
        print(f"adaptive, repeat {repeat}: {choice}")
    same = results["sequential"] == results["overlapped"] == results["adaptive"]
    print(f"same verdicts and ranks: {same}")
    best = min(medians["sequential"], medians["overlapped"])
    print(f"adaptive vs best = {best / medians['adaptive']:.2f}")


if __name__ == "__main__":
    main()
