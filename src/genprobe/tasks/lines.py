"""Line-numbered reading of text and JSONL files, with errors that name the file and line;
and the one rule for every input file: it must give a row to use (`some_rows`)."""

from __future__ import annotations

import json
from collections.abc import Sequence, Sized
from pathlib import Path
from typing import Any, TypeVar

from genprobe.errors import DataFormatError

Rows = TypeVar("Rows", bound=Sized)


# No input genprobe reads needs a longer line (a prompt, an expression of hundreds of
# operators); a longer one is refused before it is held in memory.
MAX_LINE_BYTES = 1 << 20


def text_lines(path: str | Path, blank: bool = False) -> list[tuple[int, str]]:
    """(1-based line number, line) for every non-blank line; with `blank`, for every line
    (parallel files pair their lines by number).

    Raises:
        DataFormatError: no such file, it cannot be read, a line is not UTF-8 (named with the
            byte offset in the file) or is longer than `MAX_LINE_BYTES`.
    """
    out, offset = [], 0
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
                if len(raw) > MAX_LINE_BYTES:
                    raise DataFormatError(
                        path,
                        number,
                        f"longer than {MAX_LINE_BYTES:,} bytes: not an input genprobe reads",
                    )
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as error:
                    at = offset + error.start
                    raise DataFormatError(
                        path,
                        number,
                        f"not UTF-8 text ({error.reason} at byte offset {at:,} of the file)",
                    ) from None
                offset += len(raw)
                if blank or line.strip():
                    out.append((number, line))
    except FileNotFoundError:
        raise DataFormatError(path, None, "no such file") from None
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read: {error}") from None
    return out


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
        except RecursionError:
            raise DataFormatError(path, number, "JSON nested too deeply to read") from None
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
    except RecursionError:
        raise DataFormatError(path, None, "JSON nested too deeply to read") from None
    if not isinstance(value, dict):
        raise DataFormatError(path, None, "expected a JSON object")
    return value


def some_rows(path: str | Path, rows: Rows, skipped: Sequence[tuple[int, str]] = ()) -> Rows:
    """`rows`, what a reader could use of the input file `path`, unless there is none.

    Raises:
        DataFormatError: no rows (an empty file), or every row left out (`skipped`: the line or
            row of each, and why): then the first one and why are named, as a file of another
            kind (another task's examples) gives none a reader can use.
    """
    if len(rows):
        return rows
    if skipped:
        line, why = skipped[0]
        raise DataFormatError(path, line, f"all {len(skipped)} rows left out; this one: {why}")
    raise DataFormatError(path, None, "empty: no rows to read")
