"""The suites of a probe run, built before any model runs: the base inputs (a split of the
task), each family's perturbation of them, each relation's partners of them, each composition's
composites of them (`--compositions`), and the task's own shifted suites and the other splits
asked for (`--splits`), and the user's files of inputs (`--input`).

Families and relations perturb a pool of `POOL` × size inputs of the base split and keep the
first `size` they apply to (SCAN's `twice_is_and` applies to one command in 250); the base suite
is the pool's first `size`. With `--draws D`, a family moves `size` pool inputs at a time, D
times each (one draw after another from its random stream), until `size` of them have a valid
perturbation (a SymPy family costs about 3 ms an input, so the pool is not moved whole), and
keeps the distinct perturbations of the first `size` originals it applies to: up to D of each
(fewer where draws coincide, as they always do for a family that draws nothing, `add_ln`
say). A perturbed input keeps its pool row (`origin`), and the pool rows it was made from
that the base suite lacks are decoded as the suite `origins` (not reported as a suite), so a
report pairs every perturbed input with its original. An input the task does not accept is
counted, never decoded; so is an input of a user's file.

A composition joins distinct tuples, drawn at random, of the first `size` pool inputs it takes
(one-sentence SCAN commands are one in 200, so the pool is drawn for them), and keeps the first
`size` composites the task accepts; each keeps the pool rows it joins (`parts`), decoded as
originals are, so a report knows which members solved every part.

A derived suite (`--derived`, the task's `Probes.derived`) is built after the base suite is
decoded, of the inputs every member solved (its first candidate right: Welleck et al.'s
robustness on solved validation problems, and sums of solved problems) of the base suite and
of the task's splits whose inputs have sets; each input keeps the base rows it was made from
(`origin` where it is one, `parts` where it is several; none for a split's input) and its
set. A task's split keeps what the task knows of its inputs (`Probes.split_columns`: the
integration task's brittleness suites' set, template and coefficient range), so a report
groups them as the brittleness study's tables do; `read_results` joins these to the rows.

A task with many right outputs (integration) has no gold output to weigh a failed answer
against, but the generator's output for a generated input is a right one, a family with
`with_reference` moves it with the input (k*f: k*F), and a file of inputs may give one per
line (`"output"`, checked by the task's verifier): suites carry these as `reference`.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from genprobe.errors import DataFormatError, GenprobeError
from genprobe.runs.config import RunConfig
from genprobe.runs.provenance import config_hash
from genprobe.runs.rundir import read_config
from genprobe.runs.shards import Shard, ShardStore, json_bytes
from genprobe.studies.probe.config import ProbeConfig, input_name, suite_key
from genprobe.studies.probe.study import SUITES
from genprobe.tasks.files import ExampleArrays, read_examples
from genprobe.tasks.lines import json_lines, some_rows
from genprobe.tasks.probing import (
    Composition,
    Family,
    Made,
    Perturbed,
    Probes,
    Relation,
    chosen,
    input_keys,
    padded,
)
from genprobe.tasks.registry import task_probes
from genprobe.tasks.row_edits import trim
from genprobe.tasks.task import Examples, Task

SUITES_FILE = "suites.json"  # each suite's kind, name, size and refused inputs
ARRAYS_FILE = "suites.npz"  # each suite's inputs, origins and references
BASE = "base"
ORIGINS = "origins"
KINDS = ("base", "family", "relation", "composition", "task", "input", "origin", "derived")
POOL = 20
COLUMN = ".column."  # a suite's column in ARRAYS_FILE: "{i}.column.{name}"


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
    parts: np.ndarray | None = None  # (n, arity) a composite's pool rows; None: no composition
    seen: np.ndarray | None = None  # (n,) the model trained on the input; None: not known
    # (n,) str by name: what reports group the inputs by, each result row carries them: a
    # derived suite's `set`, a task split's (`Probes.split_columns`); "" where not known
    columns: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Its name among the run's suites (shard key and file name)."""
        return suite_key(self.kind, self.name)


