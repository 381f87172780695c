"""Tasks: a generator of examples and an exact rule that judges outputs, one per file.

The contract every task meets is `task.Task` (with `DeterministicTask` for tasks with one right
output per input); `registry.TASKS` names them all; `conformance.check_task` checks one. The
integration task (`integration/`) meets it too (`integration.task.IntegrationTask`, its tokens
the prefix notation), besides the expressions, generators, verifier and suites the brittleness
and SAGGA studies use.
"""

from genprobe.tasks.published import Published
from genprobe.tasks.registry import TASKS, load_task
from genprobe.tasks.task import (
    DeterministicTask,
    Examples,
    Split,
    Task,
    random_strings,
    split_stream,
)

__all__ = [
    "TASKS",
    "DeterministicTask",
    "Examples",
    "Published",
    "Split",
    "Task",
    "load_task",
    "random_strings",
    "split_stream",
]
