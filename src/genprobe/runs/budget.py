"""A time budget checked between steps of a long search (SAGGA's, the failure search's).

Example:
    budget = Budget(minutes=30, clock=time.process_time)
    budget.check()  # raises OutOfTime once 30 minutes of the clock have passed
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


class OutOfTime(Exception):
    """The time budget of this invocation is spent."""


@dataclass
class Budget:
    """`minutes` of `clock` from now (None: no limit)."""

    minutes: float | None
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.started = self.clock()

    def check(self) -> None:
        """Raises OutOfTime once the budget is spent."""
        if self.minutes is not None and self.clock() - self.started > 60 * self.minutes:
            raise OutOfTime
