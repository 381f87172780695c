"""d/dx on canonical terms, built the way SymPy's `diff` builds it.

SymPy's canonical form depends on the order in which an expression is assembled (a number
times a sum distributes only in a two-factor product), so each rule below constructs its
result in the same steps as SymPy's `_eval_derivative` and `fdiff` (SymPy 1.14):

- sums term by term; products by the Leibniz rule, each term one n-ary product;
- `b**e` as `b**e * (e' * log(b) + b' * e / b)`;
- a function as `fdiff(u) * u'`, with SymPy's `fdiff` (tan' = 1 + tan**2, acosh' =
  1/(sqrt(u - 1)*sqrt(u + 1)), ...); `Abs(u)` of a real u as `u' * sign(u)`.
"""

from __future__ import annotations

from fractions import Fraction

from genprobe.tasks.integration.canonical import add, apply, is_real, mul, neg, power
from genprobe.tasks.integration.terms import HALF, MINUS_ONE, ONE, ZERO, Term, Unsupported, Value


def derivative(t: Value) -> Value:
    """dt/dx."""
    if isinstance(t, Fraction) or not t.has_x:
        return ZERO
    if t.head == "Symbol":
        return ONE
    if t.head == "Add":
        return add(*[derivative(a) for a in t.args])
    if t.head == "Mul":  # Mul._eval_derivative_n_times: the Leibniz rule, one n-ary product each
        args = t.args
        return add(*[mul(*args[:i], derivative(f), *args[i + 1 :]) for i, f in enumerate(args)])
    if t.head == "Pow":
        b, e = t.args
        db, de = derivative(b), derivative(e)
        # SymPy builds de * log(b) even when de is 0; the product is 0 either way
        by_exponent = ZERO if de == 0 else mul(de, apply("log", b))
        return mul(t, add(by_exponent, mul(mul(db, e), power(b, MINUS_ONE))))
    u = t.args[0]
    du = derivative(u)
    if t.head == "Abs":  # Abs._eval_derivative: u' * sign(conjugate(u)), for a real u
        if not is_real(u):
            raise Unsupported("Abs of an argument SymPy may not know real")
        return mul(du, apply("sign", u))
    return mul(_fdiff(t, u), du)


def _sqrt(t: Value) -> Value:
    return power(t, HALF)


def _fdiff(t: Term, u: Value) -> Value:
    name = t.head
    if name == "exp":
        return t
    if name == "log":
        return power(u, MINUS_ONE)
    if name == "sin":
        return apply("cos", u)
    if name == "cos":
        return neg(apply("sin", u))
    if name == "tan":
        return add(ONE, power(t, Fraction(2)))
    if name == "asin":
        return power(_sqrt(add(ONE, neg(power(u, Fraction(2))))), MINUS_ONE)
    if name == "acos":
        return mul(MINUS_ONE, power(_sqrt(add(ONE, neg(power(u, Fraction(2))))), MINUS_ONE))
    if name == "atan":
        return power(add(ONE, power(u, Fraction(2))), MINUS_ONE)
    if name == "sinh":
        return apply("cosh", u)
    if name == "cosh":
        return apply("sinh", u)
    if name == "tanh":
        return add(ONE, neg(power(apply("tanh", u), Fraction(2))))
    if name == "asinh":
        return power(_sqrt(add(power(u, Fraction(2)), ONE)), MINUS_ONE)
    if name == "acosh":
        return power(mul(_sqrt(add(u, MINUS_ONE)), _sqrt(add(u, ONE))), MINUS_ONE)
    if name == "atanh":
        return power(add(ONE, neg(power(u, Fraction(2)))), MINUS_ONE)
    raise Unsupported(f"no derivative rule for {name}")
