"""SAGGA's mutations of an integrand (Welleck et al. 2022, section 2.2), on our `Expr` tree.

One mutation picks a node by a random walk from the root (1 to depth - 1 steps, stopping at a
leaf; the root only in a one-node tree) and rewrites it with a rewrite drawn from the
mutation parameters' weights: a leaf becomes a constant, `c*x`, or an op (`c*x**e`,
`c**(x**e)`, `c/x**e`); an internal node becomes `x`, a constant in [0, 1000), another head
among add/mul/pow, or gains an argument. A `sin`, `cos` or `tan` node is left unchanged, as in
the original code.

Mutation parameters (`MUTATION_PARAMS`, chosen by `--mutation-params`) are weights over the
named rewrites and the range of constants; their names and numbers are the original's
(`MUTATION_PARAMS`). What differs, on purpose:
  - our tree is binary (`add(a, add(b, c))`, not `Add(a, b, c)`), so walks reach later terms
    one step deeper than in SymPy's n-ary tree; a rational `div(p, q)` counts as one leaf, as
    SymPy's `Rational` does;
  - the head swap picks from a sorted list (the original iterated a Python set, whose order
    changes between processes) and a unary node `f(u)` becomes `g(f(u), u)`, never a
    three-argument power;
  - a gained argument extends a sum or product (`add(node, new)`), goes inside a unary function
    (`f(u + new)`, what the original did), and leaves a power unchanged (the original's third
    argument became SymPy's `evaluate` flag).

Example:
    mutate(parse_infix("2*x + 1"), np.random.default_rng(0), MUTATION_PARAMS["robustness"])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from genprobe.tasks.integration.expression import Expr

Rewrite = Callable[[Expr, np.random.Generator, "MutationParams"], Expr]


@dataclass(frozen=True)
class MutationParams:
    internal: Mapping[str, float]  # rewrite name -> weight, for internal nodes
    leaf: Mapping[str, float]  # rewrite name -> weight, for leaves
    vmin: int  # constants are drawn from [vmin, vmax)
    vmax: int


_UNIFORM_INTERNAL = {"symbol": 0.25, "constant": 0.25, "add_arg": 0.25, "op": 0.25}
_UNIFORM_LEAF = {"symbol": 0.33, "constant": 0.33, "op": 0.34}

MUTATION_PARAMS: dict[str, MutationParams] = {
    "uniform": MutationParams(_UNIFORM_INTERNAL, _UNIFORM_LEAF, -1000, 1000),
    "robustness": MutationParams({"constant": 1.0}, {"constant": 1.0}, -100, 100),
    "distance": MutationParams(_UNIFORM_INTERNAL, _UNIFORM_LEAF, -100, 100),
}

UNCHANGED = frozenset({"sin", "cos", "tan"})
HEADS = ("add", "mul", "pow")


def random_op(rng: np.random.Generator, vmin: int, vmax: int) -> Expr:
    """`c*x**e`, `c**(x**e)` or `c/x**e`, c in [vmin, vmax), e in {1, 2}."""
    c = Expr.integer(rng.integers(vmin, vmax))
    shape = ("mul", "pow", "div")[rng.integers(3)]
    power = Expr.apply("pow", Expr.var(), Expr.integer(rng.integers(1, 3)))
    return Expr.apply(shape, c, power)


# -- rewrites of a leaf ----------------------------------------------------------------


def _leaf_constant(node: Expr, rng: np.random.Generator, params: MutationParams) -> Expr:
    return Expr.integer(rng.integers(params.vmin, params.vmax))


def _leaf_symbol(node: Expr, rng: np.random.Generator, params: MutationParams) -> Expr:
    return Expr.apply("mul", Expr.integer(rng.integers(params.vmin, params.vmax)), Expr.var())


def _leaf_op(node: Expr, rng: np.random.Generator, params: MutationParams) -> Expr:
    return random_op(rng, params.vmin, params.vmax)


LEAF: dict[str, Rewrite] = {"symbol": _leaf_symbol, "constant": _leaf_constant, "op": _leaf_op}

# -- rewrites of an internal node ------------------------------------------------------


def _internal_symbol(node: Expr, rng: np.random.Generator, params: MutationParams) -> Expr:
    return Expr.var()


def _internal_constant(node: Expr, rng: np.random.Generator, params: MutationParams) -> Expr:
    return Expr.integer(rng.integers(1000))  # the original ignores vmin/vmax here


def _swap_head(node: Expr, rng: np.random.Generator, params: MutationParams) -> Expr:
    heads = [h for h in HEADS if h != node.op]
    head = heads[rng.integers(len(heads))]
    args = node.args if len(node.args) == 2 else (node, node.args[0])
    return Expr(head, args)


def _add_arg(node: Expr, rng: np.random.Generator, params: MutationParams) -> Expr:
    new = random_op(rng, params.vmin, params.vmax)
    if node.op in ("add", "mul"):
        return Expr(node.op, (node, new))
    if len(node.args) == 1:
        return Expr(node.op, (Expr.apply("add", node.args[0], new),))
    return node


INTERNAL: dict[str, Rewrite] = {
    "symbol": _internal_symbol,
    "constant": _internal_constant,
    "add_arg": _add_arg,
    "op": _swap_head,
}

# -- choosing the node -----------------------------------------------------------------


def is_leaf(node: Expr) -> bool:
    """A leaf for mutation: no arguments, or a rational `div(int, int)` (SymPy's `Rational`)."""
    return not node.args or (node.op == "div" and all(a.op == "int" for a in node.args))


def mutation_depth(expr: Expr) -> int:
    """Depth with rationals as leaves (a leaf has depth 1)."""
    if is_leaf(expr):
        return 1
    return 1 + max(mutation_depth(arg) for arg in expr.args)


def random_path(expr: Expr, rng: np.random.Generator) -> tuple[int, ...]:
    """Child indices from the root to the node to mutate."""
    levels = mutation_depth(expr)
    steps = int(rng.integers(1, levels)) if levels > 1 else 0
    path: list[int] = []
    node = expr
    for _ in range(steps):
        if is_leaf(node):
            break
        index = int(rng.integers(len(node.args)))
        path.append(index)
        node = node.args[index]
    return tuple(path)


def _replace(expr: Expr, path: tuple[int, ...], new: Expr) -> Expr:
    if not path:
        return new
    head, rest = path[0], path[1:]
    args = list(expr.args)
    args[head] = _replace(args[head], rest, new)
    return Expr(expr.op, tuple(args), expr.value)


def _at(expr: Expr, path: tuple[int, ...]) -> Expr:
    for index in path:
        expr = expr.args[index]
    return expr


def _draw(rng: np.random.Generator, weights: Mapping[str, float]) -> str:
    names = list(weights)
    p = np.array([weights[name] for name in names], dtype=float)
    return names[rng.choice(len(names), p=p / p.sum())]


def mutate(expr: Expr, rng: np.random.Generator, params: MutationParams) -> Expr:
    """One mutant of `expr` (possibly `expr` itself: a trig node, or a power gaining an arg)."""
    path = random_path(expr, rng)
    node = _at(expr, path)
    if node.op in UNCHANGED:
        return expr
    if is_leaf(node):
        new = LEAF[_draw(rng, params.leaf)](node, rng, params)
    else:
        new = INTERNAL[_draw(rng, params.internal)](node, rng, params)
    return _replace(expr, path, new)
