"""What every study promises, tested once over each kind of run (a seed sweep, one trained
over time, a brittleness evaluation, a SAGGA search, training the integration transformer, data
generation, a probe and a failure search of a sweep's seeds) through the real command line:

- killed with SIGKILL mid-run, it leaves no process behind, and the same command finishes with
  the results of a run that was never killed;
- its shards run only in the stages its declaration (`genprobe.studies.STUDIES`) names;
- the same --out with another setting is refused, naming the setting and both values, and
  changes nothing;
- bad input is one line on stderr and exit code 2, and makes no run directory.

The run that is killed is a process of its own; every other run calls the same entry point
(`genprobe.cli.main`) in this process, which spares each one the start of a Python with torch."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from helpers import examples

from genprobe import studies
from genprobe.runs.rundir import read_config
from genprobe.runs.shards import MANIFESTS

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Study:
    argv: Callable[[dict], list[str]]  # the command (after `genprobe`), from the fixtures
    under_way: str  # a glob under the run directory: once it matches, the run is mid-way
    results: Callable[[Path], object]  # what a finished run computed, to compare
    changed: tuple[str, str, str]  # (option, value, the run's value): another setting
    bad: tuple[str, str]  # (option, value) that the command refuses
    # the run directory of an --out (generation writes its data to --out, its run beside it)
    run_of: Callable[[Path], Path] = lambda out: out


def _predictions(run: Path) -> dict:
    """Every seed's output on every suite example."""
    paths = sorted((run / "predictions").glob("*.parquet"))
    assert paths
    return {p.name: pd.read_parquet(p).to_dict("list") for p in paths}


def _over_time(run: Path) -> tuple[dict, dict]:
    """Every member's curve and every seed's output on every suite example."""
    curves = sorted((run / "curves").glob("*.parquet"))
    assert curves
    return {p.name: pd.read_parquet(p).to_dict("list") for p in curves}, _predictions(run)


def _results(run: Path) -> dict:
    """Every member's answer on every suite input."""
    paths = sorted((run / "results").glob("*.parquet"))
    assert paths
    frames = {p.name: pd.read_parquet(p) for p in paths}
    return {name: frame.map(_listed).to_dict("list") for name, frame in frames.items()}


def _listed(value: object) -> object:
    return value.tolist() if hasattr(value, "tolist") else value


def _trained(run: Path) -> tuple[dict, list]:
    """The trained weights and every validation, timing aside."""
    from genprobe.models.checkpoints import load_transformer

    weights = load_transformer(run / "model.pt")[0].state_dict()
    lines = (run / "metrics.jsonl").read_text().splitlines()
    untimed = [
        {k: v for k, v in json.loads(line).items() if k not in ("train_seconds", "elapsed")}
        for line in lines
    ]
    return {name: w.tolist() for name, w in weights.items()}, untimed


