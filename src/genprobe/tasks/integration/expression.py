"""An immutable expression tree in x, with exact conversion to and from SymPy.

The tree speaks Lample & Charton's operator language (`add`, `mul`, `pow`, `ln`, `sqrt`, ...), so a
prefix token sequence maps onto it one to one. Leaves are the variable `x`, integers, `pi` and `E`.

Examples:
    Expr.apply("add", Expr.var(), Expr.integer(1))      ->  x + 1
    from_sympy(X**2 / 2)                                -> mul (div 1 2) (pow x 2)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import sympy as sp

from genprobe.errors import IntegerTooLargeError, UnsupportedExpressionError

# The one integration variable. Lample & Charton's environment declares x real and nonzero; their
# data was generated with these assumptions, so we keep them, and use this symbol everywhere.
X = sp.Symbol("x", real=True, nonzero=True)

LEAVES = ("x", "int", "pi", "E")
BINARY = ("add", "sub", "mul", "div", "pow", "rac")
UNARY = (
    "inv", "pow2", "pow3", "pow4", "pow5", "sqrt", "exp", "ln", "abs", "sign",
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "asec", "acsc",
    "sinh", "cosh", "tanh", "coth", "sech", "csch",
    "asinh", "acosh", "atanh", "acoth", "asech", "acsch",
)  # fmt: skip
ARITY = {**dict.fromkeys(LEAVES, 0), **dict.fromkeys(UNARY, 1), **dict.fromkeys(BINARY, 2)}

# A power of two numbers is evaluated exactly by SymPy: 2**(10**9) would run for minutes in C code
# that no alarm can interrupt. Refuse results wider than this many bits.
MAX_POWER_BITS = 100_000


@dataclass(frozen=True, slots=True, eq=False)
class Expr:
    """One node: an operator with its arguments, or a leaf (`value` holds an integer's value)."""

    op: str
    args: tuple[Expr, ...] = ()
    value: int = 0

    def __post_init__(self) -> None:
        if self.op not in ARITY:
            raise ValueError(f"unknown operator {self.op!r}")
        if len(self.args) != ARITY[self.op]:
            raise ValueError(f"{self.op} takes {ARITY[self.op]} arguments. Got {len(self.args)}.")

    @staticmethod
    def var() -> Expr:
        return _X_LEAF

    @staticmethod
    def integer(value: int) -> Expr:
        return Expr("int", value=int(value))

    @staticmethod
    def apply(op: str, *args: Expr) -> Expr:
        return Expr(op, tuple(args))

    def __str__(self) -> str:
        return str(to_sympy(self))

    # Equality and hashing walk the tree with a stack: the generated ones would recurse as
    # deep as the tree, and a long right-nested sum is thousands deep.
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Expr):
            return NotImplemented
        stack = [(self, other)]
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if a.op != b.op or a.value != b.value or len(a.args) != len(b.args):
                return False
            stack.extend(zip(a.args, b.args, strict=True))
        return True

    def __hash__(self) -> int:
        return fold(self, lambda node, kids: hash((node.op, node.value, *kids)))


_X_LEAF = Expr("x")

T = TypeVar("T")


def fold(expr: Expr, combine: Callable[[Expr, list[T]], T]) -> T:
    """Post-order reduction without recursion: `combine(node, results_of_its_args)`.

    Used for every whole-tree walk, so that deep trees (a sum of 2,000 terms nests 2,000 deep)
    never hit Python's recursion limit.
    """
    results: list[T] = []
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if not node.args:
            results.append(combine(node, []))
        elif expanded:
            n = len(node.args)
            children = results[-n:]
            del results[-n:]
            results.append(combine(node, children))
        else:
            stack.append((node, True))
            stack.extend((arg, False) for arg in reversed(node.args))
    return results[0]


def depth(expr: Expr) -> int:
    return fold(expr, lambda _, kids: 1 + max(kids, default=0))


def size(expr: Expr) -> int:
    """Number of nodes (an integer counts as one node)."""
    return fold(expr, lambda _, kids: 1 + sum(kids))


def operators(expr: Expr) -> frozenset[str]:
    """The operator and leaf names used anywhere in the tree."""
    return fold(expr, lambda node, kids: frozenset([node.op]).union(*kids))


# --------------------------------------------------------------------------- tree -> SymPy

_SPECIAL_UNARY: dict[str, Callable[[sp.Expr], sp.Expr]] = {
    "inv": lambda a: sp.Pow(a, -1),
    "pow2": lambda a: sp.Pow(a, 2),
    "pow3": lambda a: sp.Pow(a, 3),
    "pow4": lambda a: sp.Pow(a, 4),
    "pow5": lambda a: sp.Pow(a, 5),
    "sqrt": sp.sqrt,
    "ln": sp.log,
    "abs": sp.Abs,
}
# every other unary token is the SymPy function of the same name (exp, sign, sin, ..., acsch)
_SYMPY_UNARY = {name: _SPECIAL_UNARY.get(name) or getattr(sp, name) for name in UNARY}


