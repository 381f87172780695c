"""A time budget checked between steps of a long search (SAGGA's, the failure search's).

A search's budget is its run's, over all the invocations that searched: `spent` is what the
earlier ones used (their search.json records it), so a rerun of a search stopped by its budget
searches no further, and one given more minutes searches the difference.

Example:
    budget = Budget(minutes=30, clock=time.process_time)
    budget.check()  # raises OutOfTime once 30 minutes of the clock have passed
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


class OutOfTime(Exception):
    """The time budget is spent."""


@dataclass
class Budget:
    """`minutes` of `clock` (None: no limit), `spent` seconds of them before now."""

    minutes: float | None
    clock: Callable[[], float] = time.monotonic
    spent: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.clock()

    def used(self) -> float:
        """Seconds of the budget used: before now and since."""
        return self.spent + self.clock() - self.started

    @property
    def spent_before(self) -> bool:
        """Whether earlier invocations used it all (this one may do nothing)."""
        return self.minutes is not None and self.spent >= 60 * self.minutes

    def check(self) -> None:
        """Raises OutOfTime once the budget is spent."""
        if self.minutes is not None and self.used() > 60 * self.minutes:
            raise OutOfTime
