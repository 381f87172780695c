"""JSON files that carry their own checksum, so that an edit or a flipped bit which still
parses (a digit in a manifest's file list, a value in `config.json`) reads as damage rather
than as data.

The checksum is the sha256 of the canonical JSON of everything else in the file. Files written
before it existed have none and are read as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

CHECKSUM = "checksum"


def seal(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` with its checksum added, to be written as JSON."""
    return {**data, CHECKSUM: _digest(data)}


def intact(data: Mapping[str, Any]) -> bool:
    """Whether `data`, as read from a sealed file, has the checksum it records (True for a file
    written before files were sealed: it records none)."""
    if CHECKSUM not in data:
        return True
    rest = {key: value for key, value in data.items() if key != CHECKSUM}
    return data[CHECKSUM] == _digest(rest)


def _digest(data: Mapping[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
