"""A run directory: `config.json` (resolved config, hash, provenance) plus whatever stages write.

Opening an existing directory with a different config is refused, so a resumed run can never
mix results of two configurations; a study may allow one exception, a config that extends the
stored one (a sweep with more seeds), and the directory then grows into the new config.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from genprobe.errors import DifferentRunError, GenprobeError, RunDirError
from genprobe.runs.atomic import write_json
from genprobe.runs.config import RunConfig
from genprobe.runs.provenance import config_hash, provenance

CONFIG_FILE = "config.json"


def open_run(
    path: str | Path,
    kind: str,
    config: RunConfig,
    extends: Callable[[Any], bool] | None = None,
    older_kinds: tuple[str, ...] = (),
    notes: Callable[[], Mapping[str, Any]] | None = None,
    starts: Callable[[], None] | None = None,
) -> Path:
    """Create the run directory for `config` (validated by the caller), or check that an
    existing one was made by it; returns its absolute path (tasks may run in processes with
    another working directory). `config.json` holds `config.identity()` and its hash.

    `extends(stored)`, given the config rebuilt from the stored identity, says whether `config`
    may take over a directory made by another config of the same kind; `config.json` then
    records the new config and the hashes it grew from (`extended_from`), and the stages decide
    what to redo from their shard specs.
    `older_kinds` are former names of `kind`: a directory made under one of them is a run of
    this kind. A stored identity in an older form is the same run when today's code reads it as
    `config`'s identity (`config.json` keeps its form and hash).
    `notes()` joins the provenance of a new (or grown) run: what is measured of it before it
    starts (called only when the directory is new or grows).
    `starts()` checks what a new run needs before its directory is written (a model under test
    that answers): it raises to refuse, leaving nothing behind. An existing run opens without
    it, since its rerun may need nothing it checks (a finished one only reads).
    """
    path = Path(path).absolute()
    identity = config.identity()
    digest = config_hash(identity)
    if (path / CONFIG_FILE).exists():
        stored = read_config(path)
        same_kind = stored.get("kind") in (kind, *older_kinds)
        if same_kind and stored.get("hash") == digest:
            return path
        current = _as_read_today(config, stored) if same_kind else None
        if current == identity:
            return path
        earlier = type(config).from_identity
        if same_kind and extends is not None and extends(earlier(stored["config"])):
            write_json(
                path / CONFIG_FILE,
                {
                    "kind": kind,
                    "hash": digest,
                    "config": identity,
                    "provenance": {**provenance(), **(notes() if notes else {})},
                    "extended_from": [*stored.get("extended_from", []), stored["hash"]],
                },
            )
            return path
        if not same_kind:
            differences = [("kind", stored.get("kind"), kind)]
        else:
            differences = config_differences(current or stored.get("config", {}), identity)
        raise DifferentRunError(path, differences or [("config hash", stored.get("hash"), digest)])
    if path.exists() and any(path.iterdir()):
        raise RunDirError(
            f"{path} exists, is not empty and has no {CONFIG_FILE}: choose another --out"
        )
    if starts is not None:
        starts()
    write_json(
        path / CONFIG_FILE,
        {
            "kind": kind,
            "hash": digest,
            "config": identity,
            "provenance": {**provenance(), **(notes() if notes else {})},
        },
    )
    return path


def _as_read_today(config: RunConfig, stored: dict[str, Any]) -> dict[str, Any] | None:
    """The stored identity as today's code writes it (it may have been recorded in an older
    form); None if today's code cannot read it as a config of `config`'s kind."""
    try:
        return type(config).from_identity(stored["config"]).identity()
    except (GenprobeError, KeyError, TypeError, ValueError):
        return None


def config_differences(
    stored: dict[str, Any], config: dict[str, Any], prefix: str = ""
) -> list[tuple[str, Any, Any]]:
    """The settings in which two configs differ: (dotted key, stored value, new value); a key
    that only one of them has is None in the other."""
    differences = []
    for key in sorted(stored.keys() | config.keys()):
        old, new = stored.get(key), config.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            differences += config_differences(old, new, f"{prefix}{key}.")
        elif _as_json(old) != _as_json(new):
            differences.append((f"{prefix}{key}", old, new))
    return differences


def _as_json(value: Any) -> Any:
    """As stored in config.json (tuples as lists), to compare a config with a stored one."""
    return json.loads(json.dumps(value))


def read_config(path: str | Path) -> dict[str, Any]:
    file = Path(path) / CONFIG_FILE
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path} is not a run directory (no {CONFIG_FILE})") from None
    except (OSError, json.JSONDecodeError) as error:
        raise RunDirError(f"{file}: unreadable ({error})") from None
