"""A content-addressed cache on disk: bytes kept under the sha256 of what made them, for work
that many runs share and that takes long to redo (a suite table no model changes).

An entry is two files, written atomically: `<key>` holds the bytes and `<key>.sha256` their
digest, checked on every read. An entry that is missing its digest or fails it (a truncated
write, a disk error, a hand edit) is a miss, logged, and the next `put` overwrites it.

The cache lives in `$GENPROBE_CACHE`, else `$XDG_CACHE_HOME/genprobe`, else `~/.cache/genprobe`.

Example:
    cache = Cache(default_root() / "suites")
    key = cache_key({"suite": "robustness-simple", "n": 500, "seed": 43})
    data = cache.get(key)           # None: never stored, or corrupt
    cache.put(key, table_bytes)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from genprobe.runs.atomic import atomic_path

ROOT_VARIABLE = "GENPROBE_CACHE"
_KEY = re.compile(r"^[0-9a-f]{64}$")

Log = Callable[[str], None]


def default_root() -> Path:
    """`$GENPROBE_CACHE`, else `$XDG_CACHE_HOME/genprobe`, else `~/.cache/genprobe`."""
    if os.environ.get(ROOT_VARIABLE):
        return Path(os.environ[ROOT_VARIABLE]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "genprobe"
    return Path.home() / ".cache" / "genprobe"


def cache_key(what: Mapping[str, Any]) -> str:
    """sha256 (64 hex digits) of the canonical JSON of `what`: everything the value depends on."""
    text = json.dumps(what, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Cache:
    """The entries of one cache directory (created at the first `put`)."""

    def __init__(self, root: str | Path, log: Log = lambda message: None) -> None:
        self.root = Path(root)
        self.log = log

    def get(self, key: str) -> bytes | None:
        """The bytes stored under `key`; None if there are none or they fail their digest."""
        data_path, digest_path = self._paths(key)
        if not data_path.exists():
            return None
        try:
            data = data_path.read_bytes()
            digest = digest_path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as error:
            self.log(f"cache entry {data_path} is unreadable ({error}): treated as missing")
            return None
        if hashlib.sha256(data).hexdigest() != digest:
            self.log(f"cache entry {data_path} fails its sha256 (corrupt): treated as missing")
            return None
        return data

    def put(self, key: str, data: bytes) -> None:
        """Store `data` under `key`, replacing what was there: the bytes, then their digest, so
        an interrupted write leaves an entry that fails its check, never one that passes.

        A cache that cannot be written costs only the reuse: the error is logged, not raised.
        """
        data_path, digest_path = self._paths(key)
        try:
            digest_path.unlink(missing_ok=True)
            with atomic_path(data_path) as tmp:
                tmp.write_bytes(data)
            with atomic_path(digest_path) as tmp:
                tmp.write_text(hashlib.sha256(data).hexdigest() + "\n", encoding="ascii")
        except OSError as error:
            self.log(f"cache entry {data_path} not written ({error})")

    def _paths(self, key: str) -> tuple[Path, Path]:
        if not _KEY.match(key):
            raise ValueError(f"a cache key is a sha256 in hex (see cache_key). Got {key!r}.")
        return self.root / key, self.root / f"{key}.sha256"