def build_suites(config: ProbeConfig, task: Task, trained: np.ndarray | None = None) -> list[Suite]:
    """Every suite of the run, in report order, each input marked seen where it is one of
    `trained` (the model's training inputs, where it knows them).

    Raises:
        ConfigError: a family, relation or split the task does not have.
        DataFormatError: a file of inputs that cannot be read as the task's.
    """
    probes = task_probes(task)
    declared = [
        (kind, table, name)
        for kind, table, names, option in (
            ("family", probes.families(), config.families, "--families"),
            ("relation", probes.relations(), config.relations, "--relations"),
        )
        for name in chosen(table, None if names is None else list(names), option)
    ]
    # a split's first n inputs are the same for any larger n: without perturbations, no pool,
    # nor for compositions that take `size` of the first `size` inputs (a sum takes any)
    pool = _split(task, config.base(task), config, (POOL if declared else 1) * config.size)
    if not declared and _too_few_parts(probes, config, pool):
        pool = _split(task, config.base(task), config, POOL * config.size)
    carry = task.solve(pool.src[:1]) is None  # references, where `solve` gives none
    size = min(config.size, len(pool))
    base_columns = probes.split_columns(config.base(task), size, config.data_seed)
    suites = [Suite(BASE, BASE, trim(pool.src[:size], 0), np.arange(size),
                    reference=_outputs(pool, np.arange(size), carry),
                    columns=base_columns)]  # fmt: skip
    for kind, table, name in declared:
        rng = np.random.default_rng([config.seed, zlib.crc32(f"{kind}:{name}".encode())])
        move = table[name]
        if kind == "family" and config.draws > 1:
            moved, valid = _drawn(probes, move, pool, rng, carry, config.draws, size)
            kept, refused = _of_first_originals(valid, moved.origin, size)
        else:
            moved = _moved(kind, move, pool, slice(None), rng, carry)
            kept, refused = _first(_valid(probes, moved), size)
        src, reference = _rows(moved, kept)
        suites.append(Suite(kind, name, src, moved.origin[kept], refused, reference))
    for name in config.compositions:
        suites.append(_composed(probes, name, pool, config, carry))
    pooled = [s.origin for s in suites[1:]] + [
        s.parts.ravel() for s in suites if s.parts is not None
    ]
    used = np.unique(np.concatenate(pooled or [np.zeros(0, int)]))
    used = used[used >= 0]
    if len(extra := used[used >= size]):
        suites.append(Suite("origin", ORIGINS, trim(pool.src[extra], 0), extra,
                            reference=_outputs(pool, extra, carry)))  # fmt: skip
    for name in config.task_splits(task):
        drawn = _split(task, name, config, config.size_of(suite_key("task", name)))
        every = np.arange(len(drawn))
        columns = probes.split_columns(name, len(drawn), config.data_seed)
        suites.append(Suite("task", name, drawn.src, np.full(len(drawn), -1),
                            reference=_outputs(drawn, every, carry), columns=columns))  # fmt: skip
    for path in config.inputs:
        with_outputs = carry and _every_line_gives_an_output(path)
        given = read_examples(path, task, outputs=with_outputs)
        valid = probes.valid_inputs(given.src)
        kept = trim(given.src[valid], 0)
        reference = _right_outputs(path, task, given, valid) if with_outputs else None
        suites.append(Suite("input", input_name(path), kept, np.full(len(kept), -1),
                            int((~valid).sum()), reference))  # fmt: skip
    return marked_seen(suites, trained)


def marked_seen(suites: list[Suite], trained: np.ndarray | None) -> list[Suite]:
    """`suites`, each input marked seen where it is one of `trained` (None: not known)."""
    if trained is None:
        return suites
    known = set(input_keys(trained))
    return [
        replace(s, seen=np.array([i in known for i in input_keys(s.src)], bool)) for s in suites
    ]


def derived_suites(
    config: ProbeConfig, task: Task, solved: Sequence[tuple[Suite, np.ndarray]]
) -> list[Suite]:
    """The derived suites `config` asks for (see the module's description), made of the
    inputs each `(suite, solved)` pair marks (the base suite first, then the task's splits
    whose inputs have sets), in the order asked for. An input made of base inputs has the
    first as its origin (several: its parts); one made of a split's has none."""
    probes = task_probes(task)
    base = solved[0][0]
    rows = [np.flatnonzero(marked) for _, marked in solved]
    src = padded([row for suite, r in zip(solved, rows, strict=True) for row in
                  trim(suite[0].src[r], 0)])  # fmt: skip
    sets = np.concatenate(
        [suite.columns.get("set", np.full(len(suite.src), ""))[r] for (suite, _), r in
         zip(solved, rows, strict=True)]
    ).astype(str)  # fmt: skip
    known = [task.solve(trim(s.src[r], 0)) if s.reference is None else s.reference[r]
             for (s, _), r in zip(solved, rows, strict=True)]  # fmt: skip
    tgt = None  # a right output of each, where every part knows them
    if len(src) and all(part is not None for part in known):
        tgt = padded([row[row >= 0] for part in known for row in part], -1)
    # the base rows the solved inputs are: a split's have none
    origin = np.concatenate(
        [base.origin[rows[0]], *(np.full(len(r), -1) for r in rows[1:])]
    ).astype(np.int64)
    suites = []
    for name in config.derived:
        if len(src):
            size = config.size_of(suite_key("derived", name))
            made = probes.derived()[name].build(src, tgt, sets, size, config.seed)
        else:
            made = Made(src, np.zeros((0, 1), np.int64), np.zeros(0, str))
        valid = probes.valid_inputs(made.src) if len(made) else np.zeros(0, bool)
        kept = np.flatnonzero(valid)
        # the base rows each input was made from: its origin where one, its parts where more
        made_from = origin[np.maximum(made.sources, 0)]
        made_from = np.where(made.sources >= 0, made_from, -1)[kept]
        single = made.sources.shape[1] == 1
        reference = None
        if base.reference is not None and made.tgt is not None:
            reference = trim(made.tgt[kept], -1)
        suites.append(
            Suite("derived", name, trim(made.src[kept], 0),
                  made_from[:, 0] if single else np.full(len(kept), -1), int((~valid).sum()),
                  reference, None if single else made_from,
                  columns={"set": made.sets[kept]})
        )  # fmt: skip
    return suites


