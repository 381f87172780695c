"""Line-numbered reading of text and JSONL files, with errors that name the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from genprobe.errors import DataFormatError


def text_lines(path: str | Path) -> list[tuple[int, str]]:
    """(1-based line number, line) for every non-blank line.

    Raises:
        DataFormatError: the file cannot be read as UTF-8 text.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise DataFormatError(path, None, f"cannot read: {error}") from None
    return [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]


def json_lines(path: str | Path, objects: bool = False) -> list[tuple[int, Any]]:
    """(line number, value) for every non-blank JSONL line; `objects` requires JSON objects.

    Raises:
        DataFormatError: unreadable, a line that is not JSON, or (with `objects`) not an object.
    """
    out = []
    for number, line in text_lines(path):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataFormatError(path, number, f"not JSON: {error.msg}") from None
        if objects and not isinstance(value, dict):
            raise DataFormatError(path, number, "expected a JSON object")
        out.append((number, value))
    return out


def json_object(path: str | Path) -> dict[str, Any]:
    """A JSON file holding one object (a run's config.json, a dataset's meta.json).

    Raises:
        DataFormatError: it cannot be read, is not JSON, or is not an object.
    """
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataFormatError(path, None, f"not readable as JSON ({error})") from None
    if not isinstance(value, dict):
        raise DataFormatError(path, None, "expected a JSON object")
    return value