STUDIES = {
    "sweep": Study(
        argv=lambda f: [
            "rewriting", "sweep", "--seeds", "2", "--train-size", "800", "--validation-size",
            "20", "--suite-size", "12", "--max-epochs", "2", "--workers", "2",
        ],
        under_way="scratch/train/*/state.pt",  # the trainer's first resume point
        results=_predictions,
        changed=("--max-epochs", "3", "2"),
        bad=("--seeds", "0"),
    ),
    "over time": Study(
        argv=lambda f: [
            "sweep", "--task", "binary_operation", "--task-option", "p=23", "--arch", "mlp",
            "--model-option", "hidden=32", "--steps", "600", "--full-batch", "--optimizer",
            "adamw", "--lr", "0.01", "--weight-decay", "1", "--seeds", "2",
            "--seeds-per-shard", "1", "--workers", "1", "--no-report",
        ],
        under_way="training/seeds=1-1.json",  # the first seed done, the second training
        results=_over_time,
        changed=("--steps", "500", "600"),
        bad=("--eval-every", "601"),
    ),
    "brittleness": Study(
        argv=lambda f: [
            "integration", "brittleness", "--model", f"ckpt:{f['model']}", "--validation",
            str(f["validation"]), "--preset", "quick", "--n", "1", "--suites", "in-distribution",
            "robustness-simple", "--beam", "4", "--k", "1", "4", "--max-len", "24",
            "--search-budget", "6", "--workers", "1",
        ],
        under_way="shards/solve/*.json",
        results=lambda run: examples(run).to_dict("list"),
        changed=("--max-len", "30", "24"),
        bad=("--n", "0"),
    ),
    "sagga": Study(
        argv=lambda f: [
            "integration", "sagga", "--model", f"ckpt:{f['model']}", "--basis",
            "polynomial_robustness", "--preset", "robustness", "--generations", "3", "--beam",
            "2", "--max-len", "24", "--generation-size", "24", "--seed-size", "6",
            "--workers", "2",
        ],
        under_way="shards/generation/*.json",
        results=lambda run: (run / "archive.jsonl").read_text(),
        changed=("--seed", "7", "43"),
        bad=("--generation-size", "0"),
    ),
    "train": Study(
        argv=lambda f: [
            "integration", "train", "--data", str(f["validation"]), "--epochs", "3",
            "--epoch-size", "16", "--batch-size", "4", "--valid-size", "2", "--warmup", "2",
            "--max-len", "40", "--device", "cpu",
        ],
        under_way="state.pt",  # the first epoch saved
        results=_trained,
        changed=("--epochs", "4", "3"),
        bad=("--epochs", "0"),
    ),
    "generate": Study(
        argv=lambda f: [
            "integration", "generate", "--method", "bwd", "--n", "1536", "--max-ops", "6",
            "--shard-size", "512", "--seed", "5", "--workers", "2",
            "--engine", "fast",  # the run's spine under test, at 50x the lc engine's speed
        ],
        under_way="shards/attempts/*.json",
        results=lambda out: out.read_text(),
        changed=("--max-ops", "7", "6"),
        bad=("--shard-size", "0"),
        run_of=lambda out: out.with_name(out.name + ".run"),
        # two pool workers, each shard's result larger than a pipe's buffer: a worker killed
        # mid-send must not outlive the driver
    ),
    "probe": Study(
        argv=lambda f: ["probe", "--model", f"run:{f['sweep']}", "--size", "40", "--k", "2"],
        under_way="shards/decode/*.json",
        results=_results,
        changed=("--size", "30", "40"),
        bad=("--k", "0"),
    ),
    "search": Study(
        argv=lambda f: [
            "search", "--model", f"run:{f['sweep']}", "--generations", "6", "--population", "8",
            "--base-size", "30",
        ],
        under_way="shards/generation/*.json",
        results=lambda run: pd.read_parquet(run / "archive.parquet").map(_listed).to_dict("list"),
        changed=("--seed", "7", "0"),
        bad=("--tau", "0"),
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def fixtures(tiny_model, validation, tiny_sweep, tmp_path_factory):
    from genprobe.studies.seed_sensitivity import run_sweep
    from genprobe.tasks import load_task

    task = load_task("addition", {"format": "reversed", "train_digits": 2})
    sweep = run_sweep(tiny_sweep(seeds=(1, 2), task=task), tmp_path_factory.mktemp("sweep") / "run")
    return {"model": tiny_model, "validation": validation, "sweep": sweep}


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
    kind, fixtures, cli, tmp_path
):
    study = STUDIES[kind]
    argv = study.argv(fixtures)
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    code, _, err = cli(*argv, "--out", str(whole))
    assert code == 0, err
    assert _stages(study.run_of(whole)) <= _declared_stages(study.run_of(whole))

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
    files = sorted(p for p in study.run_of(whole).rglob("*") if p.is_file())
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
        {path.name for path in (run / MANIFESTS).iterdir()} if (run / MANIFESTS).exists() else set()
    )


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
