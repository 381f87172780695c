"""Verifier throughput: genprobe's verifier against the SAGGA-style SymPy check, in one run.

Corpus: antiderivatives F (hand-picked, plus BWD samples from our generator), the problem
f = F', and candidates written differently: correct ones (expanded, factored, trig-expanded,
plus a constant) and wrong ones (a perturbed coefficient, an exponent off by one, a missing
term). Hard cases: values far below 1e-15 (exp(-42/x) near 0, (x + e^14)^-3), values that
underflow doubles (exp(-262144 x^2 / 9)), and every `--dominance`-th pair of
`stress.dominance_pairs()` (a wrong term next to a dominant one: exp(2190/x) + sin(x)).

Reference path, as the SAGGA code checks a hypothesis: one candidate at a time, under a 1 s
alarm, correct iff simplify(f - simplify(F')) == 0 or its nsimplify(tolerance=0.001) == 0.
A reference timeout is "undecided"; agreement is measured where both decide.

Ours: `verify_many` over the whole corpus (worker pool included, started cold), repeated;
the median wall-clock is compared with the reference's total. The last line is
`speedup = X.X`.

With `--dataset FILE` (problems and reference answers, as `integration evaluate` reads them)
the corpus also holds ordinary answers to ordinary problems: each reference answer (correct)
and, with `--model SPEC`, the model's top `--k` beam candidates (unlabelled: the model's own
mistakes and successes). Each part of the corpus is then timed on its own (one worker), with
how our verifier decided it and the seconds each method took: where the time goes.

Run: .venv/bin/python benchmarks/verifier_throughput.py [--repeats 3] [--generated 20]
     [--dataset FILE [--model SPEC] [--k 3] [--limit 200]]
"""

from __future__ import annotations

import argparse
import signal
import statistics
import time
from collections import Counter, defaultdict

import sympy as sp

from genprobe.tasks.integration import Verifier, VerifierConfig, X, from_sympy
from genprobe.tasks.integration.datasets import read_dataset
from genprobe.tasks.integration.expression import to_sympy
from genprobe.tasks.integration.generation_config import GeneratorConfig, TreeSettings
from genprobe.tasks.integration.generators import attempt
from genprobe.tasks.integration.prefix import from_prefix, strip_problem_prefix
from genprobe.tasks.integration.stress import dominance_pairs
from genprobe.tasks.verdict import Outcome

x = X
BIG = sp.Rational(262144, 9)

HAND_PICKED = [
    x**3 / 3 + 2 * x,
    (x + 1) ** 5,
    (2 * x + 3) ** 3 * (x - 1),
    sp.sin(x) ** 2,
    sp.sin(2 * x) * sp.cos(3 * x),
    sp.sin(x) ** 3 * sp.cos(x),
    sp.cos(x + 1) ** 2 + sp.tan(x),
    sp.exp(2 * x) * sp.sin(x),
    x * sp.exp(x**2),
    sp.log(x**2 + 1),
    x * sp.log(x) - x,
    sp.atan(x) + sp.sqrt(x + 4),
    sp.asin(x / 2) * x,
    (x**2 + 1) / (x + 3),
    sp.sqrt(x**2 + 2 * x + 5),
    sp.exp(x) / (sp.exp(x) + 1),
    sp.sinh(x) * sp.cosh(2 * x),
    17 * sp.sin(83 * x) / 83,
    x**42 / 42 + x**3,
    sp.log(sp.cos(x)) + 4 * x**2,
    # values far below 1e-15
    sp.exp(-42 / x),
    (x + sp.E**14) ** -2,
    # values that underflow doubles
    sp.exp(-BIG * x**2),
    x * sp.exp(-BIG * x**2),
]


def _integers(expr: sp.Expr) -> list[sp.Integer]:
    return sorted({a for a in expr.atoms(sp.Integer) if abs(a) > 1}, key=lambda a: (abs(a), a))


def correct_variants(big_f: sp.Expr) -> list[sp.Expr]:
    variants = [sp.expand(big_f), sp.factor(big_f), sp.expand_trig(big_f), big_f + 7]
    seen = {sp.srepr(big_f)}
    unique = []
    for variant in variants:
        key = sp.srepr(variant)
        if key not in seen and variant.has(x):
            seen.add(key)
            unique.append(variant)
    return unique


