"""Make `tests/golden/runs.tar.gz` again: the inputs the study runs share and every run of
`tests/study_runs.py`, whole and killed mid-way, by today's code on this machine (of
integration training, whose run directory holds 20 MB of weights and optimizer state, only
what it computed).

    .venv/bin/python tests/golden/pin.py [KIND ...]

Run it on the commit before a change that must not move numbers, then make the change; the
tests hold it to these runs (`tests/studies/test_golden_runs.py`). With KINDs (`brittleness`,
`over time`, ...), only their runs are made again, by the code checked out, in the committed
archive: its inputs and the other studies' runs kept (a change that moves one study's numbers
on purpose), with the machine that made them (`runs/KIND.machine.json`). Trained numbers depend on
the CPU, so the runs record the machine that made them (`machine.json`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from helpers import save_random_transformer, write_validation  # noqa: E402
from study_runs import (  # noqa: E402
    GOLDEN,
    INPUT_ROOT,
    INPUTS,
    RESULTS_ONLY,
    STUDIES,
    canonical,
    machine_key,
    machine_of,
    out_of,
    results_of,
)

# one thread, as each pytest-xdist worker of `make test` on two cores; the code checked out
ENV = {
    **os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1",
    "PYTHONPATH": str(TESTS.parent / "src"),
}  # fmt: skip


def genprobe(*argv: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "genprobe", *argv], cwd=cwd, env=ENV, check=True)


def make_inputs() -> None:
    shutil.rmtree(INPUT_ROOT, ignore_errors=True)
    INPUT_ROOT.mkdir(parents=True)
    write_validation(INPUTS["validation"])
    save_random_transformer(INPUTS["model"])
    genprobe(
        "sweep", "--task", "addition", "--task-option", "format=reversed", "--task-option",
        "train_digits=2", "--seeds", "2", "--train-size", "200", "--validation-size", "20",
        "--suite-size", "12", "--max-epochs", "1", "--workers", "1", "--out", str(INPUTS["sweep"]),
        cwd=INPUT_ROOT,
    )  # fmt: skip


def killed(kind: str, root: Path) -> None:
    """The run of `kind` killed with SIGKILL once it is under way."""
    study, out = STUDIES[kind], out_of(kind) + ".killed"
    argv = [sys.executable, "-m", "genprobe", *study.argv(INPUTS), "--out", out]
    process = subprocess.Popen(argv, cwd=root, env=ENV, stdout=subprocess.DEVNULL)
    while process.poll() is None and not list(study.run_of(root / out).glob(study.under_way)):
        time.sleep(0.05)
    if process.poll() is not None:
        raise SystemExit(f"{kind}: the run ended before it could be killed")
    process.send_signal(signal.SIGKILL)
    process.wait()


def pin(kind: str, root: Path) -> None:
    """The runs of `kind` in `root`: finished, and killed mid-way."""
    study = STUDIES[kind]
    genprobe(*study.argv(INPUTS), "--out", out_of(kind), cwd=root)
    if kind in RESULTS_ONLY:
        run = root / out_of(kind)
        (root / results_of(kind)).write_text(json.dumps(canonical(study.results(run))))
        shutil.rmtree(run)
    else:
        killed(kind, root)


def main(kinds: list[str]) -> None:
    if unknown := [kind for kind in kinds if kind not in STUDIES]:
        raise SystemExit(f"no study {unknown[0]!r}: one of {', '.join(STUDIES)}")
    import torch

    torch.set_num_threads(1)  # as ENV gives every run
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "golden"
        if kinds:  # the committed archive, its inputs where the runs read them
            with tarfile.open(GOLDEN) as archive:
                archive.extractall(tmp, filter="data")
            trained = [kind for kind in kinds if STUDIES[kind].trained]
            if trained and json.loads((root / "machine.json").read_text()) != machine_key():
                raise SystemExit(
                    f"{trained[0]}: its numbers are trained, and this machine is not the one "
                    "that pinned the other runs (machine.json): pin them all again"
                )
            shutil.rmtree(INPUT_ROOT, ignore_errors=True)
            (root / "inputs").rename(INPUT_ROOT)
            for kind in kinds:  # its runs, and the machine that pinned them
                for path in root.glob(out_of(kind) + "*"):
                    shutil.rmtree(path) if path.is_dir() else path.unlink()
        else:
            root.mkdir()
            make_inputs()
        for kind in kinds or STUDIES:
            pin(kind, root)
        machine = json.dumps(machine_key(), indent=1) + "\n"
        for name in [machine_of(kind) for kind in kinds] or ["machine.json"]:
            (root / name).write_text(machine)
        partial = GOLDEN.with_suffix(".partial")
        with tarfile.open(partial, "w:gz") as archive:
            archive.add(root, arcname="golden")
            archive.add(INPUT_ROOT, arcname="golden/inputs")
        partial.replace(GOLDEN)
    print(f"wrote {GOLDEN} ({GOLDEN.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main(sys.argv[1:])
