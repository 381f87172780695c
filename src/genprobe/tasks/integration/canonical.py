"""SymPy's automatic evaluation, rebuilt on light terms, for the data generator's hot path.

Building a SymPy expression evaluates it: `Add` and `Mul` flatten, collect and sort their
arguments, `Pow` and the functions apply their `eval` rules. The generator's output is that
canonical form, so a faster generator must produce the same one. This module does, for the
expressions the integration generators build (one variable x, real and nonzero; rational
numbers; pi and E; the operators of Lample & Charton's vocabulary), in plain Python:

- `add`, `mul`, `power`, `apply` and `neg` follow `Add.flatten`, `Mul.flatten`, `Pow.__new__`,
  the functions' `eval` and `Expr.__neg__` of SymPy 1.14, rule for rule, on the common paths;
- anything else (a node whose arguments are all constant, a rule that asks SymPy's assumptions
  about a sign, inverse functions composed, multiples of pi) is *delegated*: that one node is
  built by SymPy from its already canonical arguments and read back, with a cache. The result
  is then SymPy's by construction.

`from_tree` builds the canonical term of a random tree. tests/tasks/integration/test_canonical.py
checks the whole against SymPy on random expressions; `delegations` counts how often SymPy was
asked, by kind of node.
"""

from __future__ import annotations

import functools
from collections import Counter
from fractions import Fraction

import sympy as sp

from genprobe.errors import IntegerTooLargeError
from genprobe.tasks.integration.expression import MAX_POWER_BITS, Expr, fold
from genprobe.tasks.integration.terms import (
    FUNCTIONS,
    HALF,
    MINUS_ONE,
    ONE,
    PI,
    SYMPY_FUNCTIONS,
    ZERO,
    E,
    Term,
    Unsupported,
    Value,
    X,
    from_sympy,
    sort_key,
    to_sympy,
)  # fmt: skip

ODD = frozenset({"sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh"})
EVEN = frozenset({"cos", "cosh"})
# forward and inverse functions that SymPy's eval composes (sin(acos(u)) = sqrt(1 - u**2), ...)
_TRIG = frozenset({"sin", "cos", "tan", "asin", "acos", "atan"})
_HYPERBOLIC = frozenset({"sinh", "cosh", "tanh", "asinh", "acosh", "atanh"})
delegations: Counter = Counter()  # node kind -> times SymPy built it


_TREE_UNARY = {"ln": "log", "abs": "Abs"}
_TREE_POWERS = {"inv": -1, "pow2": 2, "pow3": 3, "pow4": 4, "pow5": 5, "sqrt": HALF}


def _from_tree_node(node: Expr, args: list[Value]) -> Value:
    op = node.op
    if op == "int":
        return Fraction(node.value)
    if not args:
        return {"x": X, "pi": PI, "E": E}[op]
    if op in _TREE_POWERS:
        return power(args[0], Fraction(_TREE_POWERS[op]))
    if len(args) == 1:
        head = _TREE_UNARY.get(op, op)
        if head not in FUNCTIONS:
            raise Unsupported(op)
        return apply(head, args[0])
    a, b = args
    if op == "add":
        return add(a, b)
    if op == "sub":
        return add(a, mul(MINUS_ONE, b))
    if op == "mul":
        return mul(a, b)
    if op == "div":
        return mul(a, power(b, MINUS_ONE))
    if op == "pow":
        return power(a, b)
    raise Unsupported(op)


def from_tree(expr: Expr) -> Value:
    """The canonical term of a tree, built as `expression.to_sympy` builds it in SymPy.

    Raises:
        Unsupported: an operator outside FUNCTIONS (sec, acot, ...) or a non-real constant.
        IntegerTooLargeError: a power of two numbers wider than `MAX_POWER_BITS`.
    """
    return fold(expr, _from_tree_node)


@functools.lru_cache(maxsize=65536)
def _delegated(head: str, args: tuple) -> Value:
    sympy_args = [to_sympy(a) for a in args]
    if head in ("Add", "Mul", "Pow"):
        result = getattr(sp, head)(*sympy_args)
    else:
        result = SYMPY_FUNCTIONS[head](*sympy_args)
    return from_sympy(result)


def _delegate(head: str, args: tuple, kind: str) -> Value:
    delegations[kind] += 1
    return _delegated(head, args)


# --------------------------------------------------------------------------- small queries


