"""The suites of a probe run, built before any model runs: the base inputs (a split of the
task), each family's perturbation of them, each relation's partners of them, and the task's own
shifted suites and the other splits asked for (`--splits`), and the user's files of inputs
(`--input`).

Families and relations perturb a pool of `POOL` × size inputs of the base split and keep the
first `size` they apply to (SCAN's `twice_is_and` applies to one command in 250); the base suite
is the pool's first `size`. A perturbed input keeps its pool row (`origin`), and the pool rows
it was made from that the base suite lacks are decoded as the suite `origins` (not reported as
a suite), so a report pairs every perturbed input with its original. An input the task does
not accept is counted, never decoded; so is an input of a user's file.

A task with many right outputs (integration) has no gold output to weigh a failed answer
against, but the generator's output for a generated input is a right one, a family with
`with_reference` moves it with the input (k*f: k*F), and a file of inputs may give one per
line (`"output"`, checked by the task's verifier): suites carry these as `reference`.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from genprobe.errors import DataFormatError, GenprobeError
from genprobe.runs.atomic import atomic_path, write_json
from genprobe.runs.provenance import config_hash
from genprobe.runs.rundir import read_config
from genprobe.studies.probe.config import ProbeConfig, input_name
from genprobe.tasks.files import ExampleArrays, read_examples
from genprobe.tasks.lines import json_lines, some_rows
from genprobe.tasks.probing import chosen
from genprobe.tasks.task import DeterministicTask, Examples, Task, trim

SUITES_FILE = "suites.json"  # each suite's kind, name, size and refused inputs
ARRAYS_FILE = "suites.npz"  # each suite's inputs, origins and references
BASE = "base"
ORIGINS = "origins"
KINDS = ("base", "family", "relation", "task", "input", "origin")
POOL = 20


@dataclass(frozen=True)
class Suite:
    kind: str  # one of KINDS
    name: str  # the family's, relation's or task suite's name, the input file's; "base"
    src: np.ndarray  # (n, L) input ids
    origin: np.ndarray  # (n,) the pool row each input is or was made from; -1 for the others
    invalid: int = 0  # perturbed (or a file's) inputs the task refused (not in src)
    # (n, W) a known right output of each input (ids, -1 after the end; a row of -1: none);
    # None for a task with one right output per input (`solve` gives it) or none known
    reference: np.ndarray | None = None

    @property
    def key(self) -> str:
        """Its name among the run's suites (shard key and file name)."""
        return self.name if self.kind in ("base", "origin") else f"{self.kind}-{self.name}"


def build_suites(config: ProbeConfig, task: Task) -> list[Suite]:
    """Every suite of the run, in report order.

    Raises:
        ConfigError: a family, relation or split the task does not have.
        DataFormatError: a file of inputs that cannot be read as the task's.
    """
    declared = [
        (kind, table, name)
        for kind, table, names, option in (
            ("family", task.families(), config.families, "--families"),
            ("relation", task.relations(), config.relations, "--relations"),
        )
        for name in chosen(table, None if names is None else list(names), option)
    ]
    # a split's first n inputs are the same for any larger n: without perturbations, no pool
    pool = _split(task, config.base(task), config, (POOL if declared else 1) * config.size)
    carry = not isinstance(task, DeterministicTask)  # references, where `solve` gives none
    size = min(config.size, len(pool))
    suites = [Suite(BASE, BASE, trim(pool.src[:size], 0), np.arange(size),
                    reference=_outputs(pool, np.arange(size), carry))]  # fmt: skip
    for kind, table, name in declared:
        rng = np.random.default_rng([config.seed, zlib.crc32(f"{kind}:{name}".encode())])
        move = table[name]
        if kind == "family" and carry and move.with_reference is not None:
            moved = move.with_reference(pool.src, pool.tgt, rng)
        else:
            moved = getattr(move, "perturb" if kind == "family" else "partner")(pool.src, rng)
        valid = task.valid_inputs(moved.src) if len(moved) else np.zeros(0, bool)
        kept = np.flatnonzero(valid)[:size]
        src = trim(moved.src[kept], 0)
        refused = int((~valid[: kept[-1] + 1]).sum()) if len(kept) else int((~valid).sum())
        reference = None if moved.tgt is None else trim(moved.tgt[kept], -1)
        suites.append(Suite(kind, name, src, moved.origin[kept], refused, reference))
    used = np.unique(np.concatenate([s.origin for s in suites[1:]] or [np.zeros(0, int)]))
    if len(extra := used[used >= size]):
        suites.append(Suite("origin", ORIGINS, trim(pool.src[extra], 0), extra,
                            reference=_outputs(pool, extra, carry)))  # fmt: skip
    for name in config.task_splits(task):
        drawn = _split(task, name, config, config.size)
        every = np.arange(len(drawn))
        suites.append(Suite("task", name, drawn.src, np.full(len(drawn), -1),
                            reference=_outputs(drawn, every, carry)))  # fmt: skip
    for path in config.inputs:
        with_outputs = carry and _every_line_gives_an_output(path)
        given = read_examples(path, task, outputs=with_outputs)
        valid = task.valid_inputs(given.src)
        kept = trim(given.src[valid], 0)
        reference = _right_outputs(path, task, given, valid) if with_outputs else None
        suites.append(Suite("input", input_name(path), kept, np.full(len(kept), -1),
                            int((~valid).sum()), reference))  # fmt: skip
    return suites


