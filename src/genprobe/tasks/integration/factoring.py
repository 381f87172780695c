"""A cheap simplifier for the generator's hot path: pull common factors out of sums.

SymPy's `simplify` tries a dozen strategies (trigsimp, factor, cancel, powsimp, ...) and takes
~0.1-1 s on a BWD derivative; Lample & Charton apply it to half of their derivatives. Most of
what it gains there is a sum whose terms share factors, `x*exp(x) + exp(x)` -> `(x + 1)*exp(x)`,
`a/b + c/b` -> `(a + c)/b`. `simplify` here does only that, bottom up, on canonical terms, and
keeps a rewrite only where it shortens the prefix sequence.
"""

from __future__ import annotations

import math
from fractions import Fraction

from genprobe.tasks.integration.canonical import add, apply, as_base_exp, as_coeff_mul, mul, power
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.terms import ONE, Term, Value, to_tree


def length(t: Value) -> int:
    """Tokens of the term's prefix sequence."""
    return len(to_prefix(to_tree(t)))


def simplify(t: Value) -> Value:
    """`t` with common factors pulled out of sums, where that makes the whole shorter."""
    if isinstance(t, Fraction) or not t.args:
        return t
    args = tuple(simplify(a) for a in t.args)
    rebuilt = t if args == t.args else _rebuild(t.head, args)
    if isinstance(rebuilt, Term) and rebuilt.head == "Add":
        rebuilt = _factor_sum(rebuilt)
    # a shorter argument can make the whole longer once rebuilt (x pulled into a power)
    return rebuilt if rebuilt == t or length(rebuilt) < length(t) else t


def _rebuild(head: str, args: tuple[Value, ...]) -> Value:
    if head == "Add":
        return add(*args)
    if head == "Mul":
        return mul(*args)
    if head == "Pow":
        return power(*args)
    return apply(head, args[0])


def _powers(term: Value) -> tuple[Fraction, dict[Value, Fraction]]:
    coeff, rest = as_coeff_mul(term)
    factors = rest.args if isinstance(rest, Term) and rest.head == "Mul" else (rest,)
    powers: dict[Value, Fraction] = {}
    for factor in factors:
        if isinstance(factor, Fraction):  # the 1 of a bare number
            continue
        base, exponent = as_base_exp(factor)
        if not isinstance(exponent, Fraction):
            base, exponent = factor, ONE
        powers[base] = powers.get(base, Fraction(0)) + exponent
    return coeff, powers


def _factor_sum(t: Term) -> Value:
    split = [_powers(term) for term in t.args]
    common: list[tuple[Value, Fraction]] = []
    for base in split[0][1]:
        exponents = [powers.get(base) for _, powers in split]
        if any(e is None for e in exponents):
            continue
        if all(e > 0 for e in exponents):
            common.append((base, min(exponents)))
        elif all(e < 0 for e in exponents):
            common.append((base, max(exponents)))
    coefficients = [coeff for coeff, _ in split]
    content = Fraction(
        math.gcd(*(c.numerator for c in coefficients)),
        math.lcm(*(c.denominator for c in coefficients)),
    )
    if not common and content == 1:
        return t
    divisor = [power(b, -e) for b, e in common]
    inner = add(*[mul(term, 1 / content, *divisor) for term in t.args])
    factored = mul(content, *[power(b, e) for b, e in common], inner)
    return factored if length(factored) < length(t) else t
