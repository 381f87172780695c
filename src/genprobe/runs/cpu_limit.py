"""A limit of CPU time on the code inside a `with` block, which machine load does not change."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def cpu_limit(
    seconds: float | None, error: type[BaseException], timer: str = "ITIMER_VIRTUAL"
) -> Iterator[None]:
    """Raise `error` in the block once this process has spent `seconds` of CPU time in it.

    `timer`: ITIMER_VIRTUAL counts user CPU time, ITIMER_PROF user and system time (what the
    deadline pool counts, so a limit inside one of its items takes the other). Python code only:
    a long C call is interrupted when it returns. No limit where `seconds` is None or the
    platform has no interval timers (Windows).
    """
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise error

    which = getattr(signal, timer)
    number = signal.SIGVTALRM if timer == "ITIMER_VIRTUAL" else signal.SIGPROF
    previous = signal.signal(number, interrupt)
    signal.setitimer(which, seconds)
    try:
        yield
    finally:
        signal.setitimer(which, 0)
        signal.signal(number, previous)
