"""Every task by name: one explicit table of "module:Class", each imported only when used.

A user's own task is `py:module:Class` (the module found on the Python path or in the current
directory): a `genprobe.tasks.Task` subclass, checked against the contract when it is loaded.

To add a task to genprobe: write it in one file under `tasks/`, add its row here; the
conformance test (`tests/tasks/test_conformance.py`) then runs over it.

Example:
    task = load_task("reverse_string", {"test_lengths": "41,100"})
    task = load_task("py:my_task:Copy")
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping
from typing import Any

from genprobe.errors import GenprobeError, TaskContractError, UnknownTaskError
from genprobe.options import field_types, typed_options
from genprobe.tasks.task import Task
from genprobe.user_code import user_object

TASKS: dict[str, str] = {
    "rewriting": "genprobe.tasks.rewriting.task:RewritingTask",
    "scan": "genprobe.tasks.scan:Scan",
    "addition": "genprobe.tasks.addition:Addition",  # Zhou et al. (2024)
    "word_problems": "genprobe.tasks.word_problems:WordProblems",  # after GSM-Symbolic (2024)
    # Delétang et al. (2023), by Chomsky level, named as in their code
    "even_pairs": "genprobe.tasks.chomsky.regular.even_pairs:EvenPairs",
    "modular_arithmetic": "genprobe.tasks.chomsky.regular.modular_arithmetic:ModularArithmetic",
    "parity_check": "genprobe.tasks.chomsky.regular.parity_check:ParityCheck",
    "cycle_navigation": "genprobe.tasks.chomsky.regular.cycle_navigation:CycleNavigation",
    "stack_manipulation": "genprobe.tasks.chomsky.dcf.stack_manipulation:StackManipulation",
    "reverse_string": "genprobe.tasks.chomsky.dcf.reverse_string:ReverseString",
    "modular_arithmetic_brackets": (
        "genprobe.tasks.chomsky.dcf.modular_arithmetic_brackets:ModularArithmeticBrackets"
    ),
    "solve_equation": "genprobe.tasks.chomsky.dcf.solve_equation:SolveEquation",
    "duplicate_string": "genprobe.tasks.chomsky.cs.duplicate_string:DuplicateString",
    "missing_duplicate_string": (
        "genprobe.tasks.chomsky.cs.missing_duplicate_string:MissingDuplicateString"
    ),
    "odds_first": "genprobe.tasks.chomsky.cs.odds_first:OddsFirst",
    "binary_addition": "genprobe.tasks.chomsky.cs.binary_addition:BinaryAddition",
    "binary_multiplication": "genprobe.tasks.chomsky.cs.binary_multiplication:BinaryMultiplication",
    "compute_sqrt": "genprobe.tasks.chomsky.cs.compute_sqrt:ComputeSqrt",
    "bucket_sort": "genprobe.tasks.chomsky.cs.bucket_sort:BucketSort",
    "binary_operation": "genprobe.tasks.binary_operation:BinaryOperation",  # Power et al. (2022)
    "sparse_parity": "genprobe.tasks.sparse_parity:SparseParity",  # Barak et al. (2022)
    "integration": "genprobe.tasks.integration.task:IntegrationTask",  # Lample & Charton (2019)
}
USER = "py"


def task_class(name: str) -> type[Task]:
    """The class a task name stands for.

    Raises:
        UnknownTaskError: no such task (with the nearest names and the full list).
        TaskContractError: a `py:` name whose object is not a `Task` subclass.
    """
    if name.startswith(f"{USER}:"):
        return _user_class(name)
    if name not in TASKS:
        near = difflib.get_close_matches(name, TASKS, n=3)
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        raise UnknownTaskError(
            f"unknown task {name!r}.{hint} Known: {', '.join(TASKS)}, or py:module:Class"
        )
    module, _, cls = TASKS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def task_name(task: Task) -> str:
    """The name that `load_task` builds `task` from: its row here, else `py:module:Class`."""
    path = f"{type(task).__module__}:{type(task).__qualname__}"
    return next((name for name, row in TASKS.items() if row == path), f"{USER}:{path}")


def load_task(name: str, options: Mapping[str, Any] | None = None) -> Task:
    """The task `name` with `options` (values of the right types, or strings to convert).

    Raises:
        UnknownTaskError: no such task.
        ConfigError: an unknown option, or a value of the wrong type or out of range.
        TaskContractError: a `py:` task that does not keep the contract (see `check_contract`).
    """
    cls = task_class(name)
    values = typed_options(name, options or {}, field_types(cls), "task option")
    if not name.startswith(f"{USER}:"):
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


def _user_class(name: str) -> type[Task]:
    cls = user_object(name, "task", "py:module:Class")
    if not (isinstance(cls, type) and issubclass(cls, Task)):
        raise TaskContractError(
            f"task {name}: {name.partition(':')[2].replace(':', '.')} must be a subclass of "
            f"genprobe.tasks.Task, got {cls!r}"
        )
    return cls
