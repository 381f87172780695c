"""Random expressions as Lample & Charton draw them: uniform unary-binary tree shapes.

Shapes come from the counting recursion D(e, n) (e empty slots, n operators left):
D(0, n) = 0, D(e, 0) = 1, D(e, n) = D(e-1, n) + D(e, n-1) + D(e+1, n-1), which is theirs with
L = p1 = p2 = 1: every shape with n operators is equally likely. Operators are then drawn by
weight among the unary or binary ones, leaves are x (75 %) or an integer 1..max_int (25 %).

Example:
    random_expression(np.random.default_rng(0), n_ops=3, settings=TreeSettings())
    -> e.g. add x (mul INT+ 3 (sin x))
"""

from __future__ import annotations

import functools

import numpy as np

from genprobe.tasks.integration.expression import ARITY, Expr
from genprobe.tasks.integration.generation_config import TreeSettings


@functools.lru_cache(maxsize=64)
def _counts(max_ops: int) -> tuple[tuple[int, ...], ...]:
    """D[n][e] for n <= max_ops and e <= 2 * max_ops + 1 (exact integers)."""
    width = 2 * max_ops + 2
    table = [[0] + [1] * (width - 1)]
    for n in range(1, max_ops + 1):
        row = [0] * width
        for e in range(1, width - 1):
            row[e] = row[e - 1] + table[n - 1][e] + table[n - 1][e + 1]
        table.append(row)
    return tuple(tuple(row) for row in table)


def _next_position(rng: np.random.Generator, empty: int, n_ops: int, max_ops: int) -> tuple:
    """(leaves skipped, arity) for the next operator, with its exact probability."""
    table = _counts(max_ops)
    weights = []
    choices = []
    for skipped in range(empty):
        for arity in (1, 2):
            weights.append(table[n_ops - 1][empty - skipped - 1 + arity])
            choices.append((skipped, arity))
    total = sum(weights)
    # exact integers can be huge: draw with a uniform integer, not float probabilities
    threshold = int(rng.integers(0, 2**62)) * total // 2**62
    for choice, weight in zip(choices, weights, strict=True):
        if threshold < weight:
            return choice
        threshold -= weight
    return choices[-1]


def random_expression(rng: np.random.Generator, n_ops: int, settings: TreeSettings) -> Expr:
    """A random tree with exactly `n_ops` operators."""
    unary = [op for op, w in settings.operators.items() if ARITY[op] == 1 and w > 0]
    binary = [op for op, w in settings.operators.items() if ARITY[op] == 2 and w > 0]
    p_unary = np.array([settings.operators[op] for op in unary], dtype=float)
    p_binary = np.array([settings.operators[op] for op in binary], dtype=float)
    # the tree in prefix order; None marks a slot still empty
    slots: list[str | None] = [None]
    empty, leaves_before = 1, 0
    for remaining in range(n_ops, 0, -1):
        skipped, arity = _next_position(rng, empty, remaining, n_ops)
        if arity == 1:
            op = unary[rng.choice(len(unary), p=p_unary / p_unary.sum())]
        else:
            op = binary[rng.choice(len(binary), p=p_binary / p_binary.sum())]
        leaves_before += skipped
        position = [i for i, slot in enumerate(slots) if slot is None][leaves_before]
        slots[position : position + 1] = [op] + [None] * arity
        empty += arity - 1 - skipped
    leaves = [_random_leaf(rng, settings) for slot in slots if slot is None]
    return _build(slots, leaves)


def _random_leaf(rng: np.random.Generator, settings: TreeSettings) -> Expr:
    if rng.random() < settings.x_probability:
        return Expr.var()
    value = int(rng.integers(1, settings.max_int + 1))
    if not settings.positive and rng.random() < 0.5:
        value = -value
    return Expr.integer(value)


def _build(slots: list[str | None], leaves: list[Expr]) -> Expr:
    nodes: list[Expr] = []
    leaf_iter = iter(reversed(leaves))
    for slot in reversed(slots):
        if slot is None:
            nodes.append(next(leaf_iter))
        else:
            args = tuple(nodes.pop() for _ in range(ARITY[slot]))
            nodes.append(Expr(slot, args))
    return nodes[0]
