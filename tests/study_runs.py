"""Every kind of run, small, through the real command line (a seed sweep, one trained over
time, a brittleness evaluation, a SAGGA search, training the integration transformer, data
generation, a probe with a large search and a failure search of a sweep's seeds), with the
result tables each computes; the inputs they share; and the run directories today's code made
of them, committed (`tests/golden/`) so that a change of code is held to the numbers it gave
and to the runs it made (`tests/studies/test_golden_runs.py`).

`python tests/golden/pin.py` makes the inputs and the runs again: on the commit *before* a
change, on the machine that makes it (trained numbers depend on the CPU and its kernels)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from helpers import examples

GOLDEN = Path(__file__).parent / "golden" / "runs.tar.gz"


@dataclass(frozen=True)
class Study:
    argv: Callable[[dict], list[str]]  # the command (after `genprobe`), from the inputs
    under_way: str  # a glob under the run directory: once it matches, the run is mid-way
    results: Callable[[Path], object]  # what a finished run computed, to compare
    changed: tuple[str, str, str]  # (option, value, the run's value): another setting
    bad: tuple[str, str]  # (option, value) that the command refuses
    trained: bool = True  # whether its numbers are those of training (CPU-dependent)
    # the run directory of an --out (generation writes its data to --out, its run beside it)
    run_of: Callable[[Path], Path] = lambda out: out


def _predictions(run: Path) -> dict:
    """Every seed's output on every suite example, by suite, as judged outputs (a run made
    before the schema, or resumed since, read as `read_predictions` reads it); NaN as null."""
    from genprobe.studies.seed_sensitivity.results import read_predictions

    frame = read_predictions(run)
    frame = frame.astype(object).where(frame.notna(), None)
    return {suite: rows.to_dict("list") for suite, rows in frame.groupby("suite")}


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


def _sagga_archive(run: Path) -> dict:
    """Every novel failure, in the order found (a run made before archive.parquet, as its
    archive.jsonl reads)."""
    from genprobe.studies.search.sagga.results import read_archive

    return read_archive(run).to_dict("list")


def _trained(run: Path) -> tuple[dict, list]:
    """The trained weights (a digest of each tensor) and every validation, timing aside."""
    from genprobe.models.checkpoints import load_transformer

    weights = load_transformer(run / "model.pt")[0].state_dict()
    digests = {name: hashlib.sha256(w.numpy().tobytes()).hexdigest() for name, w in weights.items()}
    lines = (run / "metrics.jsonl").read_text().splitlines()
    untimed = [
        {k: v for k, v in json.loads(line).items() if k not in ("train_seconds", "elapsed")}
        for line in lines
    ]
    return digests, untimed


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
        under_way="shards/decode/*.json",
        results=lambda run: examples(run).to_dict("list"),
        changed=("--max-len", "30", "24"),
        bad=("--n", "0"),
        trained=False,
    ),
    "sagga": Study(
        argv=lambda f: [
            "integration", "sagga", "--model", f"ckpt:{f['model']}", "--basis",
            "polynomial_robustness", "--preset", "robustness", "--generations", "3", "--beam",
            "2", "--max-len", "24", "--generation-size", "24", "--seed-size", "6",
            "--workers", "2",
        ],
        under_way="shards/generation/*.json",
        results=lambda run: _sagga_archive(run),
        changed=("--seed", "7", "43"),
        bad=("--generation-size", "0"),
        trained=False,
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
        trained=False,
        run_of=lambda out: out.with_name(out.name + ".run"),
        # two pool workers, each shard's result larger than a pipe's buffer: a worker killed
        # mid-send must not outlive the driver
    ),
    "probe": Study(
        argv=lambda f: [
            "probe", "--model", f"run:{f['sweep']}", "--size", "40", "--k", "2",
            "--search-budget", "4",
        ],
        under_way="shards/decode/*.json",
        results=_results,
        changed=("--size", "30", "40"),
        bad=("--k", "0"),
        trained=False,
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
        trained=False,
    ),
}  # fmt: skip

# The inputs of the runs, by absolute path (a probe's and a search's config name their sweep
# so): in a directory of the temporary one that the pin makes anew and tests unpack once.
# A new pin of other inputs takes the next version.
INPUTS_VERSION = 1
INPUT_ROOT = Path(tempfile.gettempdir()) / f"genprobe-golden-inputs-{INPUTS_VERSION}"
INPUTS = {
    "model": INPUT_ROOT / "model.pt",
    "validation": INPUT_ROOT / "tiny.valid",
    "sweep": INPUT_ROOT / "sweep",
}


def out_of(kind: str) -> str:
    """Where a kind's run is, relative to the golden directory."""
    return f"runs/{kind.replace(' ', '_')}"


def unpack(into: Path) -> Path:
    """The committed runs, in a directory of their own under `into`; the inputs at
    INPUT_ROOT, unpacked there once (by whichever test process comes first)."""
    with tarfile.open(GOLDEN) as archive:
        archive.extractall(into, filter="data")
    golden = into / "golden"
    if not INPUT_ROOT.exists():
        with contextlib.suppress(OSError):  # another process moved its copy there first
            (golden / "inputs").rename(INPUT_ROOT)
    return golden


# kinds whose runs are too large to commit (integration training: 20 MB of weights and
# optimizer state): of them only what they computed is kept
RESULTS_ONLY = ("train",)


def canonical(value: object) -> object:
    """`value` as JSON reads it back (tuples as lists, NumPy scalars as numbers)."""
    return json.loads(json.dumps(value, sort_keys=True, default=_plain))


def _plain(value: object) -> object:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


def results_of(kind: str) -> str:
    return out_of(kind) + ".results.json"


def pinned_results(kind: str, golden: Path) -> object:
    """What the committed run of `kind` computed."""
    if kind in RESULTS_ONLY:
        return json.loads((golden / results_of(kind)).read_text())
    return STUDIES[kind].results(golden / out_of(kind))


def machine_key() -> dict:
    """What decides the float rounding of trained numbers here: the CPU, torch's kernel set,
    its math libraries and thread count."""
    import torch

    from genprobe.runs.provenance import machine

    facts = machine()
    return {
        "torch": torch.__version__,
        **{k: facts[k] for k in ("cpu", "torch_cpu_capability", "torch_threads", "mkl", "onednn")},
    }


def pinned_machine(golden: Path, kind: str) -> dict:
    """The machine that pinned the runs of `kind`: its own where they were pinned again alone
    (`pin.py KIND`), else the archive's."""
    own = golden / machine_of(kind)
    return json.loads((own if own.exists() else golden / "machine.json").read_text())


def machine_of(kind: str) -> str:
    return out_of(kind) + ".machine.json"


def assert_same_numbers(kind: str, computed: object, pinned: object, golden: Path) -> None:
    """What a run computed is what the pinned run did: exactly on the machine that pinned it;
    elsewhere, decoding to 1e-5 and training not at all."""
    if pinned_machine(golden, kind) == machine_key():
        assert canonical(computed) == canonical(pinned)
    elif not STUDIES[kind].trained:
        assert _close(canonical(computed), canonical(pinned)), f"{kind}: numbers moved"


def _close(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return a == b
