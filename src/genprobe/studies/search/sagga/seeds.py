"""The problems a search starts from (SAGGA's `_initial_seed`), and its ten target problems.

A basis is a named list from the original code, or a user file: one problem per line, infix
(`2*x + 1`) or Lample & Charton prefix tokens, `#` comments and blank lines skipped. Problems
are put in canonical form (SymPy's automatic simplification, then our tree), as mutants are.

Example:
    load_basis("polynomial_robustness")[1]  ->  2*x
"""

from __future__ import annotations

from pathlib import Path

from genprobe.errors import DataFormatError, GenprobeError, check_choice
from genprobe.tasks.integration.expression import Expr, from_sympy, to_sympy
from genprobe.tasks.integration.reading import read_expression
from genprobe.tasks.lines import some_rows

# the ten targets of the `target_problems` fitness and the `target` basis, in SymPy's printing
TARGETS = (
    "-x - 3 + sqrt(3)",
    "x + (sqrt(2)*sqrt(x)/4 + 6*x + 3/x)**2",
    "-x**2 + x + log(4)*tan(x)",
    "4*x**5",
    "x/(x*(2*x + (x**2 + x)/x) + x)",
    "sqrt(3*x + 3) - 2",
    "x**2*exp(-2*x)",
    "tan(exp(2))/(18*x)",
    "-3*x**3 + x + 10/x",
    "x/(log(cos(5)) + 1/(2*x**2))",
)

_TRIG_TAIL = (
    "2*cos(2*x) + 2*x",
    "2*sin(2*x) + 2*x",
    "2*cos(2*x) + 2*x + 1",
    "2*sin(2*x) + 2*x + 1",
    "2*sin(2*x)*cos(2*x)",
)

BASES: dict[str, tuple[str, ...]] = {
    "polynomial": ("1", "x", "x + 1", "x**2 + x + 1"),
    "x": ("x",),
    # the paper's X_poly and X_trig
    "polynomial_robustness": (
        "1", "2*x", "2/x", "2*x + 1", "2/x + 1", "2*x**2 + 2*x + 1", "2*x**2 + 2/x + 1",
        "2*x**3 + 2*x**2 + 1", "2*x**42 + 2*x**3 + 2*x**2 + 1",
    ),
    "trig_robustness": (
        "17*cos(83*x)", "34*sin(77*x)", "17*cos(83*x) + 1", "34*sin(77*x) + 1", *_TRIG_TAIL,
    ),
    "trig": ("2*cos(2*x)", "2*sin(2*x)", "2*cos(2*x) + 1", "2*sin(2*x) + 1", *_TRIG_TAIL),
    "target": TARGETS,
}  # fmt: skip


def canonical(expr: Expr) -> Expr:
    return from_sympy(to_sympy(expr))


def named_basis(name: str) -> list[Expr]:
    """A basis of the original code, by name.

    Raises:
        ConfigError: an unknown name (with the nearest names).
    """
    check_choice("--basis", name, BASES)
    return [canonical(read_expression(text, prose=False)) for text in BASES[name]]


def read_problem_file(path: str | Path) -> list[Expr]:
    """Problems of a user file (see the module docs).

    Raises:
        DataFormatError: the file cannot be read, holds no problem, or a line is not one.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise DataFormatError(path, None, f"cannot be read ({error})") from None
    problems = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            problems.append(canonical(read_expression(text, prose=False)))
        except GenprobeError as error:
            raise DataFormatError(path, number, f"not a problem: {error}") from None
    return some_rows(path, problems)
