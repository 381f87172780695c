"""Settings given as `name=value` text (`--task-option`, `--model-option`), checked against the
options a task or an architecture has and converted to their types."""

from __future__ import annotations

import dataclasses
import difflib
import enum
import numbers
import typing
from collections.abc import Mapping
from typing import Any

from genprobe.errors import ConfigError

TRUE = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def parse_pairs(pairs: list[str] | None, flag: str) -> dict[str, str]:
    """`["k=v", …]` (the values of a repeatable `flag`) → {k: v}, values still text.

    Raises:
        ConfigError: an item without `=`, named as `flag`.
    """
    options = {}
    for pair in pairs or []:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise ConfigError(flag, "name=value", pair)
        options[key.strip()] = value.strip()
    return options


def as_pairs(options: Mapping[str, Any]) -> list[str]:
    """{k: v} → `["k=v", …]` as the flags take them (`true`, `none`), for reports to show."""
    pairs = []
    for key, value in options.items():
        text = "none" if value is None else str(value)
        pairs.append(f"{key}={text.lower() if isinstance(value, bool) else text}")
    return pairs


def is_integer(value: object) -> bool:
    """Whether an option's value is a whole number (a bool is not)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def field_types(cls: type) -> dict[str, Any]:
    """A dataclass's options: each init field's name → its annotated type."""
    if not dataclasses.is_dataclass(cls):
        return {}
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


def typed_options(
    owner: str, given: Mapping[str, Any], types: Mapping[str, Any], what: str
) -> dict[str, Any]:
    """`given` checked against the options `types` (name → type) of `owner`, text converted.

    Raises:
        ConfigError: an option `owner` does not have (with the nearest names and the full
            list), or text that is not a value of the option's type; `what` names the kind of
            setting in the message ("task option", "model option").
    """
    values = {}
    for name, value in given.items():
        if name not in types:
            near = difflib.get_close_matches(name, types, n=2)
            hint = f" (did you mean {' or '.join(near)}?)" if near else ""
            known = ", ".join(types) or "none"
            raise ConfigError(what, f"one of {owner}'s options: {known}{hint}", name)
        if isinstance(value, str):
            value = convert(f"{what} {name}", value, types[name])
        values[name] = value
    return values


def choices(kind: Any) -> tuple[str, ...] | None:
    """The values of a setting that takes one of a few words: an `enum.Enum`'s values, a
    `Literal`'s words (or of either `| None`); None for any other type."""
    args = typing.get_args(kind)
    if type(None) in args and typing.get_origin(kind) is not typing.Literal:
        kind = next(a for a in args if a is not type(None))
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return tuple(str(member.value) for member in kind)
    if typing.get_origin(kind) is typing.Literal:
        return tuple(map(str, typing.get_args(kind)))
    return None


def spelled_choices(words: tuple[str, ...]) -> str:
    """`("a", "b", "c")` → "a, b or c"."""
    return " or ".join(filter(None, [", ".join(words[:-1]), words[-1]]))


def convert(name: str, text: str, kind: Any) -> Any:
    """Text → a value of `kind` (int, float, bool, str, an `enum.Enum`, a `Literal` of words,
    or X | None; `Any`: as it reads, see `literal`; anything else stays text).

    Raises:
        ConfigError: text that is not a value of `kind`, naming the setting `name`.
    """
    if kind is Any:
        return literal(text)
    args = typing.get_args(kind)
    if type(None) in args and typing.get_origin(kind) is not typing.Literal:
        if text.lower() == "none":
            return None
        kind = next(a for a in args if a is not type(None))
    if (words := choices(kind)) is not None:
        if text not in words:
            raise ConfigError(name, spelled_choices(words), text)
        return kind(text) if isinstance(kind, type) else text
    if kind is bool:
        if text.lower() not in TRUE:
            raise ConfigError(name, "true or false", text)
        return TRUE[text.lower()]
    if kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            noun = "an integer" if kind is int else "a number"
            raise ConfigError(name, noun, text) from None
    return text


def literal(text: str) -> Any:
    """A value of unknown type as it reads: an integer, a number, true/false, none, or text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)