def wrong_variants(big_f: sp.Expr) -> list[sp.Expr]:
    variants = []
    integers = _integers(big_f)
    if integers:  # perturbed coefficient
        variants.append(big_f.xreplace({integers[0]: integers[0] + 1}))
    powers = [p for p in big_f.atoms(sp.Pow) if p.exp.is_Integer and p.base.has(x)]
    if powers:  # exponent off by one
        power = sorted(powers, key=sp.default_sort_key)[0]
        variants.append(big_f.xreplace({power: power.base ** (power.exp + 1)}))
    expanded = sp.expand(big_f)
    if isinstance(expanded, sp.Add):  # missing term
        terms = [t for t in expanded.args if t.has(x)]
        if len(terms) > 1:
            variants.append(expanded - terms[-1])
    return [v for v in variants if sp.simplify(sp.diff(v - big_f, x)) != 0]


def generated_antiderivatives(n: int) -> list[sp.Expr]:
    config = GeneratorConfig(method="bwd", max_ops=5, tree=TreeSettings())
    found = []
    index = 0
    while len(found) < n:
        result = attempt((config, {}), (2024, index))
        index += 1
        if result.status == "ok":
            found.append(to_sympy(from_prefix(result.output.split())))
    return found


def build_corpus(n_generated: int, dominance_stride: int) -> list[tuple[sp.Expr, sp.Expr, bool]]:
    corpus = []
    for big_f in HAND_PICKED + generated_antiderivatives(n_generated):
        f = sp.diff(big_f, x)
        corpus += [(f, v, True) for v in correct_variants(big_f)]
        corpus += [(f, v, False) for v in wrong_variants(big_f)]
    stress = dominance_pairs()[::dominance_stride]
    corpus += [(pair.problem, pair.candidate, pair.correct) for pair in stress]
    # drop what the vocabulary cannot hold (a factor() may introduce nothing new, but be safe)
    kept = []
    for f, candidate, label in corpus:
        try:
            from_sympy(f), from_sympy(candidate)
        except Exception:
            continue
        kept.append((f, candidate, label))
    return kept


def dataset_parts(
    path: str, model_spec: str | None, k: int, limit: int
) -> dict[str, list[tuple[sp.Expr, sp.Expr, bool | None]]]:
    """The first `limit` problems of a dataset with their reference answers (correct) and,
    with a model, its top-k beam candidates that parse (label None: not known)."""
    rows = read_dataset(path)[:limit]
    problems = [from_prefix(strip_problem_prefix(row.input.split())) for row in rows]
    parts = {
        "reference answers": [
            (to_sympy(p), to_sympy(from_prefix(row.output.split())), True)
            for p, row in zip(problems, rows, strict=True)
        ]
    }
    if model_spec:
        from genprobe.decoding.config import DecodingConfig
        from genprobe.under_test.registry import load_model

        model = load_model(model_spec, decoding=DecodingConfig(beam_size=max(k, 10)))
        found = model.candidates(problems, k)
        parts["model candidates"] = [
            (to_sympy(p), to_sympy(c.answer), None)
            for p, candidates in zip(problems, found, strict=True)
            for c in candidates
            if c.parsed
        ]
    return parts


def where_time_goes(verdicts: list) -> str:
    """Verdicts by (method, outcome): count and total seconds, the costliest first."""
    seconds: defaultdict[tuple[str, str], float] = defaultdict(float)
    counts: Counter[tuple[str, str]] = Counter()
    for verdict in verdicts:
        key = (verdict.method, verdict.outcome.value)
        seconds[key] += verdict.seconds
        counts[key] += 1
    ranked = sorted(seconds, key=lambda key: -seconds[key])
    return "; ".join(f"{m} {o}: {counts[m, o]}, {seconds[m, o]:.2f} s" for m, o in ranked)


class _Alarm(Exception):
    pass


def _on_alarm(signum: int, frame: object) -> None:
    raise _Alarm


