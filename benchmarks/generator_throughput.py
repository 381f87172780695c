"""Data generation: pairs per CPU-second, genprobe's engines against Lample & Charton's, in one
run; and, with `--paired N`, the pairs each makes of the same random expressions.

Each method makes `--attempts` attempts per round with Lample & Charton's settings (the
integration operators and weights, integers 1..5, `--max-ops`), single-threaded, in
`--rounds` interleaved rounds, ours under the deadline pool's CPU budget per attempt; the
median of the rounds' pairs per CPU-second is reported.

- `lc`: `GeneratorConfig(engine="lc")` (the default): their forms, F and F' on genprobe's own
  terms, SymPy's `simplify` for BWD, `doit` after FWD's Risch;
- `fast`: `GeneratorConfig(engine="fast")`: the same terms, genprobe's own cheap simplifier,
  no FWD `doit` (another distribution);
- `sympy` (BWD): `GeneratorConfig(engine="sympy")`, SymPy throughout (the straightforward
  baseline);
- `theirs` (with `--lc-repo PATH`, a checkout of facebookresearch/SymbolicMathematics, never
  part of this repository; it needs `numexpr`): their `CharSPEnvironment.gen_prim_bwd` or
  `gen_prim_fwd`.

It also prints how often our terms left a node to SymPy (`canonical.delegations`), by kind.
The distributions are compared on the pairs each method made: input (f) and output (F) length
in tokens, operators in F, and for BWD the share of pairs whose f is not the plain derivative
of F (what simplification changed; our derivative of F, rebuilt from the tokens, is SymPy's
canonical one). A two-sample Kolmogorov-Smirnov statistic is printed for each length.

`--paired N` (with `--lc-repo`): N random expressions drawn by their `_generate_expr`, each
made into a pair by their generator (fed the expression and its choices through `Scripted`)
and by ours (`backward_pair`, `forward_pair`); printed: who kept each, the share of pairs
with F and f identical token for token (Wilson interval), for BWD the share of derivatives
`simplify` rewrote on each side, the CPU seconds of each side, and up to five pairs that
differ. `--trees N` compares the random expressions alone: N drawn by their `_generate_expr`
and N by our `random_expression`, their lengths and token frequencies. The last line is
`speedup = X` (lc ÷ theirs, else lc ÷ sympy or fast).

Run: .venv/bin/python benchmarks/generator_throughput.py [--lc-repo /tmp/lc] [--attempts 200]
     [--rounds 3] [--max-ops 15] [--method bwd|fwd|ibp] [--paired 2000] [--trees 60000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import binomtest, chi2_contingency, ks_2samp

from genprobe.runs.cpu_limit import cpu_limit
from genprobe.tasks.integration import canonical, terms
from genprobe.tasks.integration.derivative import derivative
from genprobe.tasks.integration.expression import to_sympy
from genprobe.tasks.integration.generation_config import (
    DEFAULT_DEADLINES,
    ENGINES,
    INTEGRATION_OPERATORS,
    GeneratorConfig,
)
from genprobe.tasks.integration.generators import Attempt, attempt, backward_pair, forward_pair
from genprobe.tasks.integration.prefix import from_prefix, strip_problem_prefix, to_prefix
from genprobe.tasks.integration.random_trees import random_expression
from genprobe.tasks.integration.vocab import OPERATOR_TOKENS

_OPERATORS = frozenset(OPERATOR_TOKENS)


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)  # CPU seconds per round
    counts: list[int] = field(default_factory=list)  # pairs per round
    pairs: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (f, F) tokens

    def rate(self) -> float:
        return statistics.median(n / s for n, s in zip(self.counts, self.seconds, strict=True))


class OutOfTime(BaseException):  # not an Exception: the generator's handlers let it through
    pass


def ours(engine: str, method: str, max_ops: int) -> callable:
    config = GeneratorConfig(method=method, max_ops=max_ops, engine=engine)
    cache: dict[str, str] = {}

    def run(seed: int, attempts: int) -> list[tuple[list[str], list[str]]]:
        pairs = []
        for index in range(attempts):
            try:
                with cpu_limit(DEFAULT_DEADLINES[method], OutOfTime, "ITIMER_PROF"):
                    outcome = attempt((config, cache), (seed, index))
            except OutOfTime:
                continue
            if outcome.status == "ok":
                f = list(strip_problem_prefix(outcome.input.split()))
                pairs.append((f, outcome.output.split()))
        return pairs

    return run


def lc_environment(repo: str, max_ops: int, task: str = "prim_bwd") -> Any:
    """Their `CharSPEnvironment` at genprobe's settings (L&C's operators and weights, integers
    1..5)."""
    sys.path.insert(0, repo)
    from src.envs.char_sp import CharSPEnvironment

    operators = ",".join(f"{op}:{int(w)}" for op, w in INTEGRATION_OPERATORS.items())
    params = types.SimpleNamespace(
        operators=operators, max_ops=max_ops, max_ops_G=4, max_int=5, int_base=10,
        balanced=False, precision=10, positive=True, rewrite_functions="",
        leaf_probs="0.75,0,0.25,0", n_variables=1, n_coefficients=0, clean_prefix_expr=True,
        max_len=512, env_base_seed=0, tasks=task,
    )  # fmt: skip
    return CharSPEnvironment(params)


def lample_charton(repo: str, method: str, max_ops: int) -> callable:
    env = lc_environment(repo, max_ops, f"prim_{method}")
    make = env.gen_prim_bwd if method == "bwd" else env.gen_prim_fwd
    arguments = (True,) if method == "bwd" else ()  # BWD: predict the primitive
    from src.utils import TimeoutError as TheirTimeout  # a BaseException

    def run(seed: int, attempts: int) -> list[tuple[list[str], list[str]]]:
        rng = np.random.RandomState(seed)
        pairs = []
        for _ in range(attempts):
            try:
                pair = make(rng, *arguments)
            except (Exception, TheirTimeout):  # a SymPy error or their timeout, as in their loop
                continue
            if pair is not None:
                pairs.append((list(strip_problem_prefix(pair[0])), list(pair[1])))
        return pairs

    return run


KEPT = {
    (True, True): "both",
    (True, False): "ours",
    (False, True): "theirs",
    (False, False): "neither",
}


class Scripted:
    """Stands in for their `RandomState`: `randint` answers the values given, in order, so
    their generator takes the choices (small or not, operators, simplify or strip) we give."""

    def __init__(self, *values: int) -> None:
        self.values = iter(values)

    def randint(self, *bounds: int) -> int:
        return next(self.values)


@dataclass
class Paired:
    kept: Counter = field(default_factory=Counter)  # which side kept the pair
    same_big_f: int = 0  # pairs both kept with F identical
    same_f: int = 0  # ... and f identical
    rewritten: Counter = field(default_factory=Counter)  # f is not the plain derivative
    seconds: Counter = field(default_factory=Counter)  # CPU seconds per side
    differing: list[tuple[list[str], list[str], list[str]]] = field(default_factory=list)


def paired(repo: str, method: str, max_ops: int, n: int, seed: int) -> Paired:
    """`n` random expressions from their generator, each made into a pair by their
    `gen_prim_<method>` and by ours (`backward_pair`, `forward_pair`) with the same choices:
    BWD always simplified, FWD's constant stripped as their draw says."""
    from src.utils import TimeoutError as TheirTimeout

    env = lc_environment(repo, max_ops, f"prim_{method}")
    draw = type(env)._generate_expr
    config = GeneratorConfig(method=method, max_ops=max_ops)
    deadline = DEFAULT_DEADLINES[method]
    rng = np.random.RandomState(seed)
    result = Paired()

    def timed(
        side: str, make: Callable[..., Any], *args: Any
    ) -> tuple[list[str], list[str]] | None:
        start = time.process_time()
        try:  # theirs have their own (wall-clock) time limits, ours the pool's CPU deadline
            if side.startswith("theirs"):
                made = make(*args)
            else:
                with cpu_limit(deadline, OutOfTime, "ITIMER_PROF"):
                    made = make(*args)
        except (Exception, TheirTimeout, OutOfTime):  # a rejection, a timeout, a SymPy error
            made = None
        result.seconds[side] += time.process_time() - start
        if made is None or (isinstance(made, Attempt) and made.status != "ok"):
            return None
        x, y = (made.input.split(), made.output.split()) if isinstance(made, Attempt) else made
        return list(map(str, strip_problem_prefix(x))), list(map(str, y))

    for _ in range(n):
        n_ops = int(rng.randint(4 if method == "bwd" else 3, max_ops + 1))
        tokens = [str(t) for t in draw(env, n_ops, 5, rng)]
        env._generate_expr = lambda *args, tokens=tokens: tokens
        tree = from_prefix(tokens)
        if method == "bwd":
            theirs = timed("theirs", env.gen_prim_bwd, Scripted(1, n_ops, 1), True)
            ours = timed("ours", backward_pair, tree, n_ops, True, config)
            plain = {
                "theirs": timed("theirs plain", env.gen_prim_bwd, Scripted(1, n_ops, 0), True),
                "ours": timed("ours plain", backward_pair, tree, n_ops, False, config),
            }
            for side, made in (("ours", ours), ("theirs", theirs)):
                if made is not None and plain[side] is not None and made[0] != plain[side][0]:
                    result.rewritten[side] += 1
        else:
            strip = bool(rng.randint(2))
            theirs = timed("theirs", env.gen_prim_fwd, Scripted(1, n_ops, 1 - strip))
            ours = timed("ours", forward_pair, to_sympy(tree), n_ops, strip, config)
        result.kept[KEPT[ours is not None, theirs is not None]] += 1
        if ours and theirs and ours[1] == theirs[1]:
            result.same_big_f += 1
            if ours[0] == theirs[0]:
                result.same_f += 1
            elif len(result.differing) < 5:
                result.differing.append((ours[1], ours[0], theirs[0]))
    return result


