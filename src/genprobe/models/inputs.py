"""Problems and candidates as users give them: prefix tokens (used as given) or infix text
(parsed safely, then put in Lample & Charton's canonical shape, as their models were trained)."""

from __future__ import annotations

from collections.abc import Sequence

from genprobe.errors import ParseError
from genprobe.tasks.integration.expression import Expr, from_sympy, to_sympy
from genprobe.tasks.integration.infix import parse_infix
from genprobe.tasks.integration.limits import DEFAULT_LIMITS, ParseLimits
from genprobe.tasks.integration.prefix import from_prefix, strip_problem_prefix
from genprobe.tasks.integration.vocab import TOKEN_TO_ID


def read_input(value: str | Sequence[str], limits: ParseLimits = DEFAULT_LIMITS) -> Expr:
    """An integrand or antiderivative from a token list, a string of prefix tokens (with or
    without `sub Y'`), or infix text.

    Infix goes through SymPy (`from_sympy(to_sympy(·))`): `x*2 + 1` becomes the tree L&C's
    environment would write, `add INT+ 1 mul INT+ 2 x`. Prefix is kept exactly as given.

    Raises:
        ParseError, UnsupportedExpressionError: not an expression the task encodes.
    """
    if not isinstance(value, str):
        return from_prefix(strip_problem_prefix(list(value)), limits)
    words = value.split()
    if len(words) > 1 and all(word in TOKEN_TO_ID for word in words):
        try:
            return from_prefix(strip_problem_prefix(words), limits)
        except ParseError:
            pass  # e.g. "x x": not prefix; the infix parser says why
    return from_sympy(to_sympy(parse_infix(value, limits)))
