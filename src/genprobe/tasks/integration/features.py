"""The tree features of integrands: what SAGGA's readable slices and the failure search's
clusters and slices of the integration task are read by (`IntegrationProbes.features`).

    tree_features(problems)   one row per problem: a boolean column per operator family
                              (`FAMILIES`), x in an exponent, a division, a rational
                              constant; depth, size, terms, largest |int| and x degree
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from genprobe.tasks.integration.expression import Expr, fold

# Operator families, one boolean column each. A div of two integers is a rational constant,
# not a division: it is the `rational` column, and counts for no family here.
FAMILIES: dict[str, tuple[str, ...]] = {
    "add": ("add", "sub"),
    "mul": ("mul", "div"),
    "pow": ("pow", "pow2", "pow3", "pow4", "pow5", "inv", "rac"),
    "sqrt": ("sqrt",),
    "exp": ("exp",),
    "ln": ("ln",),
    "sin": ("sin",),
    "cos": ("cos",),
    "tan": ("tan", "cot", "sec", "csc"),
    "inverse trig": ("asin", "acos", "atan", "acot", "asec", "acsc"),
    "hyperbolic": (
        "sinh", "cosh", "tanh", "coth", "sech", "csch",
        "asinh", "acosh", "atanh", "acoth", "asech", "acsch",
    ),
    "abs": ("abs", "sign"),
    "pi": ("pi",),
    "E": ("E",),
}  # fmt: skip
BOOLEAN = (*FAMILIES, "x in exponent", "division", "rational")
NUMERIC = ("depth", "size", "terms", "largest |int|", "x degree")


# Generated constants can exceed int64; the frame stores them clipped.
_INT64 = np.iinfo(np.int64)
_POWERS = {"pow2": 2, "pow3": 3, "pow4": 4, "pow5": 5, "inv": -1}


def _clip(value: int) -> int:
    return max(int(_INT64.min), min(int(_INT64.max), value))


def _is_rational(node: Expr) -> bool:
    return node.op == "div" and node.args[0].op == "int" and node.args[1].op == "int"


def _negative_constant(node: Expr) -> bool:
    if node.op == "int":
        return node.value < 0
    if _is_rational(node):
        p, q = node.args[0].value, node.args[1].value
        return p != 0 and q != 0 and (p < 0) != (q < 0)
    return False


def _negative_exponent(node: Expr) -> bool:
    # SymPy puts a product's coefficient first: x**(-y) is pow x (mul -1 y)
    return _negative_constant(node) or (node.op == "mul" and _negative_constant(node.args[0]))


@dataclass(frozen=True, slots=True)
class _Facts:
    ops: frozenset[str]  # operator names, with "rational" for a div of two integers
    depth: int
    size: int
    largest: int  # largest |int|
    has_x: bool
    x_in_exponent: bool
    division: bool
    degree: int | None  # largest integer exponent of an x; None without x


def _degree(node: Expr, kids: list[_Facts]) -> int | None:
    if node.op == "x":
        return 1
    base = node.args[0] if node.args else None
    if base is not None and base.op == "x":
        if node.op == "pow" and node.args[1].op == "int":
            return node.args[1].value
        if node.op in _POWERS:
            return _POWERS[node.op]
    degrees = [k.degree for k in kids if k.degree is not None]
    return max(degrees) if degrees else None


def _facts(node: Expr, kids: list[_Facts]) -> _Facts:
    rational = _is_rational(node)
    return _Facts(
        ops=frozenset(["rational" if rational else node.op]).union(*(k.ops for k in kids)),
        depth=1 + max((k.depth for k in kids), default=0),
        size=1 + sum(k.size for k in kids),
        largest=max([abs(node.value), *(k.largest for k in kids)]),
        has_x=node.op == "x" or any(k.has_x for k in kids),
        x_in_exponent=any(k.x_in_exponent for k in kids) or (node.op == "pow" and kids[1].has_x),
        division=any(k.division for k in kids)
        or node.op == "inv"
        or (node.op == "div" and not rational)
        or (node.op == "pow" and _negative_exponent(node.args[1])),
        degree=_degree(node, kids),
    )


def _terms(expr: Expr) -> int:
    """Top-level summands: the leaves of the add/sub tree at the root, however it nests."""
    count, stack = 0, [expr]
    while stack:
        node = stack.pop()
        if node.op in ("add", "sub"):
            stack.extend(node.args)
        else:
            count += 1
    return count


def tree_features(problems: Sequence[Expr]) -> pd.DataFrame:
    """One row per problem, in order: a boolean column per name in `BOOLEAN`, an int64 column
    per name in `NUMERIC`.

    Booleans: an operator family is present (see `FAMILIES`); `x in exponent` (x occurs in the
    exponent of a pow); `division` (inv, a div other than of two integers, or a pow with a
    negative exponent); `rational` (a div of two integers). Numbers: `depth`, `size` (nodes),
    `terms` (top-level summands), `largest |int|`, `x degree` (the largest integer n with x**n
    in the tree, counting a bare x as 1 and an x under a non-integer power as 1; 0 without x).
    """
    columns: dict[str, list] = {name: [] for name in (*BOOLEAN, *NUMERIC)}
    for problem in problems:
        facts = fold(problem, _facts)
        for name, ops in FAMILIES.items():
            columns[name].append(not facts.ops.isdisjoint(ops))
        columns["x in exponent"].append(facts.x_in_exponent)
        columns["division"].append(facts.division)
        columns["rational"].append("rational" in facts.ops)
        columns["depth"].append(facts.depth)
        columns["size"].append(facts.size)
        columns["terms"].append(_terms(problem))
        columns["largest |int|"].append(_clip(facts.largest))
        columns["x degree"].append(_clip(facts.degree or 0))
    return pd.DataFrame(
        {
            name: np.array(values, dtype=bool if name in BOOLEAN else np.int64)
            for name, values in columns.items()
        }
    )