def plain_derivative(big_f: list[str]) -> list[str] | None:
    try:
        term = canonical.from_tree(from_prefix(big_f))
        return to_prefix(terms.to_tree(derivative(term)))
    except Exception:  # outside the terms' language (Abs, a huge power): not counted
        return None


def describe(name: str, sample: Sample, method: str) -> dict[str, np.ndarray]:
    f_len = np.array([len(f) for f, _ in sample.pairs])
    big_f_len = np.array([len(big_f) for _, big_f in sample.pairs])
    ops = np.array([sum(t in _OPERATORS for t in big_f) for _, big_f in sample.pairs])
    simplified = ""
    if method == "bwd":
        plain = [(plain_derivative(big_f), f) for f, big_f in sample.pairs]
        simplified = f"  simplified {np.mean([d != f for d, f in plain if d is not None]):.2f}"
    print(
        f"{name:>6}: {sum(sample.counts):5d} pairs  {sample.rate():7.1f} pairs/CPU-s  "
        f"f len {f_len.mean():5.1f} (median {np.median(f_len):4.0f})  "
        f"F len {big_f_len.mean():5.1f} (median {np.median(big_f_len):4.0f})  "
        f"F ops {ops.mean():4.1f}{simplified}"
    )
    return {"f": f_len, "F": big_f_len, "ops": ops}


