"""A run directory: `config.json` (resolved config, hash, provenance) plus whatever stages write.

Opening an existing directory with a different config is refused, so a resumed run can never
mix results of two configurations; a study may allow one exception, a config that extends the
stored one (a sweep with more seeds), and the directory then grows into the new config.

One process writes a run directory at a time: `open_run` takes an OS lock on its `run.lock`
(released when the `writing` scope around it ends: the study's driver (`as_driver`),
or the whole command that runs it and writes its report; or when the process dies, however),
and a second process on it is refused naming the first. The lock file holds who holds it, and
is emptied when it is released.
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from genprobe.errors import DamagedFileError, DifferentRunError, GenprobeError, RunDirError
from genprobe.runs.atomic import write_json
from genprobe.runs.config import RunConfig
from genprobe.runs.provenance import config_hash, provenance
from genprobe.runs.sealed import intact, seal

CONFIG_FILE = "config.json"
LOCK_FILE = "run.lock"

# the run directories this process holds locked (their lock files' descriptors), and those
# the running driver opened, unlocked when it ends (None: no driver runs)
_HELD: dict[Path, int] = {}
_OPENED: contextvars.ContextVar[list[Path] | None] = contextvars.ContextVar("opened", default=None)
# whether a study's driver runs (`writes_runs`): what it finds not made yet it makes
_DRIVING: contextvars.ContextVar[bool] = contextvars.ContextVar("driving", default=False)


def _forgotten_in_child() -> None:
    """A forked worker closes its copies of the locks: so that one outliving its killed
    driver for a moment does not hold the run (closing them releases nothing of the
    parent's, whose descriptors stay open)."""
    for lock in _HELD.values():
        os.close(lock)
    _HELD.clear()


os.register_at_fork(after_in_child=_forgotten_in_child)


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
    created = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    acquired, locked_before = path not in _HELD, (path / LOCK_FILE).exists()
    lock_run(path)
    try:
        return _open(path, kind, config, extends, older_kinds, notes, starts)
    except BaseException:  # refused or interrupted: what this call added is taken back
        if acquired:
            _unlock(path)
        if not locked_before:
            (path / LOCK_FILE).unlink(missing_ok=True)
        for folder in created:
            if folder.exists() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    finally:
        if _OPENED.get() is None:  # no driver holds it: locked only while it was opened
            _unlock(path)


def _open(
    path: Path,
    kind: str,
    config: RunConfig,
    extends: Callable[[Any], bool] | None,
    older_kinds: tuple[str, ...],
    notes: Callable[[], Mapping[str, Any]] | None,
    starts: Callable[[], None] | None,
) -> Path:
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
                seal(
                    {
                        "kind": kind,
                        "hash": digest,
                        "config": identity,
                        "provenance": {**provenance(), **(notes() if notes else {})},
                        "extended_from": [*stored.get("extended_from", []), stored["hash"]],
                    }
                ),
            )
            return path
        if not same_kind:
            differences = [("kind", stored.get("kind"), kind)]
        else:
            differences = config_differences(current or stored.get("config", {}), identity)
        raise DifferentRunError(path, differences or [("config hash", stored.get("hash"), digest)])
    if any(p.name != LOCK_FILE for p in path.iterdir()):
        raise RunDirError(
            f"{path} exists, is not empty and has no {CONFIG_FILE}: choose another --out"
        )
    if starts is not None:
        starts()
    write_json(
        path / CONFIG_FILE,
        seal(
            {
                "kind": kind,
                "hash": digest,
                "config": identity,
                "provenance": {**provenance(), **(notes() if notes else {})},
            }
        ),
    )
    return path


@contextlib.contextmanager
def writing() -> Iterator[None]:
    """The run directories opened (`open_run`, `lock_run`) inside stay locked until it ends;
    one inside another shares its locks. A command is one (a run's report is written under the
    lock its study took), as is each study's driver (`writes_runs`)."""
    if _OPENED.get() is not None:  # inside another, which holds the locks
        yield
        return
    token = _OPENED.set([])
    try:
        yield
    finally:
        for path in _OPENED.get() or []:
            _unlock(path)
        _OPENED.reset(token)


