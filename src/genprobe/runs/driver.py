"""A study's driver: the function that writes a run directory, `@writes_runs`.

The runs it opens stay locked until it returns or raises (`rundir.writing`), what it finds not
made it makes (`rundir.driving`), and once it has run, every stage's record of its shards is
readable: a damaged one it did not read on its way is written again from the stage's
manifests (`ShardStore.check_plans`), so that its rerun mends a run it has nothing left to
compute in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from genprobe.runs.rundir import as_driver
from genprobe.runs.shards import ShardStore

F = TypeVar("F", bound=Callable[..., Any])


def writes_runs(driver: F) -> F:
    """Mark `driver` as a study's driver (see the module)."""

    @functools.wraps(driver)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with as_driver() as opened:
            result = driver(*args, **kwargs)
            for run in opened:
                ShardStore(run).check_plans()
            return result

    return wrapper  # type: ignore[return-value]
