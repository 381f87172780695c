"""Data generation: pairs per CPU-second, genprobe's engines against Lample & Charton's, in one run.

Each method makes `--attempts` attempts per round with Lample & Charton's settings (the
integration operators and weights, integers 1..5, `--max-ops`), single-threaded, in
`--rounds` interleaved rounds; the median of the rounds' pairs per CPU-second is reported.

- `fast`: `GeneratorConfig(engine="fast")`, genprobe's own terms, derivative and factoring;
- `sympy`: `GeneratorConfig(engine="sympy")`, the straightforward SymPy path (the baseline);
- `lc` (with `--lc-repo PATH`, a checkout of facebookresearch/SymbolicMathematics, never part
  of this repository; it needs `numexpr`): their `CharSPEnvironment.gen_prim_bwd`.

It also prints how often the fast engine left a node to SymPy (`canonical.delegations`), by
kind. The distributions are compared on the pairs each method made: input (f) and output (F) length
in tokens, operators in F, and the share of pairs whose f is not the plain derivative of F
(what simplification changed; our derivative of F, rebuilt from the tokens, is SymPy's
canonical one). A two-sample Kolmogorov-Smirnov statistic is printed for each length.

BWD only compares like with like here: FWD and IBP have no fast engine yet and are measured
with `--method fwd|ibp` (ours only). The last line is `speedup = X` (fast ÷ lc, else fast ÷
sympy).

Run: .venv/bin/python benchmarks/generator_throughput.py [--lc-repo /tmp/lc] [--attempts 200]
     [--rounds 3] [--max-ops 15] [--method bwd]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import ks_2samp

from genprobe.tasks.integration import canonical, terms
from genprobe.tasks.integration.derivative import derivative
from genprobe.tasks.integration.generators import GeneratorConfig, attempt
from genprobe.tasks.integration.prefix import from_prefix, strip_problem_prefix, to_prefix
from genprobe.tasks.integration.random_trees import INTEGRATION_OPERATORS
from genprobe.tasks.integration.vocab import OPERATOR_TOKENS

_OPERATORS = frozenset(OPERATOR_TOKENS)


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)  # CPU seconds per round
    counts: list[int] = field(default_factory=list)  # pairs per round
    pairs: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (f, F) tokens

    def rate(self) -> float:
        return statistics.median(n / s for n, s in zip(self.counts, self.seconds, strict=True))


def ours(engine: str, method: str, max_ops: int) -> callable:
    config = GeneratorConfig(method=method, max_ops=max_ops, engine=engine)
    cache: dict[str, str] = {}

    def run(seed: int, attempts: int) -> list[tuple[list[str], list[str]]]:
        pairs = []
        for index in range(attempts):
            outcome = attempt((config, cache), (seed, index))
            if outcome.status == "ok":
                f = list(strip_problem_prefix(outcome.input.split()))
                pairs.append((f, outcome.output.split()))
        return pairs

    return run


def lample_charton(repo: str, max_ops: int) -> callable:
    sys.path.insert(0, repo)
    from src.envs.char_sp import CharSPEnvironment

    operators = ",".join(f"{op}:{int(w)}" for op, w in INTEGRATION_OPERATORS.items())
    params = types.SimpleNamespace(
        operators=operators, max_ops=max_ops, max_ops_G=4, max_int=5, int_base=10,
        balanced=False, precision=10, positive=True, rewrite_functions="",
        leaf_probs="0.75,0,0.25,0", n_variables=1, n_coefficients=0, clean_prefix_expr=True,
        max_len=512, env_base_seed=0, tasks="prim_bwd",
    )  # fmt: skip
    env = CharSPEnvironment(params)

    def run(seed: int, attempts: int) -> list[tuple[list[str], list[str]]]:
        rng = np.random.RandomState(seed)
        pairs = []
        for _ in range(attempts):
            try:
                pair = env.gen_prim_bwd(rng, predict_primitive=True)
            except Exception:  # their timeout or a SymPy error: a failed attempt, as in their loop
                continue
            if pair is not None:
                pairs.append((list(strip_problem_prefix(pair[0])), list(pair[1])))
        return pairs

    return run


def plain_derivative(big_f: list[str]) -> list[str] | None:
    try:
        term = canonical.from_tree(from_prefix(big_f))
        return to_prefix(terms.to_tree(derivative(term)))
    except Exception:  # outside the terms' language (Abs, a huge power): not counted
        return None


def describe(name: str, sample: Sample) -> dict[str, np.ndarray]:
    f_len = np.array([len(f) for f, _ in sample.pairs])
    big_f_len = np.array([len(big_f) for _, big_f in sample.pairs])
    ops = np.array([sum(t in _OPERATORS for t in big_f) for _, big_f in sample.pairs])
    plain = [(plain_derivative(big_f), f) for f, big_f in sample.pairs]
    changed = [d != f for d, f in plain if d is not None]
    print(
        f"{name:>6}: {sum(sample.counts):5d} pairs  {sample.rate():7.1f} pairs/CPU-s  "
        f"f len {f_len.mean():5.1f} (median {np.median(f_len):4.0f})  "
        f"F len {big_f_len.mean():5.1f} (median {np.median(big_f_len):4.0f})  "
        f"F ops {ops.mean():4.1f}  simplified {np.mean(changed):.2f}"
    )
    return {"f": f_len, "F": big_f_len, "ops": ops}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lc-repo", help="also run Lample & Charton's generator from here")
    parser.add_argument("--attempts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-ops", type=int, default=15)
    parser.add_argument("--method", default="bwd", choices=("fwd", "bwd", "ibp"))
    args = parser.parse_args()

    methods = {"fast": ours("fast", args.method, args.max_ops)}
    if args.method == "bwd":
        methods["sympy"] = ours("sympy", args.method, args.max_ops)
        if args.lc_repo:
            methods["lc"] = lample_charton(args.lc_repo, args.max_ops)
    samples = {name: Sample() for name in methods}
    for round_ in range(args.rounds):
        for name, run in methods.items():
            start = time.process_time()
            pairs = run(1000 + round_, args.attempts)
            samples[name].seconds.append(time.process_time() - start)
            samples[name].counts.append(len(pairs))
            samples[name].pairs += pairs
    print(f"{args.method}, max_ops {args.max_ops}, {args.attempts} attempts x {args.rounds} rounds")
    if args.method == "bwd":  # only the fast engine builds canonical terms in the loop above
        attempts = args.attempts * args.rounds
        kinds = ", ".join(f"{k} {n / attempts:.2f}" for k, n in canonical.delegations.most_common())
        print(f"nodes the fast engine asked SymPy for (most from its cache), per attempt: {kinds}")
    stats = {name: describe(name, sample) for name, sample in samples.items()}
    for name in stats:
        if name != "fast":
            for key in ("f", "F", "ops"):
                ks = ks_2samp(stats["fast"][key], stats[name][key])
                print(f"KS fast vs {name} on {key}: D = {ks.statistic:.3f}, p = {ks.pvalue:.2f}")
    reference = "lc" if "lc" in samples else "sympy" if "sympy" in samples else None
    if reference:
        ratio = samples["fast"].rate() / samples[reference].rate()
        print(f"speedup = {ratio:.1f} (fast / {reference})")


if __name__ == "__main__":
    main()