def write_suites(run: Path, suites: list[Suite]) -> None:
    """Keep the suites in the run (`suites.npz`, then `suites.json`, each written whole), so a
    resumed run decodes the suites it built without building them again."""
    arrays = {}
    for i, suite in enumerate(suites):
        arrays[f"{i}.src"], arrays[f"{i}.origin"] = suite.src, suite.origin
        if suite.reference is not None:
            arrays[f"{i}.reference"] = suite.reference
    with atomic_path(run / ARRAYS_FILE) as tmp, tmp.open("wb") as file:
        np.savez(file, **arrays)
    write_json(
        run / SUITES_FILE,
        [
            {"suite": s.key, "kind": s.kind, "name": s.name, "inputs": len(s.src),
             "invalid": s.invalid}
            for s in suites
        ],
    )  # fmt: skip


def saved_suites(run: Path, config: ProbeConfig) -> list[Suite] | None:
    """The suites a run of `config` kept in `run` (`write_suites`); None where there is no
    such run, it kept none (made before they were kept) or they cannot be read."""
    try:
        same = read_config(run).get("hash") == config_hash(config.identity())
        if not same or not (run / ARRAYS_FILE).exists():
            return None
        listed = json.loads((run / SUITES_FILE).read_text())
        with np.load(run / ARRAYS_FILE, allow_pickle=False) as arrays:
            return [
                Suite(row["kind"], row["name"], arrays[f"{i}.src"], arrays[f"{i}.origin"],
                      row["invalid"], arrays.get(f"{i}.reference"))
                for i, row in enumerate(listed)
            ]  # fmt: skip
    except (OSError, ValueError, KeyError, GenprobeError, zipfile.BadZipFile):
        return None


def _split(task: Task, split: str, config: ProbeConfig, n: int) -> Examples:
    spec = task.split_spec(split)
    return task.generate(split, min(n, spec.size) if spec.finite else n, config.data_seed)


def _outputs(drawn: Examples, rows: np.ndarray, carry: bool) -> np.ndarray | None:
    """The generated outputs of `rows` as references, where the suites carry them."""
    return trim(drawn.tgt[rows], -1) if carry else None


def _every_line_gives_an_output(path: str) -> bool:
    return all("output" in row for _, row in some_rows(path, json_lines(path, objects=True)))


def _right_outputs(path: str, task: Task, given: ExampleArrays, valid: np.ndarray) -> np.ndarray:
    """The outputs a file gives for its valid inputs, as their references.

    Raises:
        DataFormatError: a given output that the task's verifier does not judge right.
    """
    right = task.verify(given.src[valid], given.out[valid], given.length[valid])
    if not right.all():
        line = int(given.lines[valid][np.argmin(right)])
        raise DataFormatError(
            path, line, "its output is not a right output of its input (the task's verifier)"
        )
    return trim(given.out[valid], -1)