def compare_trees(repo: str, max_ops: int, n: int) -> None:
    """`n` random expressions (BWD's 4..max_ops operators) drawn by their `_generate_expr` and
    by our `random_expression`: prefix lengths at the fewest and the most operators, and the
    frequency of every token."""
    env = lc_environment(repo, max_ops)
    config = GeneratorConfig(method="bwd", max_ops=max_ops)
    rng = np.random.RandomState(11)
    drawn: dict[str, list[tuple[int, list[str]]]] = {"theirs": [], "ours": []}
    for index in range(n):
        n_ops = int(rng.randint(4, max_ops + 1))
        drawn["theirs"].append((n_ops, [str(t) for t in env._generate_expr(n_ops, 5, rng)]))
        ours = np.random.default_rng([11, index])
        n_ops = int(ours.integers(4, max_ops + 1))
        drawn["ours"].append((n_ops, to_prefix(random_expression(ours, n_ops, config.tree))))
    print(f"\nrandom expressions, max_ops {max_ops}: {n} of theirs against {n} of ours")
    for n_ops in (4, max_ops):
        theirs, ours = ([len(t) for k, t in drawn[side] if k == n_ops] for side in drawn)
        ks = ks_2samp(theirs, ours)
        print(
            f"  {n_ops} operators: tokens {np.mean(theirs):.2f} / {np.mean(ours):.2f}, "
            f"KS D = {ks.statistic:.3f}, p = {ks.pvalue:.2f}"
        )
    counts = {side: Counter(t for _, tokens in drawn[side] for t in tokens) for side in drawn}
    tokens = sorted(set(counts["theirs"]) | set(counts["ours"]))
    table = np.array([[counts[side][t] for t in tokens] for side in drawn])
    print(f"  token frequencies: chi-square p = {chi2_contingency(table).pvalue:.2f}")


