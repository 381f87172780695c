"""One writer per run directory: `open_run` locks it for the driver that opened it; a second
process on it is refused naming the first; the lock goes when the driver ends or its process
dies, however; a new run refused leaves nothing behind."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass

import pytest

from genprobe.errors import RunDirError
from genprobe.runs.config import Recorded
from genprobe.runs.driver import writes_runs
from genprobe.runs.rundir import LOCK_FILE, open_run, writing


@dataclass(frozen=True)
class Tiny(Recorded):
    lr: float = 0.1


# a process that opens the run as a driver does and holds it until `release` appears
HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from runs.test_run_lock import Tiny
    from genprobe.runs.driver import writes_runs
    from genprobe.runs.rundir import open_run

    @writes_runs
    def driver(out):
        open_run(out, "tiny", Tiny(0.3))
        Path(out, "opened").write_text("")
        while not Path(out, "release").exists():
            time.sleep(0.02)

    driver(sys.argv[1])
    """
)


@pytest.fixture
def holder(tmp_path):
    """Start a process holding `tmp_path / "run"`; yields (process, run)."""
    run = tmp_path / "run"
    tests = str(os.path.dirname(os.path.dirname(__file__)))
    code = HOLDER.format(tests=tests)
    process = subprocess.Popen([sys.executable, "-c", code, str(run)])
    deadline = time.monotonic() + 60
    while not (run / "opened").exists():
        assert process.poll() is None and time.monotonic() < deadline, "the holder did not start"
        time.sleep(0.02)
    yield process, run
    process.kill()
    process.wait()


def test_a_second_process_is_refused_naming_the_holder_until_it_ends(holder):
    process, run = holder
    with pytest.raises(RunDirError, match=rf"is in use: process {process.pid} on .* since "):
        open_run(run, "tiny", Tiny(0.3))
    with pytest.raises(RunDirError, match="is in use"):  # another config: refused the same way
        open_run(run, "tiny", Tiny(0.125))
    assert json.loads((run / LOCK_FILE).read_text())["pid"] == process.pid
    (run / "release").write_text("")
    process.wait(timeout=60)
    assert (run / LOCK_FILE).read_text() == ""  # released: nobody holds it
    assert open_run(run, "tiny", Tiny(0.3)) == run


def test_a_holder_killed_hard_releases_the_run(holder):
    process, run = holder
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    assert open_run(run, "tiny", Tiny(0.3)) == run  # its lock died with it


def test_the_command_line_refuses_a_run_in_use_in_one_line(holder, cli):
    process, run = holder
    (run / "config.json").unlink()  # whatever the run: the lock is checked first
    code, _, err = cli("sweep", "--task", "reverse_string", "--seeds", "1", "--out", str(run))
    assert code == 2 and err.count("\n") == 1 and f"in use: process {process.pid}" in err, err


def test_a_driver_holds_its_runs_until_it_returns(tmp_path):
    run = tmp_path / "run"
    seen = []

    @writes_runs
    def driver():
        open_run(run, "tiny", Tiny(0.3))
        seen.append(_elsewhere(run))

    driver()
    assert seen == [False] and _elsewhere(run)
    open_run(run, "tiny", Tiny(0.3))  # outside a driver: locked only while opened
    assert _elsewhere(run)


def _elsewhere(run) -> bool:
    """Whether another process can open the run now."""
    script = (
        f"import sys; sys.path.insert(0, {os.path.dirname(os.path.dirname(__file__))!r})\n"
        "from runs.test_run_lock import Tiny\nfrom genprobe.runs.rundir import open_run\n"
        f"open_run({str(run)!r}, 'tiny', Tiny(0.3))"
    )
    return subprocess.run([sys.executable, "-c", script], capture_output=True).returncode == 0


def test_a_command_holds_the_runs_its_driver_opened_until_it_ends(tmp_path):
    """A command runs a driver, then writes the run's report: no second process may take the
    run in between (it did, and wrote the report beside the first)."""
    run = tmp_path / "run"

    @writes_runs
    def driver():
        open_run(run, "tiny", Tiny(0.3))

    with writing():
        driver()
        held_after_the_driver = not _elsewhere(run)
    assert held_after_the_driver and _elsewhere(run)


def test_a_report_is_not_written_into_a_run_another_process_holds(holder):
    from genprobe.studies.seed_sensitivity.study import SEED_SENSITIVITY

    process, run = holder
    with pytest.raises(RunDirError, match=f"is in use: process {process.pid}"):
        SEED_SENSITIVITY.write_report(run)
    assert not (run / "report.md").exists()


def test_a_new_run_refused_leaves_no_directory(tmp_path):
    def refuses():
        raise RunDirError("the model does not answer")

    out = tmp_path / "a" / "b" / "run"
    with pytest.raises(RunDirError, match="does not answer"):
        open_run(out, "tiny", Tiny(0.3), starts=refuses)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "mine.txt").write_text("")
    with pytest.raises(RunDirError, match="not empty"):
        open_run(tmp_path / "kept", "tiny", Tiny(0.3))
    assert [p.name for p in (tmp_path / "kept").iterdir()] == ["mine.txt"]
