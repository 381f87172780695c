"""A time budget checked between steps of a long search (SAGGA's, the failure search's).

One clock, as the deadline pool's (`runs.pool`): the budget is CPU time of this process
(`time.process_time`), so a busy machine slows a search down without making it stop sooner, with
a wall-clock backstop (`pool.default_backstop` of the budget: ten times it, at least a minute)
for a search whose work is not this process's CPU time (a Ray cluster's, a GPU's, or a worker
pool's while this process waits).

A search's budget is its run's, over all the invocations that searched: `spent` and
`spent_wall` are what the earlier ones used (their search.json records them), so a rerun of a
search stopped by its budget searches no further, and one given more minutes searches the
difference.

Example:
    budget = Budget(minutes=30)
    budget.check()  # raises OutOfTime once 30 CPU minutes (or 300 of wall clock) have passed
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from genprobe.runs.pool import default_backstop


class OutOfTime(Exception):
    """The time budget is spent."""


@dataclass
class Budget:
    """`minutes` of `clock` (None: no limit) and their backstop of `wall`; `spent` and
    `spent_wall` seconds of each before now."""

    minutes: float | None
    clock: Callable[[], float] = time.process_time
    wall: Callable[[], float] = time.monotonic
    spent: float = 0.0
    spent_wall: float = 0.0

    def __post_init__(self) -> None:
        self.started, self.started_wall = self.clock(), self.wall()

    def used(self) -> float:
        """Seconds of the budget used: before now and since."""
        return self.spent + self.clock() - self.started

    def used_wall(self) -> float:
        """Seconds of wall clock used: before now and since."""
        return self.spent_wall + self.wall() - self.started_wall

    @property
    def spent_before(self) -> bool:
        """Whether earlier invocations used it all, or its backstop (this one may do
        nothing)."""
        if self.minutes is None:
            return False
        return self.spent >= 60 * self.minutes or self.spent_wall >= self._backstop

    def check(self) -> None:
        """Raises OutOfTime once the budget, or its backstop, is spent."""
        if self.minutes is None:
            return
        if self.used() > 60 * self.minutes or self.used_wall() > self._backstop:
            raise OutOfTime

    @property
    def _backstop(self) -> float:
        return default_backstop(60 * (self.minutes or 0.0))
