"""Prefix token sequences in Lample & Charton's exact format, and their parser.

Integers are a sign token then base-10 digits (`42` -> `INT+ 4 2`, `-1` -> `INT- 1`); the model
input for an integrand f is `sub Y' <f>` ("Y' - f", the clean form of `sub derivative f x x`).

Examples:
    to_prefix(from_sympy(X**2 / 2))     -> mul div INT+ 1 INT+ 2 pow x INT+ 2
    from_prefix("add x INT- 1".split()) -> x - 1
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from genprobe.errors import ParseError, UnsupportedExpressionError
from genprobe.tasks.integration.expression import ARITY, Expr, fold
from genprobe.tasks.integration.limits import DEFAULT_LIMITS, ParseLimits
from genprobe.tasks.integration.vocab import DIGIT_TOKENS, TOKEN_TO_ID

PROBLEM_PREFIX = ("sub", "Y'")
_UNCLEAN_PROBLEM_PREFIX = ("sub", "derivative", "f", "x", "x")
_STRUCTURAL = {"<s>", "</s>", "<pad>", "(", ")", *DIGIT_TOKENS} | {
    token for token in TOKEN_TO_ID if token.startswith("<SPECIAL_")
}
_DIGITS = frozenset(DIGIT_TOKENS)
# an integer in prefix text: its sign token, then its digit tokens (each a whole word)
_INTEGER = re.compile(r"(?<!\S)INT([+-])((?:\s+[0-9](?!\S))+)")


def _write_int(value: int) -> list[str]:
    return ["INT+" if value >= 0 else "INT-", *str(abs(value))]


def _node_to_prefix(node: Expr, args: list[list[str]]) -> list[str]:
    if node.op == "int":
        return _write_int(node.value)
    tokens = [node.op]
    for arg in args:
        tokens += arg
    return tokens


def to_prefix(expr: Expr) -> list[str]:
    """Prefix tokens of `expr` (the tree as it is; use `from_sympy` for L&C's canonical shape)."""
    return fold(expr, _node_to_prefix)


def problem_prefix(integrand: Expr) -> list[str]:
    """The model input for integrating `integrand`: `sub Y' <integrand>`."""
    return [*PROBLEM_PREFIX, *to_prefix(integrand)]


def integer_literals(text: str) -> list[int]:
    """The integers written in prefix `text` (space-separated tokens), in order, without parsing
    the expression: for statistics over whole datasets, where building trees costs too much.
    A sign token without digits is skipped (`from_prefix` rejects it).

    Example:
        integer_literals("add INT+ 4 2 mul INT- 1 x") -> [42, -1]
    """
    return [
        int("".join(digits.split())) * (1 if sign == "+" else -1)
        for sign, digits in _INTEGER.findall(text)
    ]


def strip_problem_prefix(tokens: Sequence[str]) -> Sequence[str]:
    """`tokens` without a leading `sub Y'` (or its unclean form `sub derivative f x x`)."""
    for head in (PROBLEM_PREFIX, _UNCLEAN_PROBLEM_PREFIX):
        if tuple(tokens[: len(head)]) == head:
            return tokens[len(head) :]
    return tokens


def from_prefix(tokens: Sequence[str], limits: ParseLimits = DEFAULT_LIMITS) -> Expr:
    """Parse prefix tokens into a tree.

    Raises:
        ParseError: empty input, an unknown or misplaced token, a missing argument, leftover
            tokens; its subclasses for the length, depth and integer-size limits.
        UnsupportedExpressionError: a vocabulary token the integration task does not use
            (`y`, `a0`, `derivative`, `f`, `I`, `FLOAT`, `Y`, ...).
    """
    limits.check_length(len(tokens), "tokens")
    if not tokens:
        raise ParseError("empty prefix expression")
    # frames of operators still waiting for arguments: [op, args collected so far]
    frames: list[tuple[str, list[Expr]]] = []
    position = 0
    while position < len(tokens):
        token = tokens[position]
        start = position
        position += 1
        if token in ("INT+", "INT-"):
            while position < len(tokens) and tokens[position] in _DIGITS:
                position += 1
            digits = "".join(tokens[start + 1 : position])
            if not digits:
                raise ParseError(f"token {start} ({token}) is not followed by digits")
            limits.check_digits(len(digits))
            node = Expr.integer(int(digits) if token == "INT+" else -int(digits))
        elif token in ARITY and token != "int":
            if ARITY[token]:
                frames.append((token, []))
                limits.check_depth(len(frames))
                continue
            node = Expr(token)
        elif token in _STRUCTURAL:
            raise ParseError(f"token {start} ({token!r}) cannot appear here")
        elif token in TOKEN_TO_ID:
            raise UnsupportedExpressionError(
                f"token {start} ({token!r}) is not part of the integration task"
            )
        else:
            raise ParseError(f"token {start} ({token!r}) is not in the vocabulary")
        # attach the finished node, closing every operator it completes
        while frames:
            op, args = frames[-1]
            args.append(node)
            if len(args) < ARITY[op]:
                break
            frames.pop()
            node = Expr(op, tuple(args))
        else:
            if position < len(tokens):
                raise ParseError(
                    f"the expression ends at token {position - 1}; "
                    f"{len(tokens) - position} tokens are left over"
                )
            return node
    op, args = frames[-1]
    raise ParseError(f"unexpected end: {op} is missing {ARITY[op] - len(args)} argument(s)")
