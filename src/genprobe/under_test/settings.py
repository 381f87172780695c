"""A model under test as a run of any study records it: the spec, how it decodes or is asked,
and what only says where it ran.

A run's identity holds what changes the model's answers (the spec, a fingerprint of the
checkpoint's bytes, the decoding settings, the CAS deadline, the sampling temperature, a
language model's prompt grid and API); the device, the answer cache and how an endpoint's
requests are made are runtime facts, recorded but not hashed, so a run started on a GPU can be
finished on a CPU.

The integration studies (brittleness, SAGGA) load the model as an integration `Model`
(`load`) and take every setting, each kind those it knows; the studies of token tasks (the
probe, the search, a language model's seed run) load it as a `SequenceModel`
(`sequence_model`), decoding it by their own k, and refuse a setting its kind does not take.

Example:
    settings = ModelSettings(ModelSpec.parse("ckpt:runs/bwd"), DecodingConfig(beam_size=10))
    model = settings.load(min_beam=50)
    asked = ModelSettings(ModelSpec.parse("hf:models/lm"), prompts=PromptGrid(formats=4))
    asked.sequence_model(load_task("addition"))
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Protocol, TypeVar

from genprobe.decoding.config import DecodingConfig
from genprobe.errors import ConfigError, check_choice
from genprobe.models.device import present_device
from genprobe.runs.config import Form, Recorded
from genprobe.under_test.adapters.endpoint import ROUTES
from genprobe.under_test.adapters.prompted import PromptGrid
from genprobe.under_test.registry import ModelSpec

if TYPE_CHECKING:
    from genprobe.tasks.task import Task
    from genprobe.under_test.adapters.integration_model import Model
    from genprobe.under_test.sequences import SequenceModel

# an endpoint's settings (`openai:`), each at the value that means "not given"
ENDPOINT = {"api": "chat", "cache_dir": None, "concurrency": None, "timeout": None, "retries": None}
# how an integration model decodes: left to a study of a token task's own k
DECODING = {"decoding": DecodingConfig(), "deadline": 5.0, "temperature": None}
PROMPTS = "--formats/--shots/--shot-draws/--samples/--prompt-seed"
# a model's spec recorded as its text, read back as it was (`ModelSpec.read`)
SpecRef = Annotated[ModelSpec, Form(str, ModelSpec.read)]


@dataclass(frozen=True)
class ModelSettings(Recorded):
    """A `genprobe.runs.config.RunConfig`, the `model` of every study's config."""

    RUNTIME: ClassVar[tuple[str, ...]] = (
        "device",
        "cache_dir",
        "concurrency",
        "timeout",
        "retries",
    )
    # a language model's settings, added after integration runs existed (which hold them at
    # their defaults: `validated_as_model`)
    ADDED_DEFAULTS: ClassVar[dict[str, Any]] = {"prompts": asdict(PromptGrid()), "api": "chat"}
    spec: SpecRef
    # an integration model's (brittleness, SAGGA): how a seq2seq network decodes, SymPy's
    # seconds per problem, an endpoint's sampling temperature (None: the endpoint's)
    decoding: DecodingConfig = field(default_factory=DecodingConfig)
    deadline: float = 5.0
    temperature: float | None = None
    # a language model's, asked a token task (hf:, openai:): its members, and an endpoint's API
    # (chat, or completions: a base model)
    prompts: PromptGrid = field(default_factory=PromptGrid)
    api: str = "chat"
    device: str = "cpu"
    # openai: how requests are made (None: `EndpointConfig`'s defaults); the answer cache
    # (None: none for integration, `openai.default_cache_dir()` for a token task)
    cache_dir: str | None = None
    concurrency: int | None = None
    timeout: float | None = None
    retries: int | None = None

    def validated(self) -> ModelSettings:
        """Checked as every study asks: the decoding settings, the API, the device.

        Raises:
            ConfigError: bad decoding settings, an unknown `api`, or a device this machine
                does not have.
        """
        self.decoding.validated()
        check_choice("api", self.api, ROUTES)
        present_device(self.device)
        return self

    def validated_as_model(self) -> ModelSettings:
        """`validated`, as an integration study loads the model (`load`): any kind takes every
        setting, ignoring those it does not know, but a language model's prompt grid and API.

        Raises:
            ConfigError: as `validated`, or a prompt grid or API other than chat.
        """
        self.validated()
        if self.prompts != PromptGrid():
            raise ConfigError(PROMPTS, "left out for the integration task", str(self.spec))
        if self.api != "chat":
            raise ConfigError("api", "chat for the integration task (it asks in a chat)", self.api)
        return self

    def validated_as_sequence_model(self, task: Task | None = None) -> ModelSettings:
        """`validated`, before a study of a token task loads the model (`sequence_model`): the
        prompt settings are a language model's, the endpoint settings an endpoint's, and the
        decoding is the study's (by its k), but for an integration model asked `task` (the
        integration task), which may decode by its own settings (a brittleness run's beam).

        Raises:
            ConfigError: as `validated`, a setting the model's kind does not take, or a
                decoding setting.
        """
        self.validated()
        kind = self.spec.kind
        if "prompts" not in kind.settings and self.prompts != PromptGrid():
            raise ConfigError(
                PROMPTS, "left out for a model that is not a language model (hf:, openai:)",
                str(self.spec),
            )  # fmt: skip
        given = [name for name, unset in ENDPOINT.items() if getattr(self, name) != unset]
        if refused := [name for name in given if name not in kind.settings]:
            raise ConfigError(
                "/".join("--" + name.replace("_", "-") for name in refused),
                "left out for a model that is not an OpenAI-compatible endpoint (openai:)",
                str(self.spec),
            )
        decodes_itself = task is not None and not self.spec.answers_tokens(task)
        if not decodes_itself and (decoding := self._decoding()):
            raise ConfigError(
                "/".join(decoding), "left out: a study of a token task decodes by its --k",
                str(self.spec),
            )  # fmt: skip
        return self

    def check(self) -> None:
        """What a new integration run asks of the model before it writes anything: that it
        loads (on the CPU) and can be asked (`Model.check`: an endpoint answers).

        Raises:
            GenprobeError: it does not (a file that is no checkpoint, nothing at the URL).
        """
        model = replace(self, device="cpu").load()
        try:
            model.check()
        finally:
            model.close()

    def identity(self) -> dict[str, Any]:
        """What determines an integration model's answers, the fingerprint of the checkpoint's
        bytes too: the `model` of the brittleness and SAGGA identities."""
        return {**super().identity(), "fingerprint": self.spec.fingerprint()}

    @classmethod
    def from_identity(cls, identity: dict[str, Any]) -> ModelSettings:
        """The settings, less the fingerprint: a rebuilt identity takes the file's again."""
        return super().from_identity({k: v for k, v in identity.items() if k != "fingerprint"})

    def flat_identity(self) -> dict[str, Any]:
        """What determines a model's answers as a study of a token task records it: beside the
        study's own settings, at the top of its identity (the form of runs made before the
        settings were one object), its decoding left to the study."""
        grid = self.prompts
        return {
            "model": str(self.spec), "formats": grid.formats, "shots": grid.shots,
            "shot_draws": grid.shot_draws, "samples": grid.samples, "prompt_seed": grid.seed,
            "api": self.api,
        }  # fmt: skip

    @classmethod
    def from_flat_identity(cls, identity: dict[str, Any]) -> tuple[ModelSettings, dict[str, Any]]:
        """The settings a `flat_identity` holds among a study's (each at its default where it
        is left out), and the study's own."""
        own = dict(identity)
        grid = PromptGrid(
            own.pop("formats", 1), own.pop("shots", 0), own.pop("shot_draws", 1),
            own.pop("samples", 0), own.pop("prompt_seed", 0),
        )  # fmt: skip
        spec = ModelSpec.read(own.pop("model"))
        return cls(spec, prompts=grid, api=own.pop("api", "chat")), own

    def runtime(self) -> dict[str, Any]:
        return {"device": self.device, "concurrency": self.concurrency}

    def absolute(self) -> ModelSettings:
        """These settings as they are sent to workers in another directory or on another
        machine: the model's checkpoint, folder or run directory and the answer cache by
        absolute paths."""
        cache = self.cache_dir and str(Path(self.cache_dir).absolute())
        return replace(self, spec=self.spec.absolute(), cache_dir=cache)

    def with_beam(self, beam: int) -> ModelSettings:
        """These settings with a beam of at least `beam` (k candidates need a beam of k)."""
        if self.decoding.beam_size >= beam:
            return self
        return replace(self, decoding=replace(self.decoding, beam_size=beam))

    def load(self, min_beam: int = 1) -> Model:
        """The model as an integration study asks it."""
        decoding = self.with_beam(min_beam).decoding.validated()
        return self.spec.load(
            decoding=decoding, device=self.device, deadline=self.deadline,
            temperature=self.temperature, **self._endpoint(),
        )  # fmt: skip

    def sequence_model(self, task: Task | None, device: str | None = None) -> SequenceModel:
        """The model as a study of a token task asks it `task` (None: its own), decoding by
        the study's k (`as_sequence_model`) or, an integration model given decoding settings,
        by those, on `device` (None: the settings')."""
        from genprobe.under_test.adapters.integration_tokens import as_sequence_model

        own = {name: getattr(self, name) for name in self._decoding()}
        return as_sequence_model(
            self.spec, task, device=device or self.device, prompts=self.prompts, api=self.api,
            **own, **self._endpoint(),
        )  # fmt: skip

    def _decoding(self) -> list[str]:
        """The decoding settings given (those not at `DECODING`'s "not given")."""
        return [name for name, unset in DECODING.items() if getattr(self, name) != unset]

    def _endpoint(self) -> dict[str, Any]:
        """The endpoint's settings given (the others are `EndpointConfig`'s defaults)."""
        names = ("cache_dir", "concurrency", "timeout", "retries")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


class _Study(Protocol):
    """A study's config: a dataclass with the settings of its model under test."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def model(self) -> ModelSettings: ...


Configured = TypeVar("Configured", bound=_Study)


def sent_to_workers(config: Configured) -> Configured:
    """A study's config as its stages are sent to workers in another directory or on
    another machine (`ModelSettings.absolute`). Its run's identity is the config as given, so
    its hash does not depend on where the command ran."""
    return replace(config, model=config.model.absolute())