def as_coeff_mul(t: Value) -> tuple[Fraction, Value]:
    """`as_coeff_Mul`: (numeric coefficient, the rest)."""
    if isinstance(t, Fraction):
        return t, ONE
    if isinstance(t, Term) and t.head == "Mul" and isinstance(t.args[0], Fraction):
        rest = t.args[1:]
        return t.args[0], rest[0] if len(rest) == 1 else Term("Mul", rest)
    return ONE, t


def as_base_exp(t: Value) -> tuple[Value, Value]:
    if isinstance(t, Term):
        if t.head == "Pow":
            return t.args
        if t.head == "exp":
            return E, t.args[0]
    return t, ONE


def _could_extract_minus_sign(t: Value) -> bool | None:
    """`could_extract_minus_sign`; None where SymPy would compare sort keys (a tie)."""
    if isinstance(t, Fraction):
        return t < 0
    if t.head == "Mul":
        return isinstance(t.args[0], Fraction) and t.args[0] < 0
    if t.head == "Add":
        negative = sum(bool(_could_extract_minus_sign(a)) for a in t.args)
        positive = len(t.args) - negative
        return None if negative == positive else negative > positive
    return False


def _sign(t: Value) -> tuple[bool | None, bool | None] | None:
    """(is_extended_nonnegative, is_extended_negative) as SymPy answers them, or None where
    this module cannot be sure what SymPy answers."""
    if isinstance(t, Fraction):
        return t >= 0, t < 0
    if t.head == "Symbol":  # real, nonzero, sign unknown
        return None, None
    if t.head in ("Pi", "Exp1"):
        return True, False
    if t.head == "exp" and is_real(t.args[0]):
        return True, False
    return None


def is_real(t: Value) -> bool:
    """True where SymPy surely answers `is_extended_real` True; False means "not sure"."""
    if isinstance(t, Fraction) or t.head in ("Symbol", "Pi", "Exp1"):
        return True
    if t.head in ("Add", "Mul"):
        return all(is_real(a) for a in t.args)
    if t.head == "Pow":
        b, e = t.args
        return isinstance(e, Fraction) and e.denominator == 1 and e > 0 and is_real(b)
    if t.head in ("exp", "sin", "cos", "atan", "sinh", "cosh", "tanh", "asinh"):
        return is_real(t.args[0])
    return False


# --------------------------------------------------------------------------- constructors


def strip_constant(t: Value) -> Value:
    """`t.as_independent(x, as_Add=True)[1]`: a sum without its constant terms."""
    if isinstance(t, Term) and t.head == "Add":
        return _make("Add", [a for a in t.args if isinstance(a, Term) and a.has_x])
    return t if isinstance(t, Term) and t.has_x else ZERO


def _make(head: str, args: list[Value]) -> Value:
    if not args:
        return ZERO if head == "Add" else ONE
    if len(args) == 1:
        return args[0]
    return Term(head, tuple(args))


def _settled(head: str, seq: list[Value]) -> Value | None:
    """What `AssocOp.__new__` makes of no operand or one, and SymPy's result for constant ones
    (numbers and radicals combine by rules not rebuilt here); None otherwise."""
    if len(seq) <= 1:
        return _make(head, seq)
    if not any(isinstance(a, Term) and a.has_x for a in seq):
        return _delegate(head, tuple(seq), "constant")
    return None


def add(*seq: Value) -> Value:
    """`Add(*seq)`."""
    seq = [a for a in seq if not (isinstance(a, Fraction) and a == 0)]
    if (settled := _settled("Add", seq)) is not None:
        return settled
    if len(seq) == 2:
        a, b = seq
        if isinstance(b, Fraction):
            a, b = b, a
        if isinstance(a, Fraction) and isinstance(b, Term) and b.head == "Mul":
            return Term("Add", (a, b))
    coeff = ZERO
    terms: dict[Value, Fraction] = {}
    i = 0
    while i < len(seq):
        o = seq[i]
        i += 1
        if isinstance(o, Fraction):
            coeff += o
            continue
        if o.head == "Add":
            seq.extend(o.args)
            continue
        c, s = as_coeff_mul(o)
        terms[s] = terms.get(s, ZERO) + c
    newseq = []
    for s, c in terms.items():
        if c == 0:
            continue
        if c == 1:
            newseq.append(s)
        elif isinstance(s, Term) and s.head == "Mul":
            newseq.append(Term("Mul", (c, *s.args)))
        elif isinstance(s, Term) and s.head == "Add":
            newseq.append(Term("Mul", (c, s)))
        else:
            newseq.append(mul(c, s))
    newseq.sort(key=sort_key)
    if coeff != 0:
        newseq.insert(0, coeff)
    return _make("Add", newseq)


