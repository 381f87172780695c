"""A model under test as a run records it: the spec, how it decodes, and what only says where
it ran.

A run's identity holds what changes the model's answers (the spec, a fingerprint of the
checkpoint's bytes, the decoding settings, the CAS deadline, the sampling temperature); the
device, the answer cache and the request concurrency are runtime facts, recorded but not
hashed, so a run started on a GPU can be finished on a CPU.

Example:
    settings = ModelSettings("ckpt:runs/bwd", DecodingConfig(beam_size=10))
    model = settings.load(min_beam=50)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from genprobe.decoding.config import DecodingConfig
from genprobe.models.bundled import WEIGHTS
from genprobe.models.device import present_device
from genprobe.runs.config import identity_fields
from genprobe.runs.provenance import file_digest
from genprobe.under_test.adapters.integration_model import Model


@dataclass(frozen=True)
class ModelSettings:
    """A `genprobe.runs.config.RunConfig`, inside the brittleness and SAGGA configs."""

    RUNTIME: ClassVar[tuple[str, ...]] = ("device", "cache_dir", "concurrency")
    spec: str  # ckpt:PATH, lc:PATH, sympy, openai:MODEL@URL, py:module:function
    decoding: DecodingConfig = field(default_factory=DecodingConfig)
    deadline: float = 5.0  # sympy: seconds per problem
    temperature: float | None = None  # openai: sampling temperature (None: the endpoint's)
    device: str = "cpu"
    cache_dir: str | None = None  # openai: answers cached on disk
    concurrency: int = 8  # openai: requests in flight

    def validated(self) -> ModelSettings:
        """Raises ConfigError: bad decoding settings, or a device this machine does not have."""
        self.decoding.validated()
        present_device(self.device)
        return self

    def check(self) -> None:
        """What a new run asks of the model before it writes anything: that it loads (on the
        CPU) and can be asked (`Model.check`: an endpoint answers).

        Raises:
            GenprobeError: it does not (a file that is no checkpoint, nothing at the URL).
        """
        model = replace(self, device="cpu").load()
        try:
            model.check()
        finally:
            model.close()

    def identity(self) -> dict[str, Any]:
        """What determines the model's answers (the checkpoint's bytes too): part of a run's
        hashed config."""
        identity = identity_fields(self)
        identity["decoding"] = self.decoding.identity()
        identity["fingerprint"] = fingerprint(self.spec)
        return identity

    @classmethod
    def from_identity(cls, identity: dict[str, Any]) -> ModelSettings:
        """The settings, less the fingerprint: a rebuilt identity takes the file's again."""
        fields = {k: v for k, v in identity.items() if k != "fingerprint"}
        return cls(**{**fields, "decoding": DecodingConfig.from_identity(fields["decoding"])})

    def runtime(self) -> dict[str, Any]:
        return {"device": self.device, "concurrency": self.concurrency}

    def with_beam(self, beam: int) -> ModelSettings:
        """These settings with a beam of at least `beam` (k candidates need a beam of k)."""
        if self.decoding.beam_size >= beam:
            return self
        return replace(self, decoding=replace(self.decoding, beam_size=beam))

    def load(self, min_beam: int = 1) -> Model:
        from genprobe.under_test.registry import load_model

        decoding = self.with_beam(min_beam).decoding.validated()
        return load_model(
            self.spec, decoding=decoding, device=self.device, deadline=self.deadline,
            temperature=self.temperature, cache_dir=self.cache_dir,
            concurrency=self.concurrency,
        )  # fmt: skip


class _Study(Protocol):
    """A study's config: a dataclass with the settings of its model under test."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def model(self) -> ModelSettings: ...


Configured = TypeVar("Configured", bound=_Study)


def sent_to_workers(config: Configured) -> Configured:
    """A study's config as its stage tasks are sent to workers in another directory or on
    another machine: the model's checkpoint and answer cache by absolute paths. Its run's
    identity is the config as given, so its hash does not depend on where the command ran."""
    from genprobe.under_test.registry import absolute_spec

    settings = config.model
    cache = settings.cache_dir and str(Path(settings.cache_dir).absolute())
    return replace(
        config, model=replace(settings, spec=absolute_spec(settings.spec), cache_dir=cache)
    )


def checkpoint_file(spec: str) -> Path | None:
    """The checkpoint file a `ckpt:`, `lc:` or `bundled:` spec names (a run directory's
    `model.pt`), or None for other kinds."""
    kind, _, argument = spec.partition(":")
    if kind not in ("ckpt", "lc", "bundled"):
        return None
    path = WEIGHTS / argument / "model.pt" if kind == "bundled" else Path(argument)
    return path / "model.pt" if kind == "ckpt" and path.is_dir() else path


def fingerprint(spec: str) -> str | None:
    """sha256 of a checkpoint named by a `ckpt:`, `lc:` or `bundled:` spec (None for other
    kinds, or a file that is not there: loading it will say so)."""
    path = checkpoint_file(spec)
    return file_digest(path) if path is not None and path.is_file() else None
