"""The protocol of every config a run records: checked in one place, hashed by its identity,
rebuilt from the identity a run directory stores; and `Recorded`, which writes the identity
and reads it back once for every dataclass config.

A config's fields are of two kinds. Those that can change a number make up its identity: the
JSON-ready dict `config.json` holds and the run directory's hash is taken of. Runtime fields,
named in the class's `RUNTIME`, say only where or how fast it runs (a device, worker
processes, a time budget): they stay out of the identity, so a run started with one value
resumes with another, and a rebuilt config has them at their defaults.

Every study's config meets it and is `Recorded` (`SweepConfig`, `LanguageModelConfig`,
`ProbeConfig`, `SearchConfig`, `BrittlenessConfig`, `SaggaConfig`, `IntegrationTrainConfig`,
the integration task's `GenerationConfig`), and so are the settings inside them
(`TrainConfig`, `ModelSettings`, `DecodingConfig`).
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import Annotated, Any, ClassVar, Protocol, TypeVar

from genprobe.runs.provenance import file_digest

C = TypeVar("C", bound="RunConfig")


class RunConfig(Protocol):
    # fields left out of the identity: where and how fast the run goes, not what it computes
    RUNTIME: ClassVar[tuple[str, ...]]

    def validated(self: C) -> C:
        """The config itself, every field checked.

        Raises:
            ConfigError: a field out of range, named as the CLI option where there is one.
        """
        ...

    def identity(self) -> dict[str, Any]:
        """JSON-ready: what decides the results, the dict a run's config hash is taken of."""
        ...

    @classmethod
    def from_identity(cls: type[C], identity: dict[str, Any]) -> C:
        """The config `identity` was taken of, its runtime fields at their defaults."""
        ...


@dataclass(frozen=True)
class Form:
    """How a field is recorded where its type alone does not say (`Annotated[T, Form(...)]`):
    `record` turns its value JSON-ready, `read` turns that back."""

    record: Callable[[Any], Any]
    read: Callable[[Any], Any]


# a setting naming a file, recorded with its digest
FileRef = Annotated[
    str, Form(lambda path: {"path": path, "sha256": file_digest(path)}, lambda file: file["path"])
]
# a task's or model's options as (name, value) pairs, recorded as a dict
Options = Annotated[
    tuple[tuple[str, Any], ...], Form(dict, lambda options: tuple(sorted(options.items())))
]


class Recorded:
    """`identity` and `from_identity` written once, for a dataclass config: every field but the
    runtime ones, each recorded by its type (a `Form` where its hint names one, a config
    inside as its own identity, a tuple as a list, a dataclass as a dict) and read back by it.
    The fields of `FLAT` give their `flat_identity` at the top of the identity instead, read
    back by `from_flat_identity`; the settings of `ADDED_DEFAULTS` (added after runs existed:
    a setting, as `train.optimizer` inside a nested identity, -> its default) are left out at
    their defaults, so that an older run's config hash stays what it was and the run still
    resumes. A config whose stored identity has another form (settings moved since runs were
    made, a digest beside the fields) overrides the step that differs and calls this one."""

    RUNTIME: ClassVar[tuple[str, ...]] = ()
    FLAT: ClassVar[tuple[str, ...]] = ()
    ADDED_DEFAULTS: ClassVar[Mapping[str, Any]] = {}

    def identity(self) -> dict[str, Any]:
        """JSON-ready: what decides the results, the dict a run's config hash is taken of."""
        hints = _hints(type(self))
        identity: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name in self.FLAT:
                identity.update(value.flat_identity())
            elif f.name not in self.RUNTIME:
                identity[f.name] = _recorded(value, hints[f.name])
        for key, default in self.ADDED_DEFAULTS.items():
            parent, _, name = key.rpartition(".")
            holder = identity[parent] if parent else identity
            if holder[name] == default:
                del holder[name]
        return identity

    @classmethod
    def from_identity(cls: type[R], identity: Mapping[str, Any]) -> R:
        """The config `identity` was taken of, its runtime fields at their defaults."""
        hints = _hints(cls)
        own, flat = dict(identity), {}
        for name in cls.FLAT:
            flat[name], own = hints[name].from_flat_identity(own)
        return cls(**flat, **{name: _read(value, hints[name]) for name, value in own.items()})


R = TypeVar("R", bound=Recorded)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def _form(hint: Any) -> Form | None:
    return next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Form)), None)


def _recorded(value: Any, hint: Any) -> Any:
    if value is None:
        return None
    if form := _form(_without_none(hint)):
        return form.record(value)
    if hasattr(value, "identity"):
        return value.identity()
    if isinstance(value, tuple):
        return [_recorded(item, _item_hint(hint, at)) for at, item in enumerate(value)]
    if isinstance(value, Mapping):
        return dict(value)
    return asdict(value) if is_dataclass(value) else value


def _read(value: Any, hint: Any) -> Any:
    hint = _without_none(hint)
    if value is None:
        return None
    if form := _form(hint):
        return form.read(value)
    if hasattr(hint, "from_identity"):
        return hint.from_identity(value)
    if typing.get_origin(hint) is tuple:
        return tuple(_read(item, _item_hint(hint, at)) for at, item in enumerate(value))
    if is_dataclass(hint):  # recorded by `asdict`: the dataclasses inside it too
        inner = _hints(hint)
        return hint(**{name: _read(item, inner[name]) for name, item in value.items()})
    return value


def _without_none(hint: Any) -> Any:
    """`X` of `X | None`."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        kept = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(kept) == 1:
            return kept[0]
    return hint


def _item_hint(hint: Any, at: int) -> Any:
    """The hint of item `at` of a tuple of type `hint` (`tuple[X, ...]` or `tuple[X, Y]`)."""
    args = typing.get_args(_without_none(hint))
    if not args:
        return Any
    return args[0] if len(args) == 2 and args[1] is Ellipsis else args[at]
