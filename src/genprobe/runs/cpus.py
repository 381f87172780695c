"""How many CPUs this process may use: the cores the scheduler lets it run on (a cluster job's
allocation, `taskset`, a container's cpuset), not every core of the machine. A default of "one
worker per CPU" counts these, so a 4-core job on a 64-core node starts 4 workers, not 64."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs this process may run on (every core where the platform does not say)."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):  # Linux
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1
