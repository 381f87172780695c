"""A cheap simplifier for the generator's hot path: three rewrites, the shortest kept.

SymPy's `simplify` tries a dozen strategies (trigsimp, factor, cancel, powsimp, ...) and takes
~0.1-1 s on a BWD derivative; Lample & Charton apply it to half of their derivatives. Much of
what it gains there comes from three cheap rewrites, which `simplify` tries bottom up on
canonical terms, keeping at each node the shortest prefix sequence:

- common factors out of a sum: `x*exp(x) + 2*exp(x)` -> `(x + 2)*exp(x)`, `a/b + c/b` ->
  `(a + c)/b`;
- the derivatives of tan and tanh back to cos and cosh: `tan(u)**2 + 1` -> `cos(u)**-2`,
  `1 - tanh(u)**2` -> `cosh(u)**-2`;
- products of sums expanded (up to `MAX_TERMS` terms): `x**3 + x*(3*x**2 + 1)` -> `4*x**3 + x`.

The whole is kept only where it is shorter than the input. What it does not do (common
denominators with cancellation, trig identities beyond these) is why it changes fewer
derivatives than SymPy's `simplify` does: benchmarks/generator_throughput.py measures it.
"""

from __future__ import annotations

import math
from fractions import Fraction

from genprobe.tasks.integration.canonical import add, apply, as_base_exp, as_coeff_mul, mul, power
from genprobe.tasks.integration.terms import ONE, Term, Value, prefix_length

MAX_TERMS = 16  # most terms an expansion may make


def simplify(t: Value) -> Value:
    """`t` rewritten as above where that makes it shorter, else `t`."""
    rewritten = _simplify(t)
    return rewritten if prefix_length(rewritten) < prefix_length(t) else t


def _simplify(t: Value) -> Value:
    if isinstance(t, Fraction) or not t.args:
        return t
    args = tuple(_simplify(a) for a in t.args)
    rebuilt = t if args == t.args else _rebuild(t.head, args)
    if not isinstance(rebuilt, Term) or rebuilt.head not in ("Add", "Mul"):
        return rebuilt
    candidates = [_expand(rebuilt)]
    if rebuilt.head == "Add":
        candidates += [_factor_sum(rebuilt), _secant_squared(rebuilt)]
    # ties go to a rewrite: a factored sum of the same length can merge into the product above
    return min([c for c in candidates if c is not None] + [rebuilt], key=prefix_length)


def _rebuild(head: str, args: tuple[Value, ...]) -> Value:
    if head == "Add":
        return add(*args)
    if head == "Mul":
        return mul(*args)
    if head == "Pow":
        return power(*args)
    return apply(head, args[0])


def _secant_squared(t: Term) -> Value | None:
    """`tan(u)**2 + 1` -> `cos(u)**-2`, `1 - tanh(u)**2` -> `cosh(u)**-2` (whole sums only)."""
    if len(t.args) != 2 or t.args[0] != 1:
        return None
    coeff, rest = as_coeff_mul(t.args[1])
    if not (isinstance(rest, Term) and rest.head == "Pow" and rest.args[1] == 2):
        return None
    base = rest.args[0]
    if not isinstance(base, Term):
        return None
    if coeff == 1 and base.head == "tan":
        return power(apply("cos", base.args[0]), Fraction(-2))
    if coeff == -1 and base.head == "tanh":
        return power(apply("cosh", base.args[0]), Fraction(-2))
    return None


def _expand(t: Term) -> Value | None:
    """The sum of products that `t` multiplies out to, or None where it has no product of
    sums or would make more than `MAX_TERMS` terms."""
    if t.head == "Add":
        expanded = [_expand(a) if isinstance(a, Term) and a.head == "Mul" else None for a in t.args]
        if all(e is None for e in expanded):
            return None
        return add(*[a if e is None else e for a, e in zip(t.args, expanded, strict=True)])
    terms: list[Value] = [ONE]
    changed = False
    for factor in t.args:
        if isinstance(factor, Term) and factor.head == "Add":
            if len(terms) * len(factor.args) > MAX_TERMS:
                return None
            terms = [mul(a, b) for a in terms for b in factor.args]
            changed = True
        else:
            terms = [mul(a, factor) for a in terms]
    return add(*terms) if changed else None


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


def _factor_sum(t: Term) -> Value | None:
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
        return None
    divisor = [power(b, -e) for b, e in common]
    inner = add(*[mul(term, 1 / content, *divisor) for term in t.args])
    return mul(content, *[power(b, e) for b, e in common], inner)
