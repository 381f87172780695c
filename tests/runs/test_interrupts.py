"""Ctrl-C while shards run in worker processes: the driver alone answers, at once, and no
worker prints a traceback; what was in flight is not recorded."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import genprobe
from genprobe.runs.shards import Shard, ShardStore

SHARDS = [Shard("nap", "quick"), Shard("nap", "long")]
DRIVER = """
import sys
from shard_stages import Nap
from genprobe.runs.executor import LocalExecutor, run_stage
from genprobe.runs.shards import Shard
shards = [Shard("nap", "quick"), Shard("nap", "long")]
try:
    run_stage(sys.argv[1], Nap(), shards, LocalExecutor(workers=2))
except KeyboardInterrupt:
    sys.exit("interrupted")
"""


def test_ctrl_c_ends_a_stage_in_worker_processes_at_once_without_a_traceback(tmp_path):
    run = tmp_path / "run"
    path = [str(Path(genprobe.__file__).parents[1]), str(Path(__file__).parent)]
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(run)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a command in a terminal
    )
    started = run / "scratch" / "nap" / "long" / "started"
    deadline = time.monotonic() + 120
    # one worker sleeps in the long shard; the other is idle, or still starting
    while not (started.exists() and ShardStore(run).done(SHARDS[0])):
        assert driver.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    os.killpg(driver.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    begun = time.monotonic()
    _, err = driver.communicate(timeout=50)  # far less than the long shard's minute
    assert time.monotonic() - begun < 20
    assert (driver.returncode, err) == (1, "interrupted\n")
    assert ShardStore(run).pending(SHARDS) == [SHARDS[1]]
