"""Probing the seeds of a sweep: every member decoding as one stacked model vs the same members
probed one after another, measured two ways in one run.

decode   `genprobe.studies.probe.decode.decoded` (greedy, then beam search of width k, or
         with `--temperature` k samples, verification, scoring of the right outputs,
         features) on the run's suites as a probe builds them (`--size` inputs each): once
         for the stacked members, against once per member on a one-member model
         (`SequenceModel.subset`). The rows must be the same, the candidates too.
command  the whole `genprobe probe` command (start, load, build the suites, decode, write the
         results and the report), once with `--model run:RUN_DIR` against once per seed with
         `--model run:RUN_DIR@SEED`, each in a fresh directory: what probing each seed alone
         costs a researcher.

The sides alternate, repeat by repeat; one torch thread in the decode measure, and the command
runs with the same environment. Prints the median seconds of each side and
`S=N: stacked/one-by-one = X` for each measure; the target is ≥ 3× at 10 seeds on a CPU.

    python benchmarks/probe_stacking.py RUN_DIR [--size 100] [--k 3] [--temperature T]
        [--repeats 3] [--no-command]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.decode import decoded
from genprobe.studies.probe.run import resolved
from genprobe.studies.probe.suites import build_suites
from genprobe.under_test.registry import load_model
from genprobe.under_test.sequences import SequenceModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a finished sweep's run directory")
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--temperature", type=float, help="sample the k candidates [beam]")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-command", action="store_true", help="only the decode measure")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = load_model(f"run:{args.run}")
    task = model.task
    config = resolved(ProbeConfig(f"run:{args.run}", size=args.size))
    inputs = [suite.src for suite in build_suites(config, task) if len(suite.src)]
    alone = [model.subset([k]) for k in range(len(model.members))]

    def decode(members: SequenceModel, src: np.ndarray) -> pd.DataFrame:
        return decoded(members, task, src, args.k, temperature=args.temperature)

    def stacked() -> pd.DataFrame:
        return pd.concat([decode(model, src) for src in inputs])

    def one_by_one() -> pd.DataFrame:
        return pd.concat([decode(m, src) for src in inputs for m in alone])

    times: dict[str, list[float]] = {"stacked": [], "one-by-one": []}
    for _ in range(args.repeats):
        for name, side in (("stacked", stacked), ("one-by-one", one_by_one)):
            start = time.perf_counter()
            frame = side()
            times[name].append(time.perf_counter() - start)
            if name == "stacked":
                together = frame
            else:
                _check_same(together, frame)
    members, n = len(model.members), sum(len(src) for src in inputs)
    how = "beam" if args.temperature is None else f"samples at T = {args.temperature:g}"
    print(f"{members} members × {n} inputs in {len(inputs)} suites, k = {args.k} ({how})")
    _report("decode", times, members)
    if not args.no_command:
        _report("command", _commands(args, model.members), members)


def _commands(args: argparse.Namespace, members: tuple[str, ...]) -> dict[str, list[float]]:
    """Seconds of the whole `genprobe probe` command: all seeds at once, and seed by seed."""
    base = [sys.executable, "-m", "genprobe", "probe", "--size", str(args.size)]
    base += ["--k", str(args.k)]
    if args.temperature is not None:
        base += ["--temperature", str(args.temperature)]
    seeds = [label.removeprefix("seed=") for label in members]
    times: dict[str, list[float]] = {"stacked": [], "one-by-one": []}
    with tempfile.TemporaryDirectory() as scratch:
        for repeat in range(args.repeats):
            for name, specs in (("stacked", [""]), ("one-by-one", [f"@{s}" for s in seeds])):
                start = time.perf_counter()
                for spec in specs:
                    out = Path(scratch) / f"{repeat}-{name}{spec}"
                    command = [*base, "--model", f"run:{args.run}{spec}", "--out", str(out)]
                    subprocess.run(command, check=True, capture_output=True)
                times[name].append(time.perf_counter() - start)
    return times


def _report(measure: str, times: dict[str, list[float]], members: int) -> None:
    for name, seconds in times.items():
        runs = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"{measure}, {name}: median {statistics.median(seconds):.2f} s ({runs})")
    ratio = statistics.median(times["one-by-one"]) / statistics.median(times["stacked"])
    print(f"{measure}: S={members}: stacked/one-by-one = {ratio:.2f}x")


def _check_same(together: pd.DataFrame, apart: pd.DataFrame) -> None:
    key = ["member", "index", "input"]
    a = together.sort_values(key).reset_index(drop=True)
    b = apart.sort_values(key).reset_index(drop=True)
    assert list(a["output"]) == list(b["output"]), "the two sides decoded different outputs"
    if "candidates" in a:
        same = [list(x) == list(y) for x, y in zip(a["candidates"], b["candidates"], strict=True)]
        assert all(same), "the two sides found different candidates"
    assert np.allclose(a["gold_logprob"], b["gold_logprob"], rtol=1e-4, equal_nan=True)


if __name__ == "__main__":
    main()