def _too_few_parts(probes: Probes, config: ProbeConfig, pool: Examples) -> bool:
    compositions = probes.compositions()
    return any(
        compositions[name].takes(pool.src).sum() < config.size for name in config.compositions
    )


def _composed(probes: Probes, name: str, pool: Examples, config: ProbeConfig, carry: bool) -> Suite:
    """A composition's suite (see the module's description)."""
    composition = probes.compositions()[name]
    rng = np.random.default_rng([config.seed, zlib.crc32(f"composition:{name}".encode())])
    usable = np.flatnonzero(composition.takes(pool.src))[: config.size]
    drawn = rng.integers(max(len(usable), 1), size=(POOL * config.size, composition.arity))
    _, first = np.unique(drawn, axis=0, return_index=True)
    tuples = usable[drawn[np.sort(first)]] if len(usable) else drawn[:0]  # in the order drawn
    pieces, valid = [], []
    for start in range(0, len(tuples), config.size):  # a chunk at a time: a join may be slow
        piece = _joined(composition, pool, tuples[start : start + config.size], carry)
        pieces.append(replace(piece, origin=piece.origin + start))
        valid.append(_valid(probes, piece))
        if sum(v.sum() for v in valid) >= config.size:
            break
    joined = _concatenated(pieces)
    kept, refused = _first(np.concatenate(valid or [np.zeros(0, bool)]), config.size)
    src, reference = _rows(joined, kept)
    none = np.full(len(kept), -1)
    return Suite("composition", name, src, none, refused, reference, tuples[joined.origin[kept]])


def _joined(composition: Composition, pool: Examples, tuples: np.ndarray, carry: bool) -> Perturbed:
    """The composites of `tuples` (rows of pool inputs), with references where the suites
    carry them and the composition makes them."""
    parts = [pool.src[tuples[:, j]] for j in range(composition.arity)]
    if carry and composition.with_reference is not None:
        outputs = [pool.tgt[tuples[:, j]] for j in range(composition.arity)]
        return composition.with_reference(parts, outputs)
    return composition.join(parts)


def _concatenated(pieces: list[Perturbed]) -> Perturbed:
    src = padded([row[row > 0] for piece in pieces for row in piece.src])
    origin = np.concatenate([piece.origin for piece in pieces] or [np.zeros(0, np.int64)])
    if not pieces or pieces[0].tgt is None:
        return Perturbed(src, origin)
    return Perturbed(src, origin, padded([row[row >= 0] for p in pieces for row in p.tgt], -1))


def _moved(
    kind: str,
    move: Family | Relation,
    pool: Examples,
    rows: slice,
    rng: np.random.Generator,
    carry: bool,
) -> Perturbed:
    """A family's perturbations or a relation's partners of the pool's `rows` (origins counted
    from the first of them), with the references a family moves where the suites carry them."""
    if kind == "family" and carry and move.with_reference is not None:
        return move.with_reference(pool.src[rows], pool.tgt[rows], rng)
    return getattr(move, "perturb" if kind == "family" else "partner")(pool.src[rows], rng)


def _drawn(
    probes: Probes,
    family: Family,
    pool: Examples,
    rng: np.random.Generator,
    carry: bool,
    draws: int,
    size: int,
) -> tuple[Perturbed, np.ndarray]:
    """`draws` perturbations of each pool input, `size` inputs at a time, until `size` of them
    have a valid one (a family that applies to few inputs goes on through the pool): the
    distinct ones in the order of their originals, and which are valid."""
    chunks, valid, found = [], [], 0
    for start in range(0, len(pool.src), size):
        rows = slice(start, start + size)
        pieces = [_moved("family", family, pool, rows, rng, carry) for _ in range(draws)]
        shifted = [replace(piece, origin=piece.origin + start) for piece in pieces]
        chunks.append(_distinct(_concatenated(shifted)))
        valid.append(_valid(probes, chunks[-1]))
        found += len(np.unique(chunks[-1].origin[valid[-1]]))
        if found >= size:
            break
    return _concatenated(chunks), np.concatenate(valid)