@contextlib.contextmanager
def as_driver() -> Iterator[list[Path]]:
    """A study's driver runs inside (`runs.driver.writes_runs`): the runs it opens stay locked
    until it ends (`writing`), and what it finds not made it makes (`driving`). Yields the
    list of the run directories opened, which grows as it opens them."""
    token = _DRIVING.set(True)
    try:
        with writing():
            opened = _OPENED.get()
            yield [] if opened is None else opened  # set by writing: never None here
    finally:
        _DRIVING.reset(token)


def lock_run(path: str | Path) -> None:
    """Lock the run directory `path` for this process, until the `writing` scope around it
    ends (a driver's, a command's).

    Raises:
        RunDirError: another process holds it (named by its process id, host and command).
    """
    path = Path(path).absolute()
    if path not in _HELD:
        lock = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # or BlockingIOError at once
        except BlockingIOError:
            holder = os.read(lock, 4096).decode("utf-8", "replace")
            os.close(lock)
            raise RunDirError(f"{path} is in use: {_holder(holder)}; wait for it to end, or "
                              "choose another --out") from None  # fmt: skip
        os.ftruncate(lock, 0)
        os.write(lock, json.dumps(_this_process()).encode())
        _HELD[path] = lock
    opened = _OPENED.get()
    if opened is not None and path not in opened:
        opened.append(path)


def driving(path: str | Path) -> bool:
    """Whether a driver writing the run directory `path` runs here: one that makes again what
    it finds not made (a shard without its manifest), where a reader (a report, even one
    written under the run's lock) names it as damage."""
    return _DRIVING.get() and Path(path).absolute() in _HELD


def _unlock(path: Path) -> None:
    """Release this process's lock of `path`."""
    lock = _HELD.pop(path, None)
    if lock is not None:
        os.ftruncate(lock, 0)  # an empty lock file: nobody holds it
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)


def _this_process() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join(["genprobe", *sys.argv[1:]])[:300],
        "since": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def _holder(text: str) -> str:
    """Who holds a lock, as its lock file says (written by `_this_process`)."""
    try:
        held = json.loads(text)
        return f"process {held['pid']} on {held['host']} ({held['command']}) since {held['since']}"
    except (ValueError, KeyError, TypeError):
        return "another process holds its lock"


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
    """The run's `config.json`: its kind, config, hash and provenance.

    Raises:
        RunDirError: `path` is not a run directory.
        DamagedFileError: the file is not readable, or what it records is not what was written
            (its config does not give its hash, or its checksum differs): an edit or a flipped
            bit that still parses is damage, never a setting.
    """
    file = Path(path) / CONFIG_FILE
    try:
        stored = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path} is not a run directory (no {CONFIG_FILE})") from None
    except (OSError, ValueError) as error:  # ValueError: not JSON, not UTF-8
        raise DamagedFileError(file, f"is unreadable ({error})", _RESTORE) from None
    if not isinstance(stored, dict) or not all(
        isinstance(stored.get(key), kind)
        for key, kind in (("kind", str), ("hash", str), ("config", dict))
    ):
        raise DamagedFileError(file, "is not a run's config (kind, hash, config)", _RESTORE)
    if config_hash(stored["config"]) != stored["hash"]:
        raise DamagedFileError(
            file,
            f"is damaged (its config does not give the hash it records, {stored['hash']})",
            _RESTORE,
        )
    if not intact(stored):
        raise DamagedFileError(
            file, "is damaged (its checksum differs from its contents)", _RESTORE
        )
    return stored


# config.json names what made the run, so nothing can compute it again.
_RESTORE = "put back a copy of it, or run the command again with another --out"
