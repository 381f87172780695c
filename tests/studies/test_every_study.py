"""What every study promises, tested once over each kind of run (a seed sweep, one trained
over time, a brittleness evaluation, a SAGGA search, training the integration transformer, data
generation, a probe and a failure search of a sweep's seeds) through the real command line:

- it computes what the run committed in `tests/golden/` did (`study_runs.assert_same_numbers`);
- killed with SIGKILL mid-run, it leaves no process behind, and the same command finishes with
  the results of a run that was never killed;
- its shards run only in the stages its declaration (`genprobe.studies.STUDIES`) names;
- the same --out with another setting is refused, naming the setting and both values, and
  changes nothing;
- bad input is one line on stderr and exit code 2, and makes no run directory.

The run that is killed is a process of its own; every other run calls the same entry point
(`genprobe.cli.main`) in this process, which spares each one the start of a Python with torch."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from study_runs import INPUTS, STUDIES, assert_same_numbers, pinned_results, unpack

from genprobe import studies
from genprobe.runs.rundir import LOCK_FILE, read_config
from genprobe.runs.shards import MANIFESTS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    return unpack(tmp_path_factory.mktemp("golden"))


@pytest.fixture(scope="module")
def fixtures(golden):
    """The inputs the committed runs were made of (a random checkpoint, a validation file, a
    sweep of two seeds)."""
    return INPUTS


def _genprobe(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "genprobe", *argv]


ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONUNBUFFERED": "1"}


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (from /proc; none where there is no /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):  # a process that ended while we looked
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(stat.parent.name))
    return found


def _still_running(pids: set[int], wait: float = 30.0) -> set[int]:
    """Those of `pids` still running (not ended, not a zombie) after up to `wait` seconds."""

    def running(pid: int) -> bool:
        with contextlib.suppress(OSError):
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        return False

    end = time.monotonic() + wait
    while (alive := {pid for pid in pids if running(pid)}) and time.monotonic() < end:
        time.sleep(0.2)
    return alive


@pytest.mark.parametrize("kind", STUDIES)
def test_a_run_killed_mid_way_finishes_with_the_results_of_one_never_killed(
    kind, fixtures, golden, cli, tmp_path
):
    study = STUDIES[kind]
    argv = study.argv(fixtures)
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    code, _, err = cli(*argv, "--out", str(whole))
    assert code == 0, err
    assert _stages(study.run_of(whole)) <= _declared_stages(study.run_of(whole))
    assert _plans(study.run_of(whole)) == _stages(study.run_of(whole))  # each stage finished
    assert_same_numbers(kind, study.results(whole), pinned_results(kind, golden), golden)

    process = subprocess.Popen(
        _genprobe([*argv, "--out", str(killed)]),
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # no deadline: the loop ends when the run is under way, or when it ends, however slow
    while process.poll() is None and not list(study.run_of(killed).glob(study.under_way)):
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before it could be killed"
    children = _children(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not _still_running(children), "a process of the killed run outlived it"

    code, _, err = cli(*argv, "--out", str(killed))
    assert code == 0, err
    assert study.results(killed) == study.results(whole)
    code, _, err = cli(*argv, "--out", str(whole))  # a finished run is replayed, not redone
    assert code == 0 and study.results(whole) == study.results(killed), err

    option, value, before = study.changed
    # its data (the lock file records who holds the run: the refused command did, a moment)
    files = sorted(p for p in study.run_of(whole).rglob("*") if p.is_file() and p.name != LOCK_FILE)
    stamps = [(p, p.stat().st_mtime_ns) for p in files]
    code, _, err = cli(*_replace(argv, option, value), "--out", str(whole))
    assert code == 2 and err.count("\n") == 1, err
    assert f"{option}: run has {before}, command has {value}" in err
    assert [(p, p.stat().st_mtime_ns) for p in files] == stamps  # nothing rewritten


@pytest.mark.parametrize("kind", STUDIES)
def test_bad_input_is_one_line_exit_2_and_no_run_directory(kind, fixtures, cli, tmp_path):
    study = STUDIES[kind]
    option, value = study.bad
    out = tmp_path / "run"
    code, _, err = cli(*_replace(study.argv(fixtures), option, value), "--out", str(out))
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("genprobe: error: ") and option in err
    assert not out.exists() and not study.run_of(out).exists()


def _stages(run: Path) -> set[str]:
    return (
        {path.name for path in (run / MANIFESTS).iterdir() if path.is_dir()}
        if (run / MANIFESTS).exists()
        else set()
    )


def _plans(run: Path) -> set[str]:
    """The stages that recorded, once finished, which shards they have."""
    return {path.stem for path in (run / MANIFESTS).glob("*.json")}


def _declared_stages(run: Path) -> set[str]:
    """The stages the run's study declares (every stage for a run that is no study's)."""
    kind = read_config(run)["kind"]
    declared = [set(s.stages) for s in studies.STUDIES if kind in s.kinds]
    return declared[0] if declared else _stages(run)


def _replace(argv: list[str], option: str, value: str) -> list[str]:
    """`argv` with `option` set to `value` (added where it is not given)."""
    if option not in argv:
        return [*argv, option, value]
    at = argv.index(option)
    return [*argv[: at + 1], value, *argv[at + 2 :]]
