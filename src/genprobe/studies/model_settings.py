"""The settings of a model under test that the probe and the search share: a language model's
prompt grid (`hf:`, `openai:`) and an endpoint's settings (`openai:`), handed to the model as it
loads and refused, before it loads, for a model of another kind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from genprobe.errors import ConfigError, check_choice, finite
from genprobe.models.device import present_device
from genprobe.under_test.adapters.endpoint import ROUTES
from genprobe.under_test.adapters.prompted import PromptGrid
from genprobe.under_test.registry import MODELS, check_spec

# an endpoint's settings (`openai:`), each at the value that means "not given"
ENDPOINT = {"api": "chat", "cache_dir": None, "concurrency": None, "timeout": None, "retries": None}


@dataclass(frozen=True, kw_only=True)
class ModelUnderTestSettings:
    """The fields a config of a model under test (with its own `model` and `device`) inherits:
    a language model's members (`under_test.adapters.prompted.PromptGrid`) and an endpoint's
    settings; all but `api` say how requests are made, not what is answered (runtime)."""

    formats: int = 1
    shots: int = 0
    shot_draws: int = 1
    samples: int = 0
    prompt_seed: int = 0
    api: str = "chat"  # openai: the chat API, or the completions API (a base model)
    # openai: how requests are made (None: `EndpointConfig`'s defaults)
    concurrency: int | None = None
    timeout: float | None = None
    retries: int | None = None
    cache_dir: str | None = None  # None: `openai.default_cache_dir()`

    def prompts(self) -> PromptGrid:
        return PromptGrid(self.formats, self.shots, self.shot_draws, self.samples, self.prompt_seed)

    def model_settings(self) -> dict[str, Any]:
        """What the model under test is loaded with (`as_sequence_model`): a kind takes those
        of its settings it knows."""
        given = {name: getattr(self, name) for name in ENDPOINT}
        endpoint = {name: value for name, value in given.items() if value is not None}
        return {"device": self.device, "prompts": self.prompts(), **endpoint}

    def check_model_settings(self) -> None:
        """The prompt settings are a language model's, the endpoint settings an endpoint's:
        checked before the model loads.

        Raises:
            ConfigError: a setting the model's kind does not take, an unknown `api`, or a
                device this machine does not have.
            UnknownModelError, GenprobeError: as `check_spec`.
        """
        present_device(self.device)
        kind = check_spec(self.model)
        if "prompts" not in kind.settings and self.prompts() != PromptGrid():
            raise ConfigError(
                "--formats/--shots/--shot-draws/--samples/--prompt-seed",
                "left out for a model that is not a language model (hf:, openai:)", self.model
            )  # fmt: skip
        check_choice("api", self.api, ROUTES)
        given = [name for name, unset in ENDPOINT.items() if getattr(self, name) != unset]
        if refused := [name for name in given if name not in kind.settings]:
            raise ConfigError(
                "/".join("--" + name.replace("_", "-") for name in refused),
                "left out for a model that is not an OpenAI-compatible endpoint (openai:)",
                self.model,
            )


def check_sampling(
    model: str,
    k: int,
    temperature: float | None,
    option: str = "--model",
    named: str = "--temperature",
    task: str = "",
) -> None:
    """A temperature (the k candidates sampled, `SequenceModel.sampled`) is positive, comes with
    k of 2 or more, and asks a model that samples `task` ("": the model's own); None (beam
    search) always holds. `named`: the temperature's option in errors.

    Raises:
        ConfigError: it does not.
    """
    if temperature is None:
        return
    if not (finite(temperature) and temperature > 0):
        raise ConfigError(named, "a positive number", temperature)
    if k < 2:
        raise ConfigError(named, "with --k 2 or more (the samples drawn)", k)
    kind = check_spec(model, option)
    # integration is asked of a seq2seq network, or of an integration model that does not sample
    integration = task == "integration" or (not task and not kind.tokens)
    if not kind.samples or (integration and not kind.seq2seq):
        sampling = ", ".join(
            f"{name}:"
            for name, other in MODELS.items()
            if other.samples and (other.seq2seq or not integration)
        )
        asked = " the integration task" if integration and kind.samples else ""
        raise ConfigError(
            named, f"left out for a model that does not sample{asked} ({sampling} do)", model
        )