def _checked_pow(base: sp.Expr, exponent: sp.Expr) -> sp.Expr:
    if base.is_Rational and exponent.is_Rational:
        numerator = abs(int(exponent.p))
        width = max(abs(int(base.p)).bit_length(), int(base.q).bit_length())
        if numerator * width > MAX_POWER_BITS:
            raise IntegerTooLargeError(
                f"the power {base}**({exponent}) has more than {MAX_POWER_BITS} bits"
            )
    return sp.Pow(base, exponent)


_SYMPY_BINARY: dict[str, Callable[[sp.Expr, sp.Expr], sp.Expr]] = {
    "add": lambda a, b: sp.Add(a, b),
    "sub": lambda a, b: sp.Add(a, sp.Mul(-1, b)),
    "mul": lambda a, b: sp.Mul(a, b),
    "div": lambda a, b: sp.Mul(a, _checked_pow(b, sp.Integer(-1))),
    "pow": _checked_pow,
    "rac": lambda a, b: _checked_pow(a, _checked_pow(b, sp.Integer(-1))),
}

_SYMPY_LEAF: dict[str, sp.Expr] = {"x": X, "pi": sp.pi, "E": sp.E}


def _node_to_sympy(node: Expr, args: list[sp.Expr]) -> sp.Expr:
    if node.op == "int":
        return sp.Integer(node.value)
    if not args:
        return _SYMPY_LEAF[node.op]
    if len(args) == 1:
        return _SYMPY_UNARY[node.op](args[0])
    return _SYMPY_BINARY[node.op](args[0], args[1])


def to_sympy(expr: Expr) -> sp.Expr:
    """The SymPy expression for `expr`, built with explicit constructors (never from text).

    Raises:
        IntegerTooLargeError: a power of two numbers would exceed `MAX_POWER_BITS`.
    """
    return fold(expr, _node_to_sympy)


# --------------------------------------------------------------------------- SymPy -> tree

_SYMPY_FUNCTIONS: dict[type, str] = {
    getattr(sp, name): name for name in UNARY if name not in _SPECIAL_UNARY
} | {sp.log: "ln", sp.Abs: "abs"}

_HALF = sp.Rational(1, 2)


def right_nested(op: str, children: list[Expr]) -> Expr:
    """An n-ary sum or product as L&C write it: `op a (op b c)`."""
    tree = children[-1]
    for child in reversed(children[:-1]):
        tree = Expr(op, (child, tree))
    return tree


def from_sympy(expr: sp.Expr) -> Expr:
    """The tree for a SymPy expression, in Lample & Charton's canonical shape.

    n-ary `Add`/`Mul` become right-nested binary operators in SymPy's argument order,
    `Pow(b, 1/2)` becomes `sqrt b`, a rational `p/q` becomes `div p q`, `log` becomes `ln`.

    Raises:
        UnsupportedExpressionError: a symbol other than `X`, a float, `I`, infinities, or a
            function the vocabulary has no token for.
    """
    if isinstance(expr, sp.Symbol):
        if expr == X:  # not `is`: SymPy makes another x once its cache has let X go
            return _X_LEAF
        raise UnsupportedExpressionError(
            f"symbol {expr.name!r} (assumptions {expr.assumptions0}) is not the integration "
            "variable; build expressions with genprobe.tasks.integration.X"
        )
    if isinstance(expr, sp.Integer):
        return Expr.integer(int(expr))
    if isinstance(expr, sp.Rational):
        return Expr.apply("div", Expr.integer(int(expr.p)), Expr.integer(int(expr.q)))
    if expr is sp.E:
        return Expr("E")
    if expr is sp.pi:
        return Expr("pi")
    if isinstance(expr, (sp.Add, sp.Mul)):
        op = "add" if isinstance(expr, sp.Add) else "mul"
        return right_nested(op, [from_sympy(arg) for arg in expr.args])
    if isinstance(expr, sp.Pow):
        base, exponent = expr.args
        if exponent == _HALF:
            return Expr("sqrt", (from_sympy(base),))
        return Expr("pow", (from_sympy(base), from_sympy(exponent)))
    if isinstance(expr, sp.Function) and len(expr.args) == 1:
        name = _SYMPY_FUNCTIONS.get(type(expr))
        if name is not None:
            return Expr(name, (from_sympy(expr.args[0]),))
    raise UnsupportedExpressionError(
        f"{type(expr).__name__} ({sp.sstr(expr)[:60]}) has no token in the vocabulary"
    )