def _keep_coeff(coeff: Fraction, factors: Value) -> Value:
    if isinstance(factors, Fraction):
        return coeff * factors
    if coeff == 1:
        return factors
    if coeff == -1:
        return neg(factors)
    if factors.head == "Add":
        return Term("Mul", (coeff, factors))
    if factors.head == "Mul":
        margs = list(factors.args)
        if isinstance(margs[0], Fraction):
            margs[0] *= coeff
            if margs[0] == 1:
                margs.pop(0)
        else:
            margs.insert(0, coeff)
        return _make("Mul", margs)
    m = mul(coeff, factors)
    return Term("Mul", (coeff, factors)) if isinstance(m, Fraction) else m


def _is_numeric_power(t: Value) -> bool:
    return isinstance(t, Term) and t.head == "Pow" and isinstance(t.args[0], Fraction)


def mul(*seq: Value) -> Value:
    """`Mul(*seq)`."""
    seq = [a for a in seq if not (isinstance(a, Fraction) and a == 1)]
    if (settled := _settled("Mul", seq)) is not None:
        return settled
    if len(seq) == 2:
        a, b = seq
        if isinstance(b, Fraction):
            a, b = b, a
        if isinstance(a, Fraction) and a != 0:
            r, rest = as_coeff_mul(b)
            if isinstance(rest, Term) and rest.head == "Add":
                if r != 1:
                    return rest if a * r == 1 else Term("Mul", (a * r, rest))
                return add(*[_keep_coeff(a, bi) for bi in rest.args])
    original = tuple(seq)
    coeff = ONE
    numeric: list[Value] = []  # powers of numbers, e.g. sqrt(2): combined by SymPy
    common: dict[Value, dict[Value, list[Fraction]]] = {}
    i = 0
    while i < len(seq):
        o = seq[i]
        i += 1
        if isinstance(o, Fraction):
            coeff *= o
            continue
        if o.head == "Mul":
            seq.extend(o.args)
            continue
        if _is_numeric_power(o):
            numeric.append(o)
            continue
        b, e = as_base_exp(o)
        c, t = as_coeff_mul(e)
        common.setdefault(b, {}).setdefault(t, []).append(c)
    if coeff == 0:
        return ZERO
    c_part: list[Value] = []
    for b, exponents in common.items():
        for t, cs in exponents.items():
            e = mul(sum(cs, ZERO), t)
            if isinstance(e, Fraction) and e == 0:
                continue
            if isinstance(e, Fraction) and e == 1:
                p = b
            else:
                p = power(b, e)
                base_changed = isinstance(p, Term) and p.head == "Pow" and p.args[0] != b
                if base_changed and not (isinstance(b, Term) and b.head == "Pow"):
                    return _delegate("Mul", original, "mul-regather")  # SymPy gathers again
            if isinstance(p, Fraction):
                coeff *= p
                continue
            if isinstance(p, Term) and p.head == "Mul":
                return _delegate("Mul", original, "mul-nested")
            c_part.append(p)
    if numeric:
        value = _delegated("Mul", (coeff, *numeric))
        coeff = ONE
        for f in value.args if isinstance(value, Term) and value.head == "Mul" else (value,):
            if isinstance(f, Fraction):
                coeff = f
            else:
                c_part.append(f)
    if coeff == 0:
        return ZERO
    c_part.sort(key=sort_key)
    if coeff != 1:
        c_part.insert(0, coeff)
        if len(c_part) == 2 and isinstance(c_part[1], Term) and c_part[1].head == "Add":
            return add(*[mul(coeff, f) for f in c_part[1].args])
    return _make("Mul", c_part)


def neg(t: Value) -> Value:
    """`-t` (`Expr.__neg__` and its overrides)."""
    if isinstance(t, Fraction):
        return -t
    if t.head == "Add":
        return mul(MINUS_ONE, t)
    if t.head == "Mul":
        args = list(t.args)
        if isinstance(args[0], Fraction):
            args[0] = -args[0]
            if args[0] == 1:
                args.pop(0)
        else:
            args.insert(0, MINUS_ONE)
        return _make("Mul", args)
    return Term("Mul", (MINUS_ONE, t))


