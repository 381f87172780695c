"""Any Python function as a model: `py:package.module:function`.

The function is called once per problem as `function(problem, k)`, with the integrand as SymPy
infix text (`x**2*sin(x)`), and returns an answer string or a ranked list of answers, each a
string or an `(answer, score)` pair. Answers are read with the safe parsers (prefix tokens or
infix text, as everywhere), never evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from genprobe.errors import ConfigError, GenprobeError
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.printing import problem_text
from genprobe.tasks.integration.reading import read_expression
from genprobe.under_test.adapters.integration_model import Candidate, Model
from genprobe.user_code import USER_PREFIX, user_object

Answer = str | tuple[str, float]


class CallableModel(Model):
    def __init__(self, function: Callable[[str, int], str | Sequence[Answer]], name: str) -> None:
        self.function = function
        self.name = name

    def candidates(self, problems: Sequence[Expr], k: int) -> list[list[Candidate]]:
        results = []
        for problem in problems:
            answers = self.function(problem_text(problem), k)
            if isinstance(answers, str):
                answers = [answers]
            results.append([_candidate(answer, rank) for rank, answer in enumerate(answers[:k])])
        return results


def _candidate(answer: Any, rank: int) -> Candidate:
    """A string scores -rank (the order given); an (answer, score) pair keeps its score."""
    if isinstance(answer, tuple) and len(answer) == 2:
        text, score = answer
    else:
        text, score = answer, -float(rank)
    if not isinstance(text, str):
        raise ConfigError("a callable model's answer", "a string or (string, score)", answer)
    try:
        return Candidate(read_expression(text, canonical=True), float(score))
    except GenprobeError:
        return Candidate(text, float(score))


def from_spec(target: str) -> CallableModel:
    """`package.module:function` → the model (the module is imported: name only your own code)."""
    return CallableModel(user_function(target), name=f"{USER_PREFIX}:{target}")


def user_function(target: str) -> Callable[[str, int], Any]:
    """The function `package.module:function` names, imported from the Python path or the
    current directory.

    Raises:
        ConfigError: not of that form, no such module or attribute, or not callable.
    """
    spec = f"{USER_PREFIX}:{target}"
    function = user_object(spec, "--model", "py:package.module:function")
    if not callable(function):
        raise ConfigError("--model", "py:module:function naming a function", spec)
    return function
