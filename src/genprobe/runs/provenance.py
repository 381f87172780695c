"""What produced a run: resolved config, its hash, package versions, machine."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from genprobe.user_code import found_modules

PACKAGES = (
    "genprobe", "torch", "numpy", "scipy", "sympy", "pandas", "pyarrow", "matplotlib",
    "transformers",
)  # fmt: skip


def config_hash(config: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a resolved config (first 16 hex digits)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes (first 16 hex digits), read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def provenance() -> dict[str, Any]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": versions,
        **git_state(),
        "argv": sys.argv,
        **({"user_modules": modules} if (modules := found_modules()) else {}),
    }


def _git(where: Path, *args: str) -> str | None:
    """The output of a git command run in `where`; None outside a checkout."""
    try:
        out = subprocess.run(
            ["git", *args], cwd=where, capture_output=True, text=True,
            timeout=5, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def git_state(where: Path = Path(__file__).parent) -> dict[str, Any]:
    """The commit of the checkout holding `where` (by default this package's) and whether
    tracked files differ from it (then the commit alone does not give the code that ran)."""
    commit = _git(where, "rev-parse", "HEAD") or None
    if commit is None:
        return {"git_commit": None}
    return {"git_commit": commit, "git_dirty": bool(_git(where, "status", "--porcelain", "-uno"))}
