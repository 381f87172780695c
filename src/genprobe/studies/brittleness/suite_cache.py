"""The suite tables that need no model, kept between runs: a later run with the same suite
settings takes them from the cache instead of building them again (operator-extrapolation's
2,500 generated problems took 782 s of the paper preset's run).

A table's key holds everything it is made from: the suite, N, the seed, the inputs that suite
reads (the validation file's name, bytes and split; the generation method, round size and the
model's training max_ops),
the versions of genprobe, SymPy and NumPy, and FORMAT. The suites made of the problems a model
solved are never cached. A shard taken from the cache says so in its manifest
(`shards/suite/<name>.json`: `"source": "cache"` and the `cache_key`); a built one has
`"source": "built"`.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy
import sympy

import genprobe
from genprobe.runs.cache import Cache, Log, cache_key, default_root
from genprobe.runs.provenance import file_digest
from genprobe.runs.shards import Outputs, Shard, ShardStore
from genprobe.tasks.integration.suites import SuiteRequest
from genprobe.tasks.integration.suites.operators import DEFAULT_N, PAPER_MAX_OPS, round_size

# the layout of a cached entry and of the tables in it: bump it when a change to the suite
# builders changes their tables under the same genprobe version (2: BWD's fast engine; 3: the
# lc engine, SymPy's simplify as Lample & Charton, and FWD's doit)
FORMAT = 3
# the suites made from the validation file (and its split)
READS_VALIDATION = ("in-distribution", "validation-primitives")
# the suites that need no model: those the cache holds
CACHED = ("robustness-simple", "integer-extrapolation", "operator-extrapolation", *READS_VALIDATION)


def default_directory() -> Path:
    """Where the suite cache lives unless told: `suites/` in genprobe's cache directory."""
    return default_root() / "suites"


def suite_key(name: str, request: SuiteRequest) -> dict[str, Any]:
    """What the table of suite `name` is made from, as JSON data (its cache key is the sha256).

    Raises:
        ValueError: `name` is not a suite that needs no model.
    """
    if name not in CACHED:
        raise ValueError(f"only suites that need no model are cached. Got {name!r}.")
    what: dict[str, Any] = {
        "format": FORMAT,
        "versions": {
            "genprobe": genprobe.__version__,
            "sympy": sympy.__version__,
            "numpy": numpy.__version__,
        },
        "suite": name,
        "n": request.n,
        "seed": request.seed,
    }
    if name in READS_VALIDATION and request.validation is not None:
        path = Path(request.validation)  # in-distribution names its set after the file
        what["validation"] = {"name": path.name, "sha256": file_digest(path)}
        what["split"] = request.split
    if name == "operator-extrapolation":
        what["method"] = request.method
        if request.train_max_ops != PAPER_MAX_OPS:  # absent at 15: older entries keep their key
            what["train_max_ops"] = request.train_max_ops
        # the generated table depends on the round size (IBP learns primitives between rounds)
        # but not on the worker count (tests/studies/brittleness/test_suite_cache.py); only a
        # small suite's rounds grow with the workers
        n = DEFAULT_N if request.n is None else request.n
        what["round_size"] = round_size(n, request.workers)
    return what


class SuiteCache:
    """Suite shards of a brittleness run, restored from and kept in a cache directory."""

    def __init__(self, root: str | Path, log: Log = lambda message: None) -> None:
        self.cache = Cache(root, log)
        self.log = log

    def restore(self, run: Path, shard: Shard, request: SuiteRequest) -> bool:
        """Record `shard` (suite `shard.key`) in `run` from the cache; False if it is not there.

        An entry that cannot be read back as a shard's files counts as missing, like a corrupt
        one: the suite is built and the entry replaced.
        """
        key = cache_key(suite_key(shard.key, request))
        data = self.cache.get(key)
        if data is None:
            return False
        try:
            outputs = _unpack(data)
        except ValueError as error:
            self.log(f"{shard.key}: cache entry {key[:16]} unreadable ({error}); building it")
            return False
        ShardStore(run).record(shard, outputs, {"source": "cache", "cache_key": key})
        self.log(f"{shard.key}: from the cache (key {key[:16]})")
        return True

    def keep(self, run: Path, shard: Shard, request: SuiteRequest) -> None:
        """Store the files `shard` recorded in `run` under its suite's key."""
        key = cache_key(suite_key(shard.key, request))
        self.cache.put(key, _pack(ShardStore(run).read(shard)))


def _pack(outputs: Outputs) -> bytes:
    files = {path: base64.b64encode(data).decode("ascii") for path, data in outputs.items()}
    return json.dumps({"files": files}, sort_keys=True).encode()


def _unpack(data: bytes) -> Outputs:
    """A shard's files from `_pack`'s bytes.

    Raises:
        ValueError: not what `_pack` writes.
    """
    try:
        files = json.loads(data)["files"]
        return {str(path): base64.b64decode(text, validate=True) for path, text in files.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a packed shard ({type(error).__name__})") from None
