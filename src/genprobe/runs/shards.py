"""A run's work as shards: pure data that a function turns into result files.

Every study is shaped the same way:

    run   = a hashed config (rundir.py) + ordered lists of shards, one list per stage
    shard = (stage, key, spec): a pure function of its spec and the run's config gives files
    store = the driver writes a shard's files atomically, then its manifest; a shard whose
            manifest exists, names the same spec and lists files that all exist is done, so
            rerunning a killed run skips it (and a shard whose spec changed runs again)

A shard's function never writes into the run directory itself: it returns its files
(run-relative path -> bytes), so the same function can run in this process, in a worker
process or on another machine, and the driver's copy is the only one that counts. Work a shard
wants to resume inside itself (a long training) goes to its scratch directory, which is
disposable.

The manifest records where and how the shard ran (device, host, seconds): facts about the run,
not part of its identity, so a run started on a GPU can be finished on a CPU.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import platform
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genprobe.errors import RunDirError
from genprobe.runs.atomic import atomic_path, write_json
from genprobe.runs.rundir import CONFIG_FILE

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9=_.,+-]{0,127}$")
MANIFESTS = "shards"
SCRATCH = "scratch"
# What the driver owns: a shard may not write these (the run's config, manifests, scratch).
RESERVED = (CONFIG_FILE, MANIFESTS, SCRATCH)

Outputs = dict[str, bytes]  # run-relative path -> file contents


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
    """The shard results of one run directory: which shards are done, and writing new ones."""

    def __init__(self, run: str | Path) -> None:
        self.run = Path(run)

    def _manifest(self, shard: Shard) -> Path:
        return self.run / MANIFESTS / shard.stage / f"{shard.key}.json"

    def _recorded(self, manifest: Path) -> dict[str, Any] | None:
        """The manifest, if it exists and all the files it lists exist."""
        if not manifest.exists():
            return None
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
        return recorded if all((self.run / p).exists() for p in recorded["files"]) else None

    def done(self, shard: Shard) -> bool:
        """The shard's manifest exists, was made from this spec, and all its files exist."""
        recorded = self._recorded(self._manifest(shard))
        return recorded is not None and recorded.get("spec") == shard.digest

    def finished(self, stage: str, key: str) -> bool:
        """A shard `stage/key` was recorded, from whatever spec, and all its files exist: for a
        shard whose spec holds results of earlier shards (which a rerun could change)."""
        return self._recorded(self.run / MANIFESTS / stage / f"{key}.json") is not None

    def read(self, shard: Shard) -> Outputs:
        """The files a finished shard recorded, as its task returned them.

        Raises:
            RunDirError: the shard is not done.
        """
        recorded = self._recorded(self._manifest(shard))
        if recorded is None:
            raise RunDirError(f"shard {shard.name} of {self.run} is not done")
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
        for path, data in outputs.items():
            _write_bytes(targets[path], data)
        write_json(
            self._manifest(shard),
            {
                "host": platform.node(),
                **facts,
                "shard": shard.name,
                "spec": shard.digest,
                "files": {path: hashlib.sha256(data).hexdigest() for path, data in outputs.items()},
            },
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
        """Manifests of the finished shards of `stage`, in key order."""
        folder = self.run / MANIFESTS / stage
        return [
            json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))
        ]

    def outputs(self, stage: str) -> list[Path]:
        """Every file recorded by the finished shards of `stage`, in key order: what a reader of
        results uses, so a file no manifest lists is never counted."""
        return [self.run / path for manifest in self.manifests(stage) for path in manifest["files"]]

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