def _distinct(moved: Perturbed) -> Perturbed:
    """`moved` in the order of the inputs they were made from (then as given), each perturbed
    input kept once per original."""
    order = np.argsort(moved.origin, kind="stable")
    keys = [
        f"{origin}:{key}"
        for origin, key in zip(moved.origin[order], input_keys(moved.src[order]), strict=True)
    ]
    _, first = np.unique(keys, return_index=True)
    rows = order[np.sort(first)]
    tgt = None if moved.tgt is None else moved.tgt[rows]
    return Perturbed(moved.src[rows], moved.origin[rows], tgt)


def _valid(probes: Probes, moved: Perturbed) -> np.ndarray:
    return probes.valid_inputs(moved.src) if len(moved) else np.zeros(0, bool)


def _first(valid: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """The first `size` valid rows, and how many rows were refused before the last of them
    (all refused, where fewer are valid)."""
    kept = np.flatnonzero(valid)[:size]
    return kept, int((~valid[: kept[-1] + 1]).sum()) if len(kept) else int((~valid).sum())


def _of_first_originals(valid: np.ndarray, origin: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """`_first` for rows in the order of their originals, several per original: every valid
    row of the first `size` originals that have one, and how many rows of originals up to the
    last of those were refused."""
    firsts = np.unique(origin[valid])[:size]
    if not len(firsts):
        return np.zeros(0, np.int64), int((~valid).sum())
    kept = np.flatnonzero(valid & np.isin(origin, firsts))
    return kept, int((~valid & (origin <= firsts[-1])).sum())


def _rows(moved: Perturbed, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    reference = None if moved.tgt is None else trim(moved.tgt[kept], -1)
    return trim(moved.src[kept], 0), reference


def write_suites(run: Path, suites: list[Suite]) -> None:
    """Keep the suites in the run (`suites.npz` and `suites.json`, the driver's shard of stage
    `suites`), so a resumed run decodes the suites it built without building them again, and
    every reader of them checks them first."""
    arrays = {}
    for i, suite in enumerate(suites):
        arrays[f"{i}.src"], arrays[f"{i}.origin"] = suite.src, suite.origin
        if suite.reference is not None:
            arrays[f"{i}.reference"] = suite.reference
        if suite.parts is not None:
            arrays[f"{i}.parts"] = suite.parts
        if suite.seen is not None:
            arrays[f"{i}.seen"] = suite.seen
        for name, values in suite.columns.items():
            arrays[f"{i}{COLUMN}{name}"] = values
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    listed = [
        {"suite": s.key, "kind": s.kind, "name": s.name, "inputs": len(s.src),
         "invalid": s.invalid, "seen": None if s.seen is None else int(s.seen.sum())}
        for s in suites
    ]  # fmt: skip
    files = {ARRAYS_FILE: buffer.getvalue(), SUITES_FILE: json_bytes(listed)}
    ShardStore(run).keep(Shard(SUITES, "all"), files)


def saved_suites(run: Path, config: RunConfig) -> list[Suite] | None:
    """The suites a run of `config` (the config its directory records: a probe's, a
    brittleness run's) kept in `run` (`write_suites`); None where there is no such run, it
    kept none (made before they were kept) or they cannot be read."""
    try:
        same = read_config(run).get("hash") == config_hash(config.identity())
        store = ShardStore(run)
        stored = store.file(SUITES, ARRAYS_FILE) if same else None
        listing = store.file(SUITES, SUITES_FILE) if stored is not None else None
        if listing is None:
            return None
        listed = json.loads(listing.read_text())
        with np.load(stored, allow_pickle=False) as arrays:
            return [
                Suite(row["kind"], row["name"], arrays[f"{i}.src"], arrays[f"{i}.origin"],
                      row["invalid"], arrays.get(f"{i}.reference"), arrays.get(f"{i}.parts"),
                      arrays.get(f"{i}.seen"), suite_columns(arrays, i))
                for i, row in enumerate(listed)
            ]  # fmt: skip
    except (OSError, ValueError, KeyError, GenprobeError, zipfile.BadZipFile):
        return None


def suite_columns(arrays: Mapping[str, np.ndarray], i: int) -> dict[str, np.ndarray]:
    """Suite i's `columns` as `write_suites` kept them in `ARRAYS_FILE` (a run made before
    kept a derived suite's sets alone, as `{i}.sets`)."""
    prefix = f"{i}{COLUMN}"
    columns = {key[len(prefix) :]: arrays[key] for key in arrays if key.startswith(prefix)}
    if f"{i}.sets" in arrays:
        columns["set"] = arrays[f"{i}.sets"]
    return columns


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
