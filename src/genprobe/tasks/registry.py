"""Every task by name: one explicit table of rows, each naming the task's class and its
`Probes` as "module:Class", imported only when used.

A user's own task is `py:module:Class` (the module found on the Python path or in the current
directory): a `genprobe.tasks.Task` subclass, checked against the contract when it is loaded;
its probes are the class `ClassProbes` of the same module, where there is one.

To add a task to genprobe: write it in one file under `tasks/` (its probes in another, which
imports the task), add its row here; the conformance test (`tests/tasks/test_conformance.py`)
then runs over it.

Example:
    task = load_task("reverse_string", {"test_lengths": "41,100"})
    task = load_task("py:my_task:Copy")
    probes = task_probes(task)
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from genprobe.errors import GenprobeError, TaskContractError, UnknownTaskError
from genprobe.options import field_types, typed_options
from genprobe.runs.config import Form
from genprobe.tasks.probing import Probes
from genprobe.tasks.task import Task
from genprobe.user_code import USER_PREFIX, names_user_code, user_object


@dataclass(frozen=True)
class Row:
    """Where a task's classes are, as "module:Class": the task, and its `Probes`."""

    task: str
    probes: str = "genprobe.tasks.probing:Probes"  # the defaults: nothing declared


LENGTH_PROBES = "genprobe.tasks.chomsky.probes:LengthProbes"  # the Chomsky tasks' (NNCH's)


TASKS: dict[str, Row] = {
    "rewriting": Row(
        "genprobe.tasks.rewriting.task:RewritingTask",
        "genprobe.tasks.rewriting.probes:RewritingProbes",
    ),
    "scan": Row("genprobe.tasks.scan:Scan", "genprobe.tasks.scan_probes:ScanProbes"),
    "addition": Row(  # Zhou et al. (2024)
        "genprobe.tasks.addition:Addition", "genprobe.tasks.addition_probes:AdditionProbes"
    ),
    "word_problems": Row(  # after GSM-Symbolic (2024)
        "genprobe.tasks.word_problems:WordProblems",
        "genprobe.tasks.word_problem_probes:WordProblemProbes",
    ),
    # Delétang et al. (2023), by Chomsky level, named as in their code
    "even_pairs": Row("genprobe.tasks.chomsky.regular.even_pairs:EvenPairs", LENGTH_PROBES),
    "modular_arithmetic": Row(
        "genprobe.tasks.chomsky.regular.modular_arithmetic:ModularArithmetic", LENGTH_PROBES
    ),
    "parity_check": Row("genprobe.tasks.chomsky.regular.parity_check:ParityCheck", LENGTH_PROBES),
    "cycle_navigation": Row(
        "genprobe.tasks.chomsky.regular.cycle_navigation:CycleNavigation", LENGTH_PROBES
    ),
    "stack_manipulation": Row(
        "genprobe.tasks.chomsky.dcf.stack_manipulation:StackManipulation", LENGTH_PROBES
    ),
    "reverse_string": Row("genprobe.tasks.chomsky.dcf.reverse_string:ReverseString", LENGTH_PROBES),
    "modular_arithmetic_brackets": Row(
        "genprobe.tasks.chomsky.dcf.modular_arithmetic_brackets:ModularArithmeticBrackets",
        LENGTH_PROBES,
    ),
    "solve_equation": Row("genprobe.tasks.chomsky.dcf.solve_equation:SolveEquation", LENGTH_PROBES),
    "duplicate_string": Row(
        "genprobe.tasks.chomsky.cs.duplicate_string:DuplicateString", LENGTH_PROBES
    ),
    "missing_duplicate_string": Row(
        "genprobe.tasks.chomsky.cs.missing_duplicate_string:MissingDuplicateString", LENGTH_PROBES
    ),
    "odds_first": Row("genprobe.tasks.chomsky.cs.odds_first:OddsFirst", LENGTH_PROBES),
    "binary_addition": Row(
        "genprobe.tasks.chomsky.cs.binary_addition:BinaryAddition", LENGTH_PROBES
    ),
    "binary_multiplication": Row(
        "genprobe.tasks.chomsky.cs.binary_multiplication:BinaryMultiplication", LENGTH_PROBES
    ),
    "compute_sqrt": Row("genprobe.tasks.chomsky.cs.compute_sqrt:ComputeSqrt", LENGTH_PROBES),
    "bucket_sort": Row("genprobe.tasks.chomsky.cs.bucket_sort:BucketSort", LENGTH_PROBES),
    "binary_operation": Row(  # Power et al. (2022)
        "genprobe.tasks.binary_operation:BinaryOperation",
        "genprobe.tasks.binary_operation_probes:BinaryOperationProbes",
    ),
    "sparse_parity": Row(  # Barak et al. (2022)
        "genprobe.tasks.sparse_parity:SparseParity",
        "genprobe.tasks.sparse_parity_probes:SparseParityProbes",
    ),
    "integration": Row(  # Lample & Charton (2019)
        "genprobe.tasks.integration.task:IntegrationTask",
        "genprobe.tasks.integration.probes:IntegrationProbes",
    ),
}


