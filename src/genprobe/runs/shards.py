"""A run's work as shards: pure data that a function turns into result files.

Every study is shaped the same way:

    run   = a hashed config (rundir.py) + ordered lists of shards, one list per stage
    shard = (stage, key, spec): a pure function of its spec and the run's config gives files
    store = the driver writes a shard's files atomically, then its manifest (each file's
            sha256, the manifest sealed by its own checksum); a shard whose manifest exists,
            names the same spec and lists files that all exist with those digests is done, so
            rerunning a killed run skips it (and a shard whose spec changed, or whose file is
            missing or damaged, runs again)

A shard's function never writes into the run directory itself: it returns its files
(run-relative path -> bytes), so the same function can run in this process, in a worker
process or on another machine, and the driver's copy is the only one that counts. Work a shard
wants to resume inside itself (a long training) goes to its scratch directory, which is
disposable.

The manifest records where and how the shard ran (device, host, seconds): facts about the run,
not part of its identity, so a run started on a GPU can be finished on a CPU. It also records
the hash of the config it was made under: a shard of another config (written by another
command on the same directory) is never taken as this run's, though its spec is the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import platform
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from genprobe.errors import DamagedFileError, RunDirError, warn
from genprobe.runs.atomic import atomic_path, write_json
from genprobe.runs.provenance import file_sha256
from genprobe.runs.rundir import CONFIG_FILE, driving, read_config
from genprobe.runs.sealed import CHECKSUM, intact, seal

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9=_.,+-]{0,127}$")
MANIFESTS = "shards"
SCRATCH = "scratch"
# What the driver owns: a shard may not write these (the run's config, manifests, scratch).
RESERVED = (CONFIG_FILE, MANIFESTS, SCRATCH)

Outputs = dict[str, bytes]  # run-relative path -> file contents
T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    """One unit of work: `stage` names what is done, `key` which part of it.

    `spec` holds everything the shard's function needs beyond the run's config, as JSON data
    (a chunk of seeds, the rows of a suite), so a shard can be sent anywhere and rerun.
    """

    stage: str
    key: str
    spec: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in (self.stage, self.key):
            if not _NAME.match(name):
                raise ValueError(f"shard names are short file names. Got {name!r}.")

    @property
    def name(self) -> str:
        return f"{self.stage}/{self.key}"

    @property
    def digest(self) -> str:
        """sha256 of the spec's canonical JSON: a manifest names the spec it was made from."""
        text = json.dumps(self.spec, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()


class ShardStore:
    """The shard results of one run directory: which shards are done, and writing new ones.

    Every file is checked against the sha256 its manifest records before it counts: a shard
    whose file is missing or damaged is not done (a rerun computes it again, saying so in a
    `GenprobeWarning`), and a reader of its results gets a `DamagedFileError` naming the file.
    """

    def __init__(self, run: str | Path) -> None:
        self.run = Path(run)
        self._configs: tuple[str, ...] | None = None
        self._sealed = False  # the run seals its records (its config.json is sealed)

    def configs(self) -> tuple[str, ...]:
        """The hashes of the configs whose shards are this run's: its own, then those it grew
        from (a manifest records the one it was made under). Empty outside a run directory."""
        if self._configs is None:
            if (self.run / CONFIG_FILE).is_file():
                stored = read_config(self.run)
                self._configs = (stored["hash"], *stored.get("extended_from", []))
                self._sealed = CHECKSUM in stored
            else:
                self._configs = ()
        return self._configs

    def _manifest(self, stage: str, key: str) -> Path:
        return self.run / MANIFESTS / stage / f"{key}.json"

    def _recorded(self, manifest: Path) -> dict[str, Any] | None:
        """The manifest, None if there is none.

        Raises:
            DamagedFileError: it is not a readable manifest.
        """
        try:
            recorded = json.loads(manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):  # ValueError: not JSON, not UTF-8
            recorded = None
        shard = f"{manifest.parent.name}/{manifest.stem}"
        if not isinstance(recorded, dict) or not isinstance(recorded.get("files"), dict):
            raise DamagedFileError(manifest, "is not a readable shard manifest", _redo(shard))
        configs = self.configs()
        if not intact(recorded) or (self._sealed and CHECKSUM not in recorded):
            problem = "is damaged (its checksum differs from its contents)"
            raise DamagedFileError(manifest, problem, _redo(shard))
        made_under = recorded.get("config")
        if made_under is not None and configs and made_under not in configs:
            problem = f"was made under another config ({made_under}, not this run's {configs[0]})"
            raise DamagedFileError(manifest, problem, _redo(shard))
        return recorded

    def _check(self, shard: str, recorded: dict[str, Any], suffix: str = "") -> list[Path]:
        """The files that shard `shard` (stage/key) recorded (those whose path ends with
        `suffix`), each checked against its recorded sha256.

        Raises:
            DamagedFileError: one is missing or damaged.
        """
        files = []
        for path, digest in recorded["files"].items():
            if not path.endswith(suffix):
                continue
            file = self.run / path
            if not file.is_file():
                raise DamagedFileError(file, "is missing", _redo(shard))
            if file_sha256(file) != digest:
                manifest = f"{MANIFESTS}/{shard}.json"
                problem = f"is damaged (its sha256 differs from the one {manifest} records)"
                raise DamagedFileError(file, problem, _redo(shard))
            files.append(file)
        return files

    def _intact(self, stage: str, key: str, spec: str | None) -> dict[str, Any] | None:
        """The manifest of shard `stage/key` if it was made from `spec` (None: any) and its
        files are as recorded; else None, with a warning where a file is damaged or missing."""
        try:
            recorded = self._recorded(self._manifest(stage, key))
            if recorded is None or spec not in (None, recorded.get("spec")):
                return None
            self._check(f"{stage}/{key}", recorded)
        except DamagedFileError as damage:
            warn(f"{damage.path} {damage.problem}; computing shard {stage}/{key} again")
            return None
        return recorded

    def done(self, shard: Shard) -> bool:
        """The shard's manifest exists, was made from this spec, and its files are intact."""
        return self._intact(shard.stage, shard.key, shard.digest) is not None

    def finished(self, stage: str, key: str) -> bool:
        """A shard `stage/key` was recorded, from whatever spec, and its files are intact: for
        a shard whose spec holds results of earlier shards (which a rerun could change)."""
        return self._intact(stage, key, None) is not None

    def read(self, shard: Shard) -> Outputs:
        """The files a finished shard recorded, as its task returned them.

        Raises:
            RunDirError: the shard is not done.
            DamagedFileError: one of its files is missing or damaged.
        """
        recorded = self._recorded(self._manifest(shard.stage, shard.key))
        if recorded is None or recorded.get("spec") != shard.digest:
            raise RunDirError(f"shard {shard.name} of {self.run} is not done")
        self._check(shard.name, recorded)
        return {path: (self.run / path).read_bytes() for path in recorded["files"]}

    def pending(self, shards: Iterable[Shard]) -> list[Shard]:
        return [shard for shard in shards if not self.done(shard)]

    def record(self, shard: Shard, outputs: Outputs, facts: Mapping[str, Any]) -> None:
        """Write the shard's files (each atomically), then its manifest: only then is it done.

        Every path is checked before anything is written, so a refused shard leaves no file.

        Raises:
            RunDirError: an output path leaves the run directory or names what the driver owns
                (config.json, the manifests, the scratch directories).
        """
        targets = {path: self._target(shard, path) for path in outputs}
        # a shard made again is not done until its new manifest is written: killed between
        # its files, it is one not made yet (`file`), not one whose files are damaged
        self._manifest(shard.stage, shard.key).unlink(missing_ok=True)
        for path, data in outputs.items():
            _write_bytes(targets[path], data)
        write_json(
            self._manifest(shard.stage, shard.key),
            seal(
                {
                    "host": platform.node(),
                    **facts,
                    "shard": shard.name,
                    "spec": shard.digest,
                    **({"config": self.configs()[0]} if self.configs() else {}),
                    "files": {
                        path: hashlib.sha256(data).hexdigest() for path, data in outputs.items()
                    },
                }
            ),
        )

    def _target(self, shard: Shard, path: str) -> Path:
        root = self.run.resolve()
        target = (root / path).resolve()
        if root not in target.parents:
            raise RunDirError(f"shard {shard.name} writes outside its run: {path}")
        if target.relative_to(root).parts[0] in RESERVED:
            raise RunDirError(f"shard {shard.name} writes a file the driver owns: {path}")
        return target

    def manifests(self, stage: str) -> list[dict[str, Any]]:
        """Manifests of the recorded shards of `stage`, in key order.

        Raises:
            DamagedFileError: one is not readable.
        """
        return [manifest for _, manifest in self._manifests(stage)]

    def _manifests(self, stage: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """(shard name, manifest) of each recorded shard of `stage`, in key order.

        Raises:
            DamagedFileError: the manifest of a shard the stage finished with is missing (but
                to the driver writing the run, which computes again what it needs).
        """
        if not driving(self.run):
            self.check_planned(stage)
        else:  # a damaged record of the stage is written again as the driver reads it
            self.planned(stage)
        for path in sorted((self.run / MANIFESTS / stage).glob("*.json")):
            if (manifest := self._recorded(path)) is not None:
                yield f"{stage}/{path.stem}", manifest

    def check_planned(self, stage: str) -> None:
        """Every shard `stage` finished with has its manifest: what a reader needs before it
        reads the stage, and a driver that reads a stage it does not compute (a sweep's
        `evaluate` reads its members) before it counts a shard without one as not made.

        Raises:
            DamagedFileError: the first manifest missing, or the stage's record is damaged.
        """
        for key in self.planned(stage):
            if not (manifest := self._manifest(stage, key)).is_file():
                raise DamagedFileError(manifest, "is missing", _redo(f"{stage}/{key}"))

    def check_plans(self) -> None:
        """Every stage's record of its shards is readable and intact; to a driver, one that
        is not is written again (`planned`).

        Raises:
            DamagedFileError: the first that is not (but to a driver).
        """
        for path in sorted((self.run / MANIFESTS).glob("*.json")):
            self.planned(path.stem)

    def _plan(self, stage: str) -> Path:
        return self.run / MANIFESTS / f"{stage}.json"

    def check_records(self) -> None:
        """Every manifest and stage record of the run is readable and intact.

        Raises:
            DamagedFileError: the first that is not.
        """
        self.check_plans()
        for path in sorted((self.run / MANIFESTS).rglob("*.json")):
            if path.parent != self.run / MANIFESTS:
                self._recorded(path)

    def planned(self, stage: str) -> list[str]:
        """The keys of the shards `stage` had once it last finished: each must have its
        manifest, so that one deleted is named rather than its results silently left out
        (empty for a stage not finished yet, or run before stages recorded them).

        Raises:
            DamagedFileError: the record is not readable, or not what was written.
        """
        path = self._plan(stage)
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError):
            recorded = None
        if not isinstance(recorded, dict) or not isinstance(recorded.get("keys"), list):
            problem = "is not a readable list of shards"
        elif not intact(recorded):
            problem = "is damaged (its checksum differs from its contents)"
        else:
            return recorded["keys"]
        if not driving(self.run):
            raise DamagedFileError(path, problem, _RERUN)
        # the driver writes it again from the manifests there are (one deleted as well is lost
        # to the record, not to the stage, which makes again what it lacks)
        keys = sorted(manifest.stem for manifest in (self.run / MANIFESTS / stage).glob("*.json"))
        write_json(path, seal({"stage": stage, "keys": keys}))
        warn(f"{path} {problem}: written again from stage {stage}'s manifests ({len(keys)})")
        return keys

    def finish(self, stage: str, shards: Iterable[Shard]) -> None:
        """Record that `stage` has `shards`, once every one of them is done, with those it had
        before that are still recorded (a run that grows keeps them; one whose manifest is
        gone the driver did not ask for again)."""
        before = self.planned(stage)
        kept = [key for key in before if self._manifest(stage, key).is_file()]
        keys = sorted({*kept, *(shard.key for shard in shards)})
        if keys != before:
            write_json(self._plan(stage), seal({"stage": stage, "keys": keys}))

    def outputs(self, stage: str, suffix: str = "") -> list[Path]:
        """Every file recorded by the shards of `stage` (those whose path ends with `suffix`),
        in key order, each checked against its recorded sha256: what a reader of results uses,
        so a file no manifest lists is never counted, and a damaged one never read.

        Raises:
            DamagedFileError: a manifest or a file is missing or damaged.
        """
        return [
            file
            for shard, manifest in self._manifests(stage)
            for file in self._check(shard, manifest, suffix)
        ]

    def keep(self, shard: Shard, outputs: Outputs) -> None:
        """Record files the driver makes itself (data it writes before the shards, an archive
        it rewrites after each generation) as `shard`, as `run_stage` records a shard
        function's: each written atomically, then the manifest, then the stage's record of
        its shards. A file kept again under the same shard replaces the one before."""
        self.record(shard, outputs, {})
        self.finish(shard.stage, [shard])

    def file(self, stage: str, path: str) -> Path | None:
        """The file `path` (run-relative) as a shard of `stage` recorded it, checked against
        its sha256; None where there is none yet. A run made before the stage kept it (its
        config.json has no checksum) has its file read as it is, by its driver too, as has a
        folder that is no run directory (no config.json: nothing recorded it).

        Raises:
            DamagedFileError: the file is missing or damaged, or it exists without the record
                a run makes of it (the manifest deleted). To the driver writing the run, a file
                without its record is one not made yet (it was killed before the record).
        """
        for shard, manifest in self._manifests(stage):
            if path in manifest["files"]:
                [file] = self._check(shard, {"files": {path: manifest["files"][path]}})
                return file
        file = self.run / path
        if not file.exists():
            return None
        if not self.configs() or CHECKSUM not in read_config(self.run):
            return file
        if driving(self.run):
            return None
        problem = f"is not recorded by any shard of stage {stage} (its manifest is gone)"
        raise DamagedFileError(file, problem, _RERUN)

    def required(self, stage: str, path: str, advice: str) -> Path:
        """`file`, for a file the caller cannot go on without.

        Raises:
            RunDirError: the run has none yet (`advice` says what makes it).
            DamagedFileError: as `file`.
        """
        if (file := self.file(stage, path)) is None:
            raise RunDirError(f"{self.run} has no {path} yet: {advice}")
        return file

    def intact_outputs(self, stage: str) -> list[Path]:
        """Every file recorded by the intact shards of `stage`: a shard with a damaged or
        missing file is left out, with the warning `done` gives, so that it is computed again."""
        files = []
        for manifest in sorted((self.run / MANIFESTS / stage).glob("*.json")):
            if (recorded := self._intact(stage, manifest.stem, None)) is not None:
                files += [self.run / path for path in recorded["files"]]
        return files

    def scratch(self, shard: Shard) -> Path:
        """A directory the shard may use to resume itself; removed once the shard is done."""
        return self.run / SCRATCH / shard.stage / shard.key

    def clear_scratch(self, shard: Shard) -> None:
        """Remove the shard's scratch directory, and its parents once they are empty."""
        folder = self.scratch(shard)
        shutil.rmtree(folder, ignore_errors=True)
        for parent in (folder.parent, folder.parent.parent):
            with contextlib.suppress(OSError):  # not empty, or already gone
                parent.rmdir()


def unless_damaged(read: Callable[[], T]) -> T | None:
    """What `read` reads of a driver's own files (`ShardStore.file`), None where one, or its
    record, is damaged or missing (said in a warning, as `done` says of a shard): the driver
    makes it again rather than stop."""
    try:
        return read()
    except DamagedFileError as damage:
        warn(f"{damage.path} {damage.problem}; making it again")
        return None


_RERUN = "rerun the command that made the run (same run directory) to check its shards again"


def _redo(shard: str) -> str:
    """How to get a shard's damaged or missing file back."""
    return f"rerun the command that made it (same run directory) to compute shard {shard} again"


def _write_bytes(path: Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def parquet_bytes(frame: Any) -> bytes:
    """A DataFrame as Parquet file contents (no index), for a shard's outputs."""
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode("utf-8")
