"""Expressions as people, files and models give them, read by one rule everywhere.

An expression may be an `Expr`, a SymPy expression in `X`, a list of prefix tokens, or a
string. A string is read as prefix tokens when all its space-separated words are vocabulary
tokens and it parses as prefix, else as infix text (`infix.py`); a prefix problem may carry
the model-input head `sub Y'`, which is dropped.

`prose=False` reads the text of data files strictly: the whole string must be the expression
(model answers default to `prose=True`: "The integral is x^2 + C." reads as x^2).
`canonical=True` puts infix text and SymPy input in Lample & Charton's canonical shape
(`from_sympy(to_sympy(·))`), as their models were trained: `x*2 + 1` becomes
`add INT+ 1 mul INT+ 2 x`. Prefix tokens are always kept exactly as given.

Examples:
    read_expression("add x INT+ 1") == read_expression("x + 1")
    read_expression("x*2 + 1", canonical=True)  ->  add INT+ 1 mul INT+ 2 x
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from genprobe.errors import ParseError
from genprobe.tasks.integration.expression import Expr, from_sympy, to_sympy
from genprobe.tasks.integration.infix import parse_infix
from genprobe.tasks.integration.limits import DEFAULT_LIMITS, ParseLimits
from genprobe.tasks.integration.prefix import from_prefix, strip_problem_prefix
from genprobe.tasks.integration.vocab import TOKEN_TO_ID

ExpressionInput = Expr | sp.Basic | Sequence[str] | str


def read_expression(
    value: ExpressionInput,
    limits: ParseLimits = DEFAULT_LIMITS,
    *,
    canonical: bool = False,
    prose: bool = True,
) -> Expr:
    """An `Expr` from any accepted input form (see the module docstring).

    Raises:
        ParseError, UnsupportedExpressionError: the input is not an expression we encode. For a
            string of vocabulary tokens that is neither prefix nor infix, the prefix error.
    """
    if isinstance(value, Expr):
        return value
    if isinstance(value, sp.Basic):
        return from_sympy(value)
    if isinstance(value, str):
        words = value.split()
        if len(words) > 1 and all(word in TOKEN_TO_ID for word in words):
            try:
                return from_prefix(strip_problem_prefix(words), limits)
            except ParseError as prefix_error:
                try:
                    return _infix(value, limits, canonical, prose)
                except ParseError:
                    raise prefix_error from None
        return _infix(value, limits, canonical, prose)
    if isinstance(value, Sequence) and all(isinstance(token, str) for token in value):
        return from_prefix(strip_problem_prefix(value), limits)
    raise ParseError(
        f"expected an expression as text, prefix tokens or SymPy. Got {type(value).__name__}."
    )


def _infix(text: str, limits: ParseLimits, canonical: bool, prose: bool) -> Expr:
    tree = parse_infix(text, limits, prose=prose)
    return from_sympy(to_sympy(tree)) if canonical else tree