def task_class(name: str) -> type[Task]:
    """The class a task name stands for.

    Raises:
        UnknownTaskError: no such task (with the nearest names and the full list).
        TaskContractError: a `py:` name whose object is not a `Task` subclass.
    """
    if names_user_code(name):
        return _user_class(name)
    if name not in TASKS:
        near = difflib.get_close_matches(name, TASKS, n=3)
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        raise UnknownTaskError(
            f"unknown task {name!r}.{hint} Known: {', '.join(TASKS)}, or py:module:Class"
        )
    return _imported(TASKS[name].task)


def task_name(task: Task) -> str:
    """The name that `load_task` builds `task` from: its row here, else `py:module:Class`."""
    path = f"{type(task).__module__}:{type(task).__qualname__}"
    return next((name for name, row in TASKS.items() if row.task == path), f"{USER_PREFIX}:{path}")


def task_probes(task: Task) -> Probes:
    """What the probe studies perturb, pair and slice `task` by: the `Probes` its row names
    (a `py:` task's: `<Class>Probes` in its module, else the defaults), made for it.

    Raises:
        TaskContractError: a `py:` task's `<Class>Probes` that is not a `Probes` subclass.
    """
    name = task_name(task)
    if not names_user_code(name):
        return _imported(TASKS[name].probes)(task)
    found = f"{type(task).__name__}Probes"
    cls = getattr(sys.modules[type(task).__module__], found, Probes)
    if not (isinstance(cls, type) and issubclass(cls, Probes)):
        raise TaskContractError(
            f"task {name}: {found} must be a subclass of genprobe.tasks.Probes, got {cls!r}"
        )
    return cls(task)


def load_task(name: str, options: Mapping[str, Any] | None = None) -> Task:
    """The task `name` with `options` (values of the right types, or strings to convert).

    Raises:
        UnknownTaskError: no such task.
        ConfigError: an unknown option, or a value of the wrong type or out of range.
        TaskContractError: a `py:` task that does not keep the contract (see `check_contract`).
    """
    cls = task_class(name)
    values = typed_options(name, options or {}, field_types(cls), "task option")
    if not names_user_code(name):
        return cls(**values)
    from genprobe.tasks.conformance import check_contract

    if missing := sorted(getattr(cls, "__abstractmethods__", ())):
        raise TaskContractError(f"task {name}: does not define {', '.join(missing)}")
    try:
        task = cls(**values)
    except GenprobeError:
        raise
    except Exception as error:
        raise TaskContractError(f"task {name}: {cls.__name__}() raised {error!r}") from None
    check_contract(task, name)
    return task


def _imported(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _user_class(name: str) -> type[Task]:
    cls = user_object(name, "task", "py:module:Class")
    if not (isinstance(cls, type) and issubclass(cls, Task)):
        raise TaskContractError(
            f"task {name}: {name.partition(':')[2].replace(':', '.')} must be a subclass of "
            f"genprobe.tasks.Task, got {cls!r}"
        )
    return cls


# a task in a run's config, recorded as its name and options, built again by `load_task`
TaskRef = Annotated[
    Task,
    Form(
        lambda task: {"name": task_name(task), "options": task.options()},
        lambda task: load_task(task["name"], task["options"]),
    ),
]