def sagga_reference(f: sp.Expr, candidate: sp.Expr, seconds: float = 1.0) -> bool | None:
    """True/False as SAGGA's check decides it, None when the 1 s alarm fires."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        derivative = sp.simplify(sp.diff(candidate, x))
        difference = sp.simplify(f - derivative)
        return difference == 0 or sp.nsimplify(difference, tolerance=0.001) == 0
    except _Alarm:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def time_ours(corpus: list, workers: int | None, repeats: int) -> tuple[float, list]:
    pairs = [(f, candidate) for f, candidate, _ in corpus]
    totals = []
    verdicts = []
    for _ in range(repeats):
        start = time.perf_counter()
        with Verifier(VerifierConfig(workers=workers)) as verifier:
            verdicts = verifier.verify_many(pairs)
        totals.append(time.perf_counter() - start)
    return statistics.median(totals), verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--generated", type=int, default=20, help="BWD antiderivatives to add")
    parser.add_argument(
        "--dominance", type=int, default=4, help="take every n-th dominance pair (432 in all)"
    )
    parser.add_argument("--dataset", help="add a dataset's problems and reference answers")
    parser.add_argument("--model", help="with --dataset: add this model's beam candidates")
    parser.add_argument("--k", type=int, default=3, help="candidates per problem of --model")
    parser.add_argument("--limit", type=int, default=200, help="problems of --dataset")
    args = parser.parse_args()

    parts = {"built": build_corpus(args.generated, args.dominance)}
    if args.dataset:
        parts |= dataset_parts(args.dataset, args.model, args.k, args.limit)
    corpus = [row for part in parts.values() for row in part]
    n = len(corpus)
    n_correct = sum(label is True for *_, label in corpus)
    n_wrong = sum(label is False for *_, label in corpus)
    print(f"corpus: {n} candidates ({n_correct} correct, {n_wrong} wrong, "
          f"{n - n_correct - n_wrong} unlabelled)")  # fmt: skip

    reference, reference_times = [], []
    for f, candidate, _ in corpus:
        start = time.perf_counter()
        reference.append(sagga_reference(f, candidate))
        reference_times.append(time.perf_counter() - start)
    reference_total = sum(reference_times)

    ours_total_1, _ = time_ours(corpus, 1, args.repeats)
    ours_total, verdicts = time_ours(corpus, None, args.repeats)
    ours = [v.outcome is Outcome.CORRECT for v in verdicts]
    decided = [v.outcome in (Outcome.CORRECT, Outcome.INCORRECT) for v in verdicts]

    both = [i for i in range(n) if reference[i] is not None and decided[i]]
    agree = sum(ours[i] == reference[i] for i in both)
    labels = [label for *_, label in corpus]
    labelled = n_correct + n_wrong
    pairs = [(i, label) for i, label in enumerate(labels) if label is not None]
    reference_right = sum(reference[i] == label for i, label in pairs)
    ours_right = sum(ours[i] == label for i, label in pairs)
    timeouts = sum(r is None for r in reference)
    print(f"reference: {timeouts} timeouts (1 s), {reference_right}/{labelled} labelled right")
    print(f"ours:      {n - sum(decided)} undecided, {ours_right}/{labelled} labelled right")
    methods = {}
    for verdict in verdicts:
        methods[verdict.method] = methods.get(verdict.method, 0) + 1
    print(f"ours, decided by: {methods}")
    print(f"agreement where both decide: {agree}/{len(both)} = {agree / max(len(both), 1):.1%}")
    for i in both:
        if ours[i] != reference[i]:
            f, candidate, label = corpus[i]
            print(f"  disagree: f = {f}; F = {candidate}; truth {label}, "
                  f"ours {ours[i]}, reference {reference[i]}")  # fmt: skip
    print(f"reference: total {reference_total:.2f} s, median per item "
          f"{statistics.median(reference_times) * 1e3:.1f} ms")  # fmt: skip
    print(f"ours, 1 worker: total {ours_total_1:.3f} s (median of {args.repeats}), "
          f"speedup {reference_total / ours_total_1:.1f}")  # fmt: skip
    print(f"ours, default workers: total {ours_total:.3f} s (median of {args.repeats})")
    if len(parts) > 1:
        start = 0
        for name, part in parts.items():
            part_reference = sum(reference_times[start : start + len(part)])
            start += len(part)
            part_ours, part_verdicts = time_ours(part, 1, args.repeats)
            print(f"part {name}: {len(part)} items, reference {part_reference:.2f} s, ours "
                  f"{part_ours:.3f} s (1 worker), {part_reference / part_ours:.1f}x; "
                  f"{where_time_goes(part_verdicts)}")  # fmt: skip
    print(f"speedup = {reference_total / ours_total:.1f}")


if __name__ == "__main__":
    main()
