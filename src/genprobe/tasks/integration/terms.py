"""Light expression terms in SymPy's shape: the data generator's hot path works on these.

A `Term` is one SymPy node without SymPy's machinery: `head` is the SymPy class name (`Add`,
`Mul`, `Pow`, `Symbol`, `Pi`, `Exp1`, `exp`, `log`, `sin`, ...), `args` its arguments; numbers
are `Fraction`s. `compare` is SymPy's `Basic.compare`, the order of `Add` and `Mul` arguments.
`to_sympy`, `from_sympy` and `to_tree` convert exactly (raw constructors, no re-evaluation):
terms are built canonical by `canonical`, never re-evaluated on the way out.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import sympy as sp
from sympy.core.basic import ordering_of_classes

from genprobe.tasks.integration.expression import Expr, right_nested
from genprobe.tasks.integration.expression import X as SYMPY_X


class Term:
    """A node: `head` is SymPy's class name (`Add`, `Pow`, `sin`, `Symbol`, ...)."""

    __slots__ = ("_hash", "args", "has_x", "head")

    def __init__(self, head: str, args: tuple = ()) -> None:
        self.head = head
        self.args = args
        self._hash = hash((head, args))
        self.has_x = head == "Symbol" or any(isinstance(a, Term) and a.has_x for a in args)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Term)
            and self._hash == other._hash
            and self.head == other.head
            and self.args == other.args
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return str(to_sympy(self))


Value = Term | Fraction

X = Term("Symbol")
PI = Term("Pi")
E = Term("Exp1")
ZERO, ONE, MINUS_ONE, HALF = Fraction(0), Fraction(1), Fraction(-1), Fraction(1, 2)

FUNCTIONS = (
    "exp", "log", "Abs", "sign", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
)  # fmt: skip


class Unsupported(Exception):
    """The term left the generator's language (I, infinities, NaN, an unknown function)."""


# --------------------------------------------------------------------------- SymPy's order

_ORDER = {name: i for i, name in enumerate(ordering_of_classes)}
_UNKNOWN = len(ordering_of_classes) + 1


def class_name(t: Value) -> str:
    if isinstance(t, Fraction):
        if t.denominator != 1:
            return "Half" if t == HALF else "Rational"
        return {0: "Zero", 1: "One", -1: "NegativeOne"}.get(t.numerator, "Integer")
    return t.head


def _cmp_name(n1: str, n2: str) -> int:
    if n1 == n2:
        return 0
    i1, i2 = _ORDER.get(n1, _UNKNOWN), _ORDER.get(n2, _UNKNOWN)
    if i1 == _UNKNOWN and i2 == _UNKNOWN:
        return (n1 > n2) - (n1 < n2)
    return (i1 > i2) - (i1 < i2)


def compare(a: Value, b: Value) -> int:
    """`Basic.compare`: the order of `Add` and `Mul` arguments."""
    if a is b:
        return 0
    c = _cmp_name(class_name(a), class_name(b))
    if c:
        return c
    st = (a.numerator, a.denominator) if isinstance(a, Fraction) else a.args
    ot = (b.numerator, b.denominator) if isinstance(b, Fraction) else b.args
    c = (len(st) > len(ot)) - (len(st) < len(ot))
    if c:
        return c
    for left, right in zip(st, ot, strict=True):
        if isinstance(left, Term | Fraction):
            c = compare(left, right)
        else:
            c = (left > right) - (left < right)
        if c:
            return c
    return 0


sort_key = functools.cmp_to_key(compare)

# --------------------------------------------------------------------------- conversion

SYMPY_FUNCTIONS = {name: getattr(sp, name) for name in FUNCTIONS}
_HEADS = {cls: name for name, cls in SYMPY_FUNCTIONS.items()}


def to_sympy(t: Value) -> sp.Expr:
    """The SymPy expression with exactly this structure (raw constructors)."""
    if isinstance(t, Fraction):
        return sp.Rational(t.numerator, t.denominator)
    return _to_sympy(t)


@functools.lru_cache(maxsize=65536)
def _to_sympy(t: Term) -> sp.Expr:
    if t.head == "Symbol":
        return SYMPY_X
    if t.head == "Pi":
        return sp.pi
    if t.head == "Exp1":
        return sp.E
    args = [to_sympy(a) for a in t.args]
    if t.head == "Add":
        return sp.Add._from_args(args)
    if t.head == "Mul":
        return sp.Mul._from_args(args)
    if t.head == "Pow":
        return sp.Pow(*args, evaluate=False)
    return SYMPY_FUNCTIONS[t.head](*args, evaluate=False)


def from_sympy(e: sp.Expr) -> Value:
    """The term with exactly this structure.

    Raises:
        Unsupported: I, infinities, NaN, floats, another symbol, or a function not in FUNCTIONS.
    """
    if e.is_Rational:
        return Fraction(int(e.p), int(e.q))
    if e.is_Symbol and e == SYMPY_X:  # not `is`: SymPy makes another x once its cache lets X go
        return X
    if e is sp.pi:
        return PI
    if e is sp.E:
        return E
    if isinstance(e, sp.Add | sp.Mul | sp.Pow):
        return Term(type(e).__name__, tuple(from_sympy(a) for a in e.args))
    head = _HEADS.get(type(e))
    if head is None:
        raise Unsupported(type(e).__name__)
    return Term(head, (from_sympy(e.args[0]),))


_HEAD_TOKENS = {"log": "ln", "Abs": "abs"}


def to_tree(t: Value) -> Expr:
    """The tree of a term in Lample & Charton's shape, as `expression.from_sympy` makes it."""
    if isinstance(t, Fraction):
        if t.denominator == 1:
            return Expr.integer(t.numerator)
        return Expr.apply("div", Expr.integer(t.numerator), Expr.integer(t.denominator))
    if t.head == "Symbol":
        return Expr.var()
    if t.head in ("Pi", "Exp1"):
        return Expr("pi" if t.head == "Pi" else "E")
    if t.head in ("Add", "Mul"):
        return right_nested(t.head.lower(), [to_tree(a) for a in t.args])
    if t.head == "Pow":
        b, e = t.args
        if e == HALF:
            return Expr("sqrt", (to_tree(b),))
        return Expr("pow", (to_tree(b), to_tree(e)))
    return Expr(_HEAD_TOKENS.get(t.head, t.head), (to_tree(t.args[0]),))


def prefix_length(t: Value) -> int:
    """`len(to_prefix(to_tree(t)))`, without building either: the simplifier compares it often."""
    if isinstance(t, Fraction):
        if t.denominator == 1:
            return _int_length(t.numerator)
        return 1 + _int_length(t.numerator) + _int_length(t.denominator)
    return _prefix_length(t)


@functools.lru_cache(maxsize=65536)
def _prefix_length(t: Term) -> int:
    if not t.args:
        return 1
    if t.head in ("Add", "Mul"):  # one operator token per pair in the right-nested chain
        return len(t.args) - 1 + sum(prefix_length(a) for a in t.args)
    if t.head == "Pow" and t.args[1] == HALF:  # sqrt b
        return 1 + prefix_length(t.args[0])
    return 1 + sum(prefix_length(a) for a in t.args)


def _int_length(value: int) -> int:
    return 1 + len(str(abs(value)))  # the sign token, then one token per digit
