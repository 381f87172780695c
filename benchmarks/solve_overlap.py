"""Decoding and verification overlapped (a brittleness shard) against one after the other.

Both paths give the same problems to the same model and verifier settings (beam and k from the
options, verification in rank windows, stopping at the first correct candidate):
- overlapped: `studies.brittleness.solve.solve`, the verifier pool checking batch b while the
  model decodes batch b + 1;
- sequential: every batch decoded first, then every candidate verified (`verify_ranked`), the
  straightforward way.
The problems are the `robustness-simple` suite at `--n` (SAGGA's simple primitives), the work
a brittleness run does most. Each path runs `--repeats` times (verifier pool started cold each
time); the medians are compared and the last line is `speedup = X.XX`.

Run: .venv/bin/python benchmarks/solve_overlap.py --model ckpt:runs/bwd8-small [--n 3]
     [--beam 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from genprobe.decoding.config import DecodingConfig
from genprobe.models.settings import ModelSettings
from genprobe.studies.brittleness.solve import read_problems, solve
from genprobe.tasks.integration.suites import robustness_simple
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.verification.ranked import verify_ranked


def sequential(model, problems, k, batch_size):
    found = []
    for start in range(0, len(problems), batch_size):
        found += model.candidates([p.problem for p in problems[start : start + batch_size]], k)
    answers = [[c.answer for c in candidates] for candidates in found]
    with Verifier(VerifierConfig()) as verifier:
        return verify_ranked([p.problem for p in problems], answers, verifier.verify_many, k)


def overlapped(model, problems, k, batch_size):
    with Verifier(VerifierConfig()) as verifier:
        return solve(model, verifier, "bench", problems, k, batch_size, score_references=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="ckpt:PATH or lc:PATH")
    parser.add_argument("--n", type=int, default=3, help="robustness-simple's N")
    parser.add_argument("--beam", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    suite = robustness_simple(n=args.n)
    problems = read_problems(
        suite[["problem", "reference"]].assign(row=suite.index).to_dict("records")
    )
    decoding = DecodingConfig(beam_size=args.beam, batch_size=args.batch_size)
    model = ModelSettings(args.model, decoding).load()
    print(f"{len(problems)} problems, beam {args.beam}, k {args.beam}, {args.model}")
    timings = {"sequential": [], "overlapped": []}
    results = {}
    for _ in range(args.repeats):
        for name, path in (("sequential", sequential), ("overlapped", overlapped)):
            start = time.perf_counter()
            results[name] = path(model, problems, args.beam, args.batch_size)
            timings[name].append(time.perf_counter() - start)
    ranks_sequential = [r.first_correct for r in results["sequential"]]
    ranks_overlapped = results["overlapped"].column("first_correct_rank").to_pylist()
    print(f"same first correct ranks: {ranks_sequential == ranks_overlapped}")
    medians = {name: statistics.median(values) for name, values in timings.items()}
    for name, seconds in medians.items():
        print(f"{name}: {seconds:.2f} s (median of {args.repeats}), "
              f"{len(problems) / seconds:.1f} problems/s")  # fmt: skip
    print(f"speedup = {medians['sequential'] / medians['overlapped']:.2f}")


if __name__ == "__main__":
    main()
