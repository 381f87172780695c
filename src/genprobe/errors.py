"""Every exception genprobe raises on purpose lives here.

All derive from `GenprobeError`, so a caller (and the CLI, which turns them into a one-line
message and exit code 2) can catch user errors without catching bugs.
"""

from __future__ import annotations

import difflib
import math
import numbers
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO


class GenprobeError(Exception):
    """Base class of all errors caused by user input, files or configuration."""

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt from its message and fields, not by calling __init__ with the message alone
        # (which a subclass's own arguments refuse), so an error raised in a worker process or
        # on a Ray node reaches the command as itself: one line, exit code 2.
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(kind: type[GenprobeError], args: tuple, fields: dict) -> GenprobeError:
    error = kind.__new__(kind)
    Exception.__init__(error, *args)
    error.__dict__.update(fields)
    return error


class ConfigError(GenprobeError, ValueError):
    """A setting has a value outside what it accepts."""

    def __init__(self, name: str, expected: str, got: object) -> None:
        self.name, self.expected, self.got = name, expected, got
        super().__init__(self.describe())

    def describe(self, spell: Callable[[str], str] = str) -> str:
        """The message, with the setting as `spell` names it (the CLI: as its option)."""
        return f"{spell(self.name)} must be {self.expected}. Got {_show(self.got)} instead."


class DataFormatError(GenprobeError, ValueError):
    """A data file is malformed; the message names the file, the line and the field."""

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line


class RunDirError(GenprobeError):
    """A run directory is missing, incomplete, or was made by a different configuration."""


class DamagedFileError(RunDirError):
    """A file a run recorded is missing, or its contents are not what was recorded (its sha256
    differs from its shard's manifest, or it cannot be read): `path` names it, `problem` says
    what is wrong, `recovery` how to get it back."""

    def __init__(self, path: str | Path, problem: str, recovery: str) -> None:
        self.path, self.problem, self.recovery = Path(path), problem, recovery
        super().__init__(f"{path} {problem}; {recovery}")


class DiskFullError(GenprobeError, OSError):
    """A file could not be written for want of space: `path` names it, `free` is the space
    left on its file system (bytes). Nothing half-written is left in its place."""

    def __init__(self, path: str | Path, free: int | None) -> None:
        self.path, self.free = Path(path), free
        left = "unknown" if free is None else f"{free / 2**20:,.1f} MiB"
        super().__init__(f"no space left to write {path} ({left} free there); free some and rerun")


class DifferentRunError(RunDirError):
    """A run directory holds a run of another configuration: `differences` are the settings
    that differ, as (dotted key, the run's value, this command's value)."""

    def __init__(self, path: Path, differences: list[tuple[str, object, object]]) -> None:
        self.path = path
        self.differences = differences
        super().__init__(self.describe())

    def describe(self, spell: Callable[[str], str] = str) -> str:
        """The message, with each key as `spell` names it (the CLI: as its option)."""
        shown = "; ".join(
            f"{spell(key)}: run has {_show(old)}, command has {_show(new)}"
            for key, old, new in self.differences
        )
        return f"{self.path} holds a different run ({shown}): choose another --out"


def _show(value: object) -> str:
    """A value as a user would type it: `0 1 2`, not `(0, 1, 2)`; `true`, not `True`."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        items = [_show(item) for item in value]
        return " ".join(items if len(items) <= 6 else [*items[:3], "…", items[-1]])
    return repr(value)


class GenprobeWarning(UserWarning):
    """Something the user should know that does not stop the command (a damaged file that is
    computed again); the CLI shows it as one line."""


def warn(message: str) -> None:
    """Tell the user `message` and go on (a `GenprobeWarning`)."""
    warnings.warn(message, GenprobeWarning, stacklevel=3)


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """`warnings.showwarning` for genprobe's commands and the processes they start: a
    `GenprobeWarning` as one line, `genprobe: warning: …`, on stderr; any other as Python
    shows it."""
    if issubclass(category, GenprobeWarning):
        print(f"genprobe: warning: {message}", file=file or sys.stderr)
    else:
        _PYTHON_SHOW_WARNING(message, category, filename, lineno, file, line)


_PYTHON_SHOW_WARNING = warnings.showwarning


class ParseError(GenprobeError, ValueError):
    """Text or tokens could not be read as an expression; the message says where and why."""


class InputTooLongError(ParseError):
    """The input has more characters or tokens than the parser accepts."""


class NestingTooDeepError(ParseError):
    """The expression nests deeper than the parser accepts."""


class IntegerTooLargeError(ParseError):
    """An integer (or an integer power) is larger than the parser accepts."""


class UnsupportedExpressionError(GenprobeError, ValueError):
    """A well-formed expression uses something the task does not encode (another variable,
    a special function, a float, the imaginary unit, ...)."""


class CheckpointError(GenprobeError):
    """A checkpoint cannot be read, or its tensors do not fit the model; the message names the
    file and the offending key."""


class UnknownModelError(GenprobeError, KeyError):
    """A model spec names no registered kind; the message lists near matches and every kind."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class UnknownTaskError(GenprobeError, KeyError):
    """A task name is not registered; the message lists near matches and every task."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class UnknownArchitectureError(GenprobeError, KeyError):
    """An architecture name is not registered; the message lists near matches and every one."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class ModelContractError(GenprobeError):
    """A model builder genprobe did not write breaks its contract; the message names the
    builder, what was expected and what it gave."""


class TaskContractError(GenprobeError):
    """A task breaks the contract of `genprobe.tasks.Task`; the message names the method and
    what it returned."""


class ModelCapabilityError(GenprobeError):
    """The model cannot do what was asked (e.g. give a log-probability)."""


class ResourceError(GenprobeError):
    """A run this machine cannot hold (its estimated memory exceeds what is free)."""


class EndpointError(GenprobeError):
    """A model endpoint kept failing after its retries, or answered in an unexpected shape."""


def finite(value: object) -> bool:
    """Whether `value` is a real number other than inf, -inf and nan: what a numeric setting
    checks first, since a bound alone (`value > 0`) lets inf through."""
    return isinstance(value, numbers.Real) and math.isfinite(value)


def check_choice(option: str, value: str, allowed: Iterable[str]) -> None:
    """Raise a `ConfigError` naming the nearest allowed values unless `value` is allowed."""
    allowed = list(allowed)
    if value in allowed:
        return
    near = difflib.get_close_matches(value, allowed, n=2)
    hint = f" (did you mean {' or '.join(near)}?)" if near else ""
    raise ConfigError(option, f"one of {', '.join(allowed)}{hint}", value)