def report_paired(method: str, max_ops: int, result: Paired) -> None:
    n = sum(result.kept.values())
    both = result.kept["both"]
    print(f"\npaired {method}, max_ops {max_ops}: {n} random expressions from their generator")
    kept = ", ".join(
        f"{side} {result.kept[side]}" for side in ("both", "ours", "theirs", "neither")
    )
    print(f"  kept by: {kept}")
    if both:
        low, high = wilson(result.same_f, both)
        print(
            f"  of the {both} pairs both kept: F identical {result.same_big_f / both:.1%}, "
            f"f identical {result.same_f / both:.1%} (95 % CI {low:.1%}-{high:.1%})"
        )
    if method == "bwd":
        for side in ("ours", "theirs"):
            print(f"  f rewritten by simplify ({side}): {result.rewritten[side] / n:.1%} of all")
    ours, theirs = result.seconds["ours"], result.seconds["theirs"]
    print(f"  CPU seconds: ours {ours:.1f}, theirs {theirs:.1f}: ratio {theirs / ours:.1f}")
    for big_f, mine, other in result.differing:
        print(f"  F {' '.join(big_f)}\n    ours   {' '.join(mine)}\n    theirs {' '.join(other)}")


def wilson(successes: int, n: int) -> tuple[float, float]:
    interval = binomtest(successes, n).proportion_ci(0.95, method="wilson")
    return interval.low, interval.high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lc-repo", help="also run Lample & Charton's generator from here")
    parser.add_argument("--attempts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-ops", type=int, default=15)
    parser.add_argument("--method", default="bwd", choices=("fwd", "bwd", "ibp"))
    parser.add_argument("--paired", type=int, default=0, help="with --lc-repo: N paired draws")
    parser.add_argument("--trees", type=int, default=0, help="with --lc-repo: N trees each")
    args = parser.parse_args()

    engines = ENGINES if args.method == "bwd" else ("lc", "fast")
    methods = {engine: ours(engine, args.method, args.max_ops) for engine in engines}
    if args.lc_repo and args.method != "ibp":
        methods["theirs"] = lample_charton(args.lc_repo, args.method, args.max_ops)
    samples = {name: Sample() for name in methods}
    for round_ in range(args.rounds):
        for name, run in methods.items():
            start = time.process_time()
            pairs = run(1000 + round_, args.attempts)
            samples[name].seconds.append(time.process_time() - start)
            samples[name].counts.append(len(pairs))
            samples[name].pairs += pairs
    print(f"{args.method}, max_ops {args.max_ops}, {args.attempts} attempts x {args.rounds} rounds")
    if args.method == "bwd":  # only our engines build canonical terms in the loop above
        attempts = args.attempts * args.rounds
        kinds = ", ".join(f"{k} {n / attempts:.2f}" for k, n in canonical.delegations.most_common())
        print(f"nodes the terms asked SymPy for (most from its cache), per attempt: {kinds}")
    stats = {name: describe(name, sample, args.method) for name, sample in samples.items()}
    for name in stats:
        if name != "lc":
            for key in ("f", "F", "ops"):
                ks = ks_2samp(stats["lc"][key], stats[name][key])
                print(f"KS lc vs {name} on {key}: D = {ks.statistic:.3f}, p = {ks.pvalue:.2f}")
    if args.lc_repo and args.trees:
        compare_trees(args.lc_repo, args.max_ops, args.trees)
    if args.lc_repo and args.paired and args.method != "ibp":
        report_paired(
            args.method, args.max_ops,
            paired(args.lc_repo, args.method, args.max_ops, args.paired, seed=7),
        )  # fmt: skip
    reference = "theirs" if "theirs" in samples else "sympy" if "sympy" in samples else "fast"
    ratio = samples["lc"].rate() / samples[reference].rate()
    print(f"speedup = {ratio:.1f} (lc / {reference})")


if __name__ == "__main__":
    main()
