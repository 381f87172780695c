"""Ctrl-C while work runs in child processes: the driver alone answers it.

A terminal sends Ctrl-C (SIGINT) to every process of the command. A child still starting
(importing torch) or waiting for work would print a `KeyboardInterrupt` traceback of its own.
So children start with SIGINT ignored (`children_ignore_ctrl_c`), and a worker whose work is
to end with the driver then leaves at once, silently (`leave_on_ctrl_c`): nothing it was
writing is taken as done, since the driver records a shard only from a whole result.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def children_ignore_ctrl_c() -> Iterator[None]:
    """Child processes started in this block begin with SIGINT ignored (a disposition they
    inherit). Only the main thread may change it; elsewhere the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


CTRL_C_EXIT = 128 + signal.SIGINT  # how a worker that left on Ctrl-C exits


def leave_on_ctrl_c() -> None:
    """In a worker process: on SIGINT, end at once, without a traceback."""
    signal.signal(signal.SIGINT, _leave)


def _leave(signum: int, frame: object) -> None:
    os._exit(CTRL_C_EXIT)
