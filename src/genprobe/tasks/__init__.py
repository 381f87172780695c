"""Tasks: a generator of examples and an exact rule that judges outputs, one per file.

The contract every task meets is `task.Task` (with `DeterministicTask` for tasks with one right
output per input); `registry.TASKS` names them all; `conformance.check_task` checks one. The
integration task (`integration/`) is the brittleness study's and does not use this contract.
"""

from genprobe.tasks.published import Published
from genprobe.tasks.registry import TASKS, load_task
from genprobe.tasks.task import DeterministicTask, Examples, Split, Task, split_stream

__all__ = [
    "TASKS",
    "DeterministicTask",
    "Examples",
    "Published",
    "Split",
    "Task",
    "load_task",
    "split_stream",
]
