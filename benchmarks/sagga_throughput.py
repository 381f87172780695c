"""SAGGA's throughput: novel failures archived per CPU-minute, ours against the original loop.

Both sides search the same model with the same recipe (basis, mutation parameters, fitness
`length_penalty`, tau, k-means seed selection, the top-1 candidate of beam 10 checked,
timeouts passing) for `--seconds` of CPU time each, in their own process:
- ours: `run_sagga`, the search with its analysis left no work (mutate in the deadline pool,
  de-duplicate, one batched model call per generation through the query cache, verify in the
  verifier's pool);
- original loop, as SAGGA's code does it: per attempt, mutate one problem and `simplify` it under
  a 1 s alarm; per problem, call the model on it alone, then check it with SymPy (`simplify`
  of the answer, of its derivative and of the difference, `nsimplify` at tolerance 0.001) under
  a 2 s alarm, a timeout counting as solved; archive by printed string.
Ours goes through more generations in the same time, and later generations hold fewer novel
failures (their mutants resemble what is archived), so the benchmark also prints the problems
evaluated per CPU-minute, the cost side alone; and with `--generations G` both sides run the
same G generations instead of `--seconds` (equal work, so novelty decay counts against
neither). CPU time counts the process and its worker
processes (`RUSAGE_CHILDREN` after each side's
process exits). Each side runs `--repeats` times; the medians of novel failures per CPU-minute
are compared and the last line is `speedup = X.X`.

Run: .venv/bin/python benchmarks/sagga_throughput.py --model ckpt:runs/bwd8-small
     [--basis polynomial_robustness] [--mutation-params robustness] [--seconds 120] [--repeats 3]
     [--generations G] [--generation-size 1000] [--mutant-form simplified|automatic]
A model that answers at once, so that only the search's own work is timed:
     --model py:instant_answer:antiderivative (benchmarks/instant_answer.py)
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import sympy as sp

from genprobe.decoding.config import DecodingConfig
from genprobe.studies.search.embedding import make_embedder
from genprobe.studies.search.sagga.breeder import basis
from genprobe.studies.search.sagga.config import SaggaConfig
from genprobe.studies.search.sagga.mutants import judge
from genprobe.studies.search.sagga.results import read_archive, read_state
from genprobe.studies.search.sagga.run import run_sagga
from genprobe.studies.search.selection import select_kmeans
from genprobe.tasks.integration.expression import X, to_sympy
from genprobe.tasks.integration.mutations import MUTATION_PARAMS, mutate
from genprobe.under_test.settings import ModelSettings


class Alarm(Exception):
    pass


def _ring(signum, frame):
    raise Alarm


def within(seconds, function, *args):
    """function(*args), or Alarm after `seconds` (SIGALRM, as the original's decorator)."""
    signal.signal(signal.SIGALRM, _ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return function(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _check(model, problem):
    """SAGGA's run_and_check: True when solved (or timed out)."""
    [candidates] = model.candidates([problem], 1)
    if not candidates or not candidates[0].parsed:
        return False
    f = to_sympy(problem)
    hyp = sp.simplify(to_sympy(candidates[0].answer))
    difference = sp.simplify(f - sp.simplify(hyp.diff(X)))
    return difference == 0 or sp.nsimplify(difference, tolerance=0.001) == 0


def original_loop(config: SaggaConfig, seconds: float) -> tuple[int, int]:
    model = config.model.load(min_beam=1)
    embedder = make_embedder(config.embedding)
    seeds0 = basis(config.as_search())
    seeds, archive = list(seeds0), {}
    rng = np.random.default_rng(config.seed)
    params = MUTATION_PARAMS[config.preset]
    start = time.process_time()
    evaluated = 0
    for generation in range(1, config.generations + 1):
        generation_rows = []
        per_seed = config.generation_size // len(seeds)
        for seed in seeds:
            for _ in range(per_seed):
                try:
                    simplified = within(
                        1, lambda s=seed: sp.simplify(to_sympy(mutate(s, rng, params)))
                    )
                except Alarm:
                    continue
                except Exception:
                    continue
                tree, text = judge(simplified)
                if tree is None:
                    continue
                try:
                    solved = within(2, _check, model, tree)
                except Alarm:
                    solved = True  # the original's generous timeout
                except Exception:
                    solved = False
                evaluated += 1
                fitness = 0.0 if solved else 1 / len(text)
                novel = fitness >= config.tau and text not in archive
                if novel:
                    archive[text] = fitness
                generation_rows.append((tree, text, fitness, novel))
                if time.process_time() - start > seconds:
                    return len(archive), evaluated
        novel = [(t, x, f) for t, x, f, n in generation_rows if n]
        rows = select_kmeans(
            [x for _, x, _ in novel], np.array([f for _, _, f in novel]), embedder,
            size=config.seed_size, clusters=config.clusters, seed=config.seed + generation,
        )  # fmt: skip
        seeds = [novel[i][0] for i in rows] + list(seeds0)
    return len(archive), evaluated


def ours(config: SaggaConfig, seconds: float) -> tuple[int, int]:
    minutes = None if math.isinf(seconds) else seconds / 60
    with tempfile.TemporaryDirectory() as folder:
        idle = replace(config, minutes=minutes, tag_limit=0, nearby_attempts=0)
        run = run_sagga(idle, Path(folder) / "run")
        stats = read_state(run)["stats"]
        return len(read_archive(run)), sum(s["mutants"] for s in stats)


def side(name: str, args: argparse.Namespace) -> dict:
    """Run one side in a child process; its novel failures, CPU and wall seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    command = [sys.executable, __file__, "--side", name, *sys.argv[1:]]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found, evaluated = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "novel": found, "evaluated": evaluated, "cpu": cpu, "wall": wall,
        "per_cpu_minute": found / (cpu / 60), "evaluated_per_cpu_minute": evaluated / (cpu / 60),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--basis", default="polynomial_robustness")
    parser.add_argument("--mutation-params", "--preset", default="robustness")
    parser.add_argument("--seconds", type=float, default=120, help="CPU seconds per side")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--generations", type=int, help="run this many generations, no --seconds")
    parser.add_argument("--generation-size", type=int, default=1000)
    parser.add_argument(
        "--mutant-form", default="simplified", help="ours only: the original always simplifies"
    )
    parser.add_argument("--side", choices=("ours", "original"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    config = SaggaConfig(
        ModelSettings(args.model, DecodingConfig(beam_size=10)), basis=args.basis,
        preset=args.mutation_params, archive_size=10**9, generations=args.generations or 10**6,
        generation_size=args.generation_size, mutant_form=args.mutant_form,
    ).validated()  # fmt: skip
    if args.side:
        search = ours if args.side == "ours" else original_loop
        print(json.dumps(search(config, math.inf if args.generations else args.seconds)))
        return
    effort = f"{args.generations} generations" if args.generations else f"{args.seconds:.0f} CPU s"
    print(f"{args.model}, basis {args.basis}, mutation parameters {args.mutation_params}, "
          f"{effort} per side, ours with {args.mutant_form} mutants", flush=True)  # fmt: skip
    results = {"ours": [], "original": []}
    for repeat in range(args.repeats):
        for name in results:
            results[name].append(side(name, args))
            r = results[name][-1]
            print(
                f"{name:9s} run {repeat + 1}: {r['novel']} novel failures of {r['evaluated']} "
                f"problems evaluated, {r['cpu']:.0f} CPU s, {r['wall']:.0f} wall s: "
                f"{r['per_cpu_minute']:.1f} novel per CPU-minute", flush=True
            )  # fmt: skip
    medians = {n: statistics.median(r["per_cpu_minute"] for r in rs) for n, rs in results.items()}
    evaluated = {
        n: statistics.median(r["evaluated_per_cpu_minute"] for r in rs) for n, rs in results.items()
    }
    ratio = evaluated["ours"] / evaluated["original"]
    print(f"median problems evaluated per CPU-minute: ours {evaluated['ours']:.0f}, original "
          f"loop {evaluated['original']:.0f} ({ratio:.1f}x)")  # fmt: skip
    print(f"median novel failures per CPU-minute: ours {medians['ours']:.1f}, "
          f"original loop {medians['original']:.2f}")  # fmt: skip
    print(f"speedup = {medians['ours'] / max(medians['original'], 1e-9):.1f}")


if __name__ == "__main__":
    main()
