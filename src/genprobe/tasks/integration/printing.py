"""How integrands and answers are printed: for a model that reads text, for a reader, for
records. An answer is a model's as the verifier takes it: the parsed expression, or the raw
output (text, or prefix tokens) that did not parse.

Example:
    problem_text(parse_infix("2*x"))       -> "2*x"
    answer_text(("add", "x"))              -> "add x"
"""

from __future__ import annotations

from genprobe.errors import GenprobeError
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.prefix import to_prefix


def answer_text(answer: Expr | str | tuple[str, ...]) -> str:
    """An answer as text: an expression's prefix tokens, raw output (text or tokens) as the
    model gave it."""
    if isinstance(answer, Expr):
        return " ".join(to_prefix(answer))
    return answer if isinstance(answer, str) else " ".join(answer)


def infix_text(expr: Expr) -> str | None:
    """SymPy's printing of `expr`, or None where SymPy refuses to build it (huge powers) or
    Python to print it (an integer of more than 4,300 digits)."""
    try:
        return str(expr)
    except (GenprobeError, ValueError):
        return None


def problem_text(expr: Expr) -> str:
    """How a problem is shown to a model that reads text: infix, else prefix tokens."""
    return infix_text(expr) or " ".join(to_prefix(expr))


def shown_answer(answer: Expr | str | tuple[str, ...]) -> str:
    """How an answer is shown to a reader: an expression as `problem_text` prints it, raw
    output (text or tokens) as the model gave it."""
    return problem_text(answer) if isinstance(answer, Expr) else answer_text(answer)
