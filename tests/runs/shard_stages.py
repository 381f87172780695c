"""Tiny stages for the spine's tests, importable by spawned worker processes."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.errors import ConfigError
from genprobe.runs.executor import Stage
from genprobe.runs.shards import Outputs, Shard, json_bytes, parquet_bytes


class Interrupted(Exception):
    pass


class Squares(Stage):
    """Each shard writes its number squared, as JSON and as Parquet; shards named in `fail_on`
    raise `Interrupted` instead (a crash in the middle of a stage)."""

    def __init__(self, fail_on: tuple[str, ...] = ()) -> None:
        self.fail_on = fail_on

    def run(self, context: Any, shard: Shard, scratch: Path) -> Outputs:
        if shard.key in self.fail_on:
            raise Interrupted(shard.key)
        n = shard.spec["n"]
        return {
            f"squares/{shard.key}.json": json_bytes({"n": n, "square": n * n}),
            f"squares/{shard.key}.parquet": parquet_bytes(pd.DataFrame({"n": [n], "sq": [n * n]})),
        }

    def runtime(self) -> dict[str, Any]:
        return {"device": "abacus"}


class HalfThenWhole(Stage):
    """Does half its work into scratch and crashes; run again, it finishes from that half."""

    def run(self, context: Any, shard: Shard, scratch: Path) -> Outputs:
        half = scratch / "half.txt"
        if not half.exists():
            scratch.mkdir(parents=True, exist_ok=True)
            half.write_text("first half")
            raise Interrupted(shard.key)
        return {f"whole/{shard.key}.txt": f"{half.read_text()} + second half".encode()}


class Writes(Stage):
    """Returns the files it was given, whatever their paths."""

    def __init__(self, outputs: Outputs) -> None:
        self.outputs = outputs

    def run(self, context: Any, shard: Shard, scratch: Path) -> Outputs:
        return dict(self.outputs)


class Unavailable(Squares):
    """A task whose device is missing on this machine: `runtime` refuses."""

    def runtime(self) -> dict[str, Any]:
        raise RuntimeError("no such device here")


class BrokenSetup(Squares):
    """A task whose per-worker setup fails (a model that cannot be loaded)."""

    def setup(self) -> Any:
        raise Interrupted("setup")


class RefusedSetup(Squares):
    """A task whose setup finds a user error on the worker (a checkpoint that is not there)."""

    def setup(self) -> Any:
        raise ConfigError("--model", "a checkpoint file that exists", "ckpt:gone.pt")


class WhoRuns(Stage):
    """Each shard tells which worker ran it (process id) and how many shards that worker's
    `setup` has served, after `seconds` of work."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds

    def setup(self) -> dict[str, int]:
        return {"pid": os.getpid(), "served": 0}

    def run(self, context: dict[str, int], shard: Shard, scratch: Path) -> Outputs:
        time.sleep(self.seconds)
        context["served"] += 1
        return {f"who/{shard.key}.json": json_bytes(context)}


class Nap(Stage):
    """Shard `quick` returns at once; any other marks `started` in its scratch and sleeps a
    minute: a stage with one worker busy and one idle, to interrupt."""

    def run(self, context: Any, shard: Shard, scratch: Path) -> Outputs:
        if shard.key != "quick":
            scratch.mkdir(parents=True, exist_ok=True)
            (scratch / "started").touch()
            time.sleep(60)
        return {f"naps/{shard.key}.txt": b"slept"}
