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

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, ClassVar, Protocol, TypeVar

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
