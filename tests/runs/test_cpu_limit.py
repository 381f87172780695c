"""`cpu_limit`: CPU time, not wall clock, and the signal handler it borrows given back."""

import signal
import time

import pytest

from genprobe.runs.cpu_limit import cpu_limit


class Spent(Exception):
    pass


@pytest.mark.parametrize("timer", ["ITIMER_VIRTUAL", "ITIMER_PROF"])
def test_busy_code_is_stopped_and_the_handler_restored(timer):
    number = signal.SIGVTALRM if timer == "ITIMER_VIRTUAL" else signal.SIGPROF
    before = signal.getsignal(number)
    start = time.process_time()
    with pytest.raises(Spent), cpu_limit(0.05, Spent, timer):
        while True:
            pass
    assert 0.04 < time.process_time() - start < 1.0
    assert signal.getsignal(number) is before


def test_sleeping_spends_no_cpu_time_and_none_is_no_limit():
    with cpu_limit(0.05, Spent):
        time.sleep(0.2)  # wall clock passes the limit, CPU time does not
    with cpu_limit(None, Spent):
        sum(range(10**6))
