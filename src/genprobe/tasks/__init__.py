"""Tasks: a generator of examples and an exact rule that judges outputs, one per file.

The contract every task meets is `task.Task` (with `DeterministicTask` for tasks with one right
output per input); what the probe studies perturb and slice a task by is its `probing.Probes`,
in a file of its own; `registry.TASKS` names both for every task; `conformance.check_task`
checks one; `verdict` holds the outcomes a task's judgement gives (`Outcome`, `Verdict`,
`TimeoutPolicy`). The integration task (`integration/`) meets it too
(`integration.task.IntegrationTask`, its tokens the prefix notation), besides the expressions,
generators, verifier and suites the brittleness and SAGGA studies use.
"""

from genprobe.tasks.probing import Probes, Tag
from genprobe.tasks.published import Published
from genprobe.tasks.registry import TASKS, load_task, task_probes
from genprobe.tasks.sampling import random_strings, split_stream
from genprobe.tasks.task import DeterministicTask, Examples, Split, Task

__all__ = [
    "TASKS",
    "DeterministicTask",
    "Examples",
    "Probes",
    "Published",
    "Split",
    "Tag",
    "Task",
    "load_task",
    "random_strings",
    "split_stream",
    "task_probes",
]
