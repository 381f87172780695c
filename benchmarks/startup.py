"""How long the command line takes to answer: `genprobe --help` and `genprobe models`, each in a
fresh Python process, against a process that only starts Python (`python -c pass`), measured in
the same run, alternating, medians over repeats. The commands run as `python -m genprobe`, with
this checkout's `src` first on the path. Last line: `help_over_python = X.XX` (how many times
longer than a bare interpreter `genprobe --help` takes).

    python benchmarks/startup.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "genprobe --help": ["-m", "genprobe", "--help"],
    "genprobe models": ["-m", "genprobe", "models"],
}


def seconds(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    repeats = parser.parse_args().repeats
    env = {**os.environ, "PYTHONPATH": SRC}
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for args in COMMANDS.values():
        seconds(args, env)  # warm the file cache
    for _ in range(repeats):
        for name, args in COMMANDS.items():
            times[name].append(seconds(args, env))
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, value in median.items():
        print(f"{name:<16} median {value:.3f} s over {repeats} runs")
    print(f"models_over_python = {median['genprobe models'] / median['python -c pass']:.2f}")
    print(f"help_over_python = {median['genprobe --help'] / median['python -c pass']:.2f}")


if __name__ == "__main__":
    main()
