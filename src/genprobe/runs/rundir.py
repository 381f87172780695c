"""A run directory: `config.json` (resolved config, hash, provenance) plus whatever stages write.

Opening an existing directory with a different config is refused, so a resumed run can never
mix results of two configurations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from genprobe.errors import RunDirError
from genprobe.runs.atomic import write_json
from genprobe.runs.provenance import config_hash, provenance

CONFIG_FILE = "config.json"


def open_run(path: str | Path, kind: str, config: dict[str, Any]) -> Path:
    """Create the run directory for `config`, or check that an existing one was made by it."""
    path = Path(path)
    digest = config_hash(config)
    if (path / CONFIG_FILE).exists():
        stored = read_config(path)
        if stored.get("kind") != kind or stored.get("hash") != digest:
            raise RunDirError(
                f"{path} holds a different run ({stored.get('kind')}, config hash "
                f"{stored.get('hash')}; this one is {digest}): choose another --out"
            )
        return path
    if path.exists() and any(path.iterdir()):
        raise RunDirError(
            f"{path} exists, is not empty and has no {CONFIG_FILE}: choose another --out"
        )
    write_json(
        path / CONFIG_FILE,
        {"kind": kind, "hash": digest, "config": config, "provenance": provenance()},
    )
    return path


def read_config(path: str | Path) -> dict[str, Any]:
    file = Path(path) / CONFIG_FILE
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path} is not a run directory (no {CONFIG_FILE})") from None
    except (OSError, json.JSONDecodeError) as error:
        raise RunDirError(f"{file}: unreadable ({error})") from None
