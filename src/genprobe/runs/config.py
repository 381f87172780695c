"""The protocol of every config a run records: checked in one place, hashed by its identity,
rebuilt from the identity a run directory stores.

A config's fields are of two kinds. Those that can change a number make up its identity: the
JSON-ready dict `config.json` holds and the run directory's hash is taken of. Runtime fields,
named in the class's `RUNTIME`, say only where or how fast it runs (a device, worker
processes, a time budget): they stay out of the identity, so a run started with one value
resumes with another, and a rebuilt config has them at their defaults.

Every study's config meets it (`SweepConfig`, `LanguageModelConfig`, `ProbeConfig`,
`SearchConfig`, `BrittlenessConfig`, `SaggaConfig`, `IntegrationTrainConfig`, the integration
task's `GenerationConfig`), and so do the settings inside them (`TrainConfig`, `ModelSettings`,
`DecodingConfig`).
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import asdict, fields, is_dataclass
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


def identity_fields(config: Any) -> dict[str, Any]:
    """`asdict(config)` less the class's runtime fields: the identity before any field is
    written in another form (a file as its digest, a nested config as its identity)."""
    return {k: v for k, v in asdict(config).items() if k not in type(config).RUNTIME}


def without_added_defaults(identity: dict[str, Any], added: Mapping[str, Any]) -> dict[str, Any]:
    """`identity` less every setting of `added` that is at its default (`added`: a setting, as
    `train.optimizer` inside a nested identity, -> its default). Settings added after runs
    existed are left out this way, so that an older run's config hash stays what it was and
    the run still resumes."""
    for key, default in added.items():
        parent, _, name = key.rpartition(".")
        holder = identity[parent] if parent else identity
        if holder[name] == default:
            del holder[name]
    return identity


FILE = "file"  # `Annotated[str, FILE]`: a setting naming a file, recorded with its digest
FileRef = Annotated[str, FILE]


class Recorded:
    """`identity` and `from_identity` written once, for a dataclass config: every field but the
    runtime ones, each recorded by its type (a file of `FileRef` as {"path", "sha256"}, a
    config inside as its own identity, a tuple as a list, a dataclass as a dict) and read back
    by it; the settings of `ADDED_DEFAULTS` (added after runs existed) left out at their
    defaults (`without_added_defaults`). A config whose identity has another form (settings
    moved since runs were made) overrides one step and calls this one."""

    RUNTIME: ClassVar[tuple[str, ...]] = ()
    ADDED_DEFAULTS: ClassVar[Mapping[str, Any]] = {}

    def identity(self) -> dict[str, Any]:
        """JSON-ready: what decides the results, the dict a run's config hash is taken of."""
        hints = _hints(type(self))
        identity = {
            f.name: _recorded(getattr(self, f.name), hints[f.name])
            for f in fields(self)  # type: ignore[arg-type]
            if f.name not in self.RUNTIME
        }
        return without_added_defaults(identity, self.ADDED_DEFAULTS)

    @classmethod
    def from_identity(cls: type[R], identity: Mapping[str, Any]) -> R:
        """The config `identity` was taken of, its runtime fields at their defaults."""
        hints = _hints(cls)
        return cls(**{name: _read(value, hints[name]) for name, value in identity.items()})


R = TypeVar("R", bound=Recorded)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def _recorded(value: Any, hint: Any) -> Any:
    if value is None:
        return None
    if FILE in getattr(hint, "__metadata__", ()):
        return {"path": value, "sha256": file_digest(value)}
    if hasattr(value, "identity"):
        return value.identity()
    if isinstance(value, tuple):
        return [_recorded(item, _item_hint(hint, at)) for at, item in enumerate(value)]
    if isinstance(value, dict):
        return dict(value)
    return asdict(value) if is_dataclass(value) else value


def _read(value: Any, hint: Any) -> Any:
    hint = _without_none(hint)
    if value is None:
        return None
    if FILE in getattr(hint, "__metadata__", ()):
        return value["path"]
    if hasattr(hint, "from_identity"):
        return hint.from_identity(value)
    if typing.get_origin(hint) is tuple:
        return tuple(_read(item, _item_hint(hint, at)) for at, item in enumerate(value))
    if is_dataclass(hint):
        return hint(**value)
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
