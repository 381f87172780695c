"""Ctrl-C while work runs in child processes: the driver alone answers it; and a driver
killed outright takes its helper processes with it (`exit_with_parent`).

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
import time
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


def exit_with_parent(parent: int) -> None:
    """In a helper process (a manager, a pool worker): end it once the process that started it
    is gone. A driver killed with SIGKILL never shuts its helpers down, and a pool worker
    sending a large result blocks forever on a pipe nobody reads (every worker holds the
    result queue's read end too), so they would otherwise run on. It lives here, in a module
    that imports nothing heavy, because a manager process imports it to start (importing
    torch there added two to three seconds to the start of a run with worker processes)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
