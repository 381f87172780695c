"""Where a command writes, checked as its options are read (before any work is done or any
file written): each output option names one of these as its `callback`.

    output_file     a file (OUT itself, or files named OUT.* beside it)
    output_folder   a folder: a run directory, made or resumed, or a folder of reports

An error is click's usage error, so the command line prints it as one line and exits 2.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer


def output_file(path: Path | None) -> Path | None:
    """`path`, if a file can be written there; None (an option left out) as it is."""
    if path is not None:
        if path.is_dir():
            raise typer.BadParameter(f"{path} is a folder, not a file")
        _check_folder(path.parent)
    return path


def output_folder(path: Path | None) -> Path | None:
    """`path`, if it is a folder or one can be made there; None as it is."""
    if path is not None:
        _check_folder(path)
    return path


def _check_folder(folder: Path) -> None:
    """`folder` is a folder this process can write in, or one it can make."""
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if not existing.is_dir():
        raise typer.BadParameter(f"{existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise typer.BadParameter(f"cannot write in {existing}")