def power(b: Value, e: Value) -> Value:
    """`Pow(b, e)`."""
    if isinstance(e, Fraction):
        if e == 0:
            return ONE
        if e == 1:
            return b
    if isinstance(b, Fraction) and b == 1:
        return ONE
    if not (isinstance(b, Term) and b.has_x) and not (isinstance(e, Term) and e.has_x):
        if isinstance(b, Fraction) and isinstance(e, Fraction):
            width = max(abs(b.numerator).bit_length(), b.denominator.bit_length())
            if abs(e.numerator) * width > MAX_POWER_BITS:
                raise IntegerTooLargeError(
                    f"the power {b}**({e}) has more than {MAX_POWER_BITS} bits"
                )
        return _delegate("Pow", (b, e), "constant")
    if isinstance(b, Term) and b.head == "Exp1":
        return apply("exp", e)
    if not isinstance(e, Fraction):
        return _delegate("Pow", (b, e), "pow-symbolic")
    integer = e.denominator == 1
    head = b.head if isinstance(b, Term) else ""
    if head == "Pow":
        return _power_of_power(b, e)
    if head == "exp":
        if integer or is_real(b.args[0]):
            return apply("exp", mul(b.args[0], e))
        return _delegate("Pow", (b, e), "pow-exp")
    if head == "Mul":
        if integer:
            return mul(*[power(f, e) for f in b.args])
        return _power_of_product(b, e)
    if head == "Abs":
        return _delegate("Pow", (b, e), "pow-abs")
    return Term("Pow", (b, e))


def _power_of_power(b: Term, e: Fraction) -> Value:
    """`Pow._eval_power`: (bb**ee)**e."""
    bb, ee = b.args
    if not isinstance(ee, Fraction):
        return _delegate("Pow", (b, e), "pow-pow")
    if e.denominator == 1:
        return power(bb, ee * e)
    sign = _sign(bb)
    if sign is None or ee == -1 or (ee.denominator == 1 and ee.numerator % 2 == 0):
        return _delegate("Pow", (b, e), "pow-pow")
    nonnegative, _ = sign
    if abs(ee) < 1 or nonnegative:
        return power(bb, ee * e)
    if e.denominator == 2:  # SymPy's floor(1/2 - e*arg(b)/2pi) test
        return _delegate("Pow", (b, e), "pow-pow")
    return Term("Pow", (b, e))


def _power_of_product(b: Term, e: Fraction) -> Value:
    """`Pow._eval_expand_power_base` for a rational, non-integer exponent."""
    nonneg, negative, other = [], [], []
    for f in b.args:
        sign = _sign(f)
        if sign is None:
            return _delegate("Pow", (b, e), "pow-mul")
        (nonneg if sign[0] else negative if sign[1] else other).append(f)
    if len(negative) > 1:
        return _delegate("Pow", (b, e), "pow-mul")
    if negative and other and negative[0] != -1:
        other.append(MINUS_ONE)
        nonneg.append(-negative[0])
    else:
        other.extend(negative)
    factors = [power(f, e) for f in nonneg]
    if other:
        rest = mul(*other)
        factors.append(Term("Pow", (rest, e)) if isinstance(rest, Term) else power(rest, e))
    return mul(*factors)


def apply(name: str, u: Value) -> Value:
    """`name(u)` for a function of FUNCTIONS."""
    if not (isinstance(u, Term) and u.has_x):
        return _delegate(name, (u,), "constant")
    if name == "exp":
        if u.head == "log":
            return u.args[0]
        if u.head in ("Mul", "Add") and any(_has_log(a) for a in u.args):
            return _delegate(name, (u,), "exp-log")
        return Term("exp", (u,))
    if name == "log":
        if u.head == "exp":
            if is_real(u.args[0]):
                return u.args[0]
            return _delegate(name, (u,), "log-exp")
        return Term("log", (u,))
    if name in ("Abs", "sign"):
        return _delegate(name, (u,), name)
    family = _TRIG if name in _TRIG else _HYPERBOLIC
    # SymPy's trig eval peels multiples of pi off a sum or product
    if u.head in family or u.head == "log" or (u.head in ("Add", "Mul") and _contains_pi(u)):
        return _delegate(name, (u,), "composition")
    if name in ODD or name in EVEN:
        minus = _could_extract_minus_sign(u)
        if minus is None:
            return _delegate(name, (u,), "sign-tie")
        if minus:
            inner = apply(name, neg(u))
            return inner if name in EVEN else neg(inner)
    elif _could_extract_minus_sign(u) is not False:  # acos(-u) = pi - acos(u), acosh
        return _delegate(name, (u,), "minus-sign")
    return Term(name, (u,))


def _has_log(t: Value) -> bool:
    if not isinstance(t, Term):
        return False
    return t.head == "log" or (t.head in ("Mul", "Add") and any(_has_log(a) for a in t.args))


def _contains_pi(t: Term) -> bool:
    return t.head == "Pi" or any(isinstance(a, Term) and _contains_pi(a) for a in t.args)
