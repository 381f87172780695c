"""What produced a run: resolved config, its hash, package versions, machine."""

from __future__ import annotations

import hashlib
import json
import os
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


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes (hex), read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes (first 16 hex digits): what a config's identity records."""
    return file_sha256(path)[:16]


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
        "machine": machine(),
        "versions": versions,
        **git_state(),
        "argv": sys.argv,
        **({"user_modules": modules} if (modules := found_modules()) else {}),
    }


# Environment variables that choose torch's CPU kernels or thread counts (and so the float
# rounding of a training trajectory: docs/rewriting.md#other-cpus).
KERNEL_SETTINGS = (
    "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS",
)  # fmt: skip


def machine() -> dict[str, Any]:
    """The CPU and the math libraries that ran the numbers: another CPU model, kernel set or
    library build rounds floats differently, so one seed's trajectory differs across machines."""
    import torch

    build = torch.__config__.show()
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
        "mkl": _build_line(build, "Math Kernel Library Version"),
        "onednn": _build_line(build, "MKL-DNN v"),
        "settings": {name: os.environ[name] for name in KERNEL_SETTINGS if name in os.environ},
    }


def cpu_model() -> str:
    """The CPU's name, with its family and model numbers where Linux gives them (a virtual
    machine often names every AMD EPYC generation alike)."""
    try:
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return platform.processor() or platform.machine()
    fields = dict(line.split(":", 1) for line in first.splitlines() if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    name = fields.get("model name", platform.machine())
    if "cpu family" in fields and "model" in fields:
        return f"{name} (family {fields['cpu family']}, model {fields['model']})"
    return name


def _build_line(build: str, marker: str) -> str | None:
    """The text after `marker` on the line of torch's build configuration that has it."""
    for line in build.splitlines():
        if marker in line:
            return line.split(marker, 1)[1].strip()
    return None


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
