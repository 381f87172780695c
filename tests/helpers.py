"""Module-level functions for pool tests (spawned workers import them by name), what the
study tests compare between runs, and damage done to a run's files (or edits recorded)."""

from __future__ import annotations

import json
import os
import time

import pandas as pd
import sympy as sp

from genprobe.runs.provenance import file_sha256
from genprobe.tasks.integration.expression import X


def damage(path, how: str) -> None:
    """Damage a file as disks and copies do: `truncated` (cut to half), `flipped` (one byte
    in the middle inverted) or `missing`."""
    data = bytearray(path.read_bytes())
    if how == "missing":
        path.unlink()
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(data)


def rerecord(run, path) -> None:
    """Record `path`'s present bytes in the manifest of the shard that wrote it, as if the
    shard had written them (an edit of a result file that the run does not take as damage)."""
    name = path.relative_to(run).as_posix()
    for manifest in (run / "shards").glob("*/*.json"):
        recorded = json.loads(manifest.read_text())
        if name in recorded["files"]:
            recorded["files"][name] = file_sha256(path)
            manifest.write_text(json.dumps(recorded))


def square_slowly(delay: float, n: int) -> int:
    if n == -1:
        raise ValueError("negative")
    if n == -2:
        os._exit(3)  # a worker that dies without a word
    if n >= 2000:
        while True:  # spends CPU time: meets the CPU budget
            pass
    if n >= 1000:
        time.sleep(60)  # spends no CPU time: meets the wall-clock backstop
    time.sleep(delay)
    return n * n


# Inputs on which SymPy is known to run away (research notes, Section E, and the linked issues).
HANG_CORPUS = {
    # sympy#19651: heurisch tries over a thousand polynomial coefficients
    "integrate-19651": lambda: sp.integrate(
        (sp.sin(X) ** 2 + 2 * sp.cos(X)) * sp.sqrt(3 * sp.sin(X) ** 2 + 1), X
    ),
    # sympy#21787: futrig expands the trig argument massively
    "simplify-21787": lambda: sp.simplify(40 * (X + 5) ** 3 * sp.cos(10 * (X + 5) ** 4)),
    # sympy#9032: time grows exponentially with the frequency
    "simplify-9032": lambda: sp.simplify(-128 * sp.sin(128 * X) / sp.sqrt(sp.cos(128 * X))),
}


def frozen_objects(shared: None, item: int) -> int:
    """A pool item: how many objects this worker's garbage collector leaves alone."""
    import gc

    return gc.get_freeze_count()


def run_hang_item(shared: None, name: str) -> str:
    return str(HANG_CORPUS[name]())


def simplify_text(shared: None, text: str) -> str:
    return str(sp.simplify(sp.sympify(text)))  # trusted test input


def examples(run) -> pd.DataFrame:
    """What must not depend on interruptions or backends: every candidate and verdict, timing
    aside."""
    frame = pd.read_parquet(run / "examples.parquet").sort_values(["suite", "row"])
    frame["candidates"] = [
        [(c["rank"], c["answer"], c["outcome"], c["logprob"]) for c in cands]
        for cands in frame["candidates"]
    ]
    return frame[["suite", "row", "first_correct_rank", "reference_logprob", "candidates"]]


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def swallow_once_then_spin(shared: None, seconds: float) -> str:
    """Spends CPU time in a bare `except:` that swallows the first interruption, as SymPy's
    code can, then spends as much again."""
    del shared
    try:  # noqa: SIM105 (written as SymPy's code is)
        _spin(seconds)
    except BaseException:
        pass
    _spin(seconds)
    return "finished"


def swallow_every_time(shared: None, seconds: float) -> str:
    """Spends CPU time in small steps, each in a bare `except:`: no interruption gets out."""
    del shared
    end = time.process_time() + seconds
    while time.process_time() < end:
        try:  # noqa: SIM105 (written as SymPy's code is)
            _spin(0.01)
        except BaseException:
            pass
    return "finished"
