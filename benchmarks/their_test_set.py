"""Held-out integration problems made by Lample & Charton's own generator, for `genprobe
integration evaluate --data`: is a model strong on their distribution, not only on ours?

Their `gen_prim_bwd` or `gen_prim_fwd` (`--lc-repo PATH`, a checkout of
facebookresearch/SymbolicMathematics run beside ours, never part of this repository; it needs
`numexpr`) at genprobe's settings (their operators and weights, integers 1..5, `--max-ops`),
seeded with `--seed`, until `--n` distinct problems are made; a problem whose integrand is in
an `--exclude` file (the model's training data, any format `read_dataset` reads) is dropped.
Written in their text format (`count|sub Y' f<TAB>F`), with how many attempts it took, how many
pairs were repeats and how many were excluded.

Run: .venv/bin/python benchmarks/their_test_set.py --lc-repo /tmp/lc --method bwd --n 2000 \
         --max-ops 6 --exclude data/mix6.txt.train --out data/their-bwd6.txt
     genprobe integration evaluate --model bundled:integration-cpu --data data/their-bwd6.txt
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np
from generator_throughput import lc_environment

from genprobe.tasks.integration.datasets import read_dataset, write_dataset
from genprobe.tasks.integration.generation import Row
from genprobe.tasks.integration.prefix import PROBLEM_PREFIX, strip_problem_prefix


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lc-repo", required=True, help="their code, checked out here")
    parser.add_argument("--method", default="bwd", choices=("bwd", "fwd"))
    parser.add_argument("--n", type=int, default=1000, help="distinct problems wanted")
    parser.add_argument("--max-ops", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exclude", action="append", default=[], help="a training file")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    env = lc_environment(args.lc_repo, args.max_ops, f"prim_{args.method}")
    from src.utils import TimeoutError as TheirTimeout  # a BaseException

    make = env.gen_prim_bwd if args.method == "bwd" else env.gen_prim_fwd
    arguments = (True,) if args.method == "bwd" else ()  # BWD: predict the primitive
    seen = {_integrand(row.input) for path in args.exclude for row in read_dataset(path)}
    rng = np.random.RandomState(args.seed)
    made: dict[str, str] = {}  # integrand -> primitive, in the order made
    counts: Counter[str] = Counter()
    attempts = excluded = 0
    while len(made) < args.n:
        attempts += 1
        try:
            pair = make(rng, *arguments)
        except (Exception, TheirTimeout):  # a SymPy error or their timeout, as in their loop
            continue
        if pair is None:
            continue
        f = " ".join(map(str, strip_problem_prefix(list(map(str, pair[0])))))
        if f in seen:
            excluded += 1
            continue
        counts[f] += 1
        made.setdefault(f, " ".join(map(str, pair[1])))
    rows = [Row(" ".join([*PROBLEM_PREFIX, f]), big_f, counts[f]) for f, big_f in made.items()]
    repeats = sum(counts.values()) - len(made)
    write_dataset(rows, args.out)
    print(
        f"{len(rows)} {args.method} problems from their generator in {attempts} attempts "
        f"({repeats} repeats, {excluded} in the excluded files): {args.out}"
    )


def _integrand(text: str) -> str:
    return " ".join(strip_problem_prefix(text.split()))


if __name__ == "__main__":
    main()
