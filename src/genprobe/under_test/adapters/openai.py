"""An OpenAI-compatible endpoint as a model under test: `openai:MODEL@URL`, of every task.

Of the integration task, `OpenAIModel` asks for an antiderivative in a chat (one system and
one user message) and reads answers with the safe infix parser (`parse_infix`, which drops
prose around the math); an answer it cannot read stays raw text and the verifier judges it
unparseable. Of any other task, `OpenAICompleter` is the language model of a `PromptedModel`
(members: prompt format × few-shot draw × sample), which renders the prompts and reads the
answers strictly. Requests, retries, the cache and the API key: `endpoint.py`.

httpx is an optional dependency (`pip install genprobe[openai]`), imported when used.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from genprobe.errors import ConfigError, GenprobeError, ModelCapabilityError, check_choice
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.infix import parse_infix
from genprobe.tasks.integration.printing import problem_text
from genprobe.tasks.integration.task import IntegrationTask
from genprobe.tasks.task import Task
from genprobe.under_test.adapters.endpoint import DEFAULT_URL, ROUTES, Endpoint, EndpointConfig
from genprobe.under_test.adapters.integration_model import Candidate, Model
from genprobe.under_test.adapters.prompted import PromptedModel, PromptGrid

SYSTEM_PROMPT = (
    "You are a calculus assistant. Answer with one antiderivative as a single expression in x, "
    "without the constant of integration and without explanation."
)
METHODS = ("greedy", "sample", "beam")


def prompt(problem: Expr) -> str:
    return f"Integrate with respect to x: {problem_text(problem)}"


class OpenAIModel(Model):
    """The integration task's model: an antiderivative per problem, asked in a chat."""

    def __init__(self, config: EndpointConfig) -> None:
        self.endpoint = Endpoint(config)
        self.config = self.endpoint.config
        self.name = f"openai:{config.model}@{config.base_url}"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, **asdict(self.config), "system_prompt": SYSTEM_PROMPT}

    def check(self) -> None:
        self.endpoint.check()

    def request_body(self, problem: Expr, k: int) -> dict[str, Any]:
        temperature = self.config.temperature
        if temperature is None:
            temperature = 0.0 if k == 1 else 1.0
        return {
            "model": self.config.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": prompt(problem)},
            ],
            "temperature": temperature,
            "n": k,
            "max_tokens": self.config.max_tokens,
        }

    def candidates(self, problems: Sequence[Expr], k: int) -> list[list[Candidate]]:
        if k < 1:
            raise ConfigError("k", "at least 1", k)
        bodies = [self.request_body(problem, k) for problem in problems]
        answers = self.endpoint.texts(ROUTES["chat"], bodies)
        return [
            [_candidate(text, rank) for rank, text in enumerate(texts[:k])] for texts in answers
        ]

    @property
    def url(self) -> str:
        return self.endpoint.url(ROUTES["chat"])


class OpenAICompleter:
    """The endpoint as the language model of a `PromptedModel` (`prompted.Completer`): one
    request per prompt, the prompt alone as the user's message of a chat (`api="chat"`) or as
    the prompt of the legacy completions API (`api="completions"`).

    Greedy asks at temperature 0; a sample at its `temperature` (1 by default) with its `seed`,
    the member's or one per prompt (an endpoint that honours `seed` answers reproducibly). The
    API offers no beam search: k candidates ("beam") are `n = k` samples at temperature 1
    (seed 0), ranked in the order the endpoint returns them; an endpoint that ignores `n`
    returns fewer, and the missing ranks count as unparseable. It gives no log-probabilities of
    given answers (`can_score` False).
    """

    can_score = False
    can_sample = True

    def __init__(self, config: EndpointConfig, api: str = "chat") -> None:
        check_choice("api", api, ROUTES)
        self.endpoint, self.api = Endpoint(config), api
        self.model = config.model

    def check(self) -> None:
        self.endpoint.check()

    def complete(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        *,
        method: str = "greedy",
        seed: int | Sequence[int] | None = None,
        temperature: float = 1.0,
        beams: int = 1,
        stop: Sequence[str] | None = None,
    ) -> list[list[str]]:
        """Per prompt, the texts of the endpoint's choices (see the class).

        Raises:
            ConfigError: an unknown method, sampling without a seed, or a seed per prompt
                for another number of prompts.
            EndpointError: as `Endpoint.texts`.
        """
        check_choice("method", method, METHODS)
        if method == "sample" and seed is None:
            raise ConfigError("seed", "an integer when method is sample", seed)
        if seed is None or isinstance(seed, int):
            seeds = [0 if seed is None else seed] * len(prompts)
        elif len(seed) == len(prompts):
            seeds = list(seed)
        else:
            raise ConfigError("seed", f"an integer, or one per prompt ({len(prompts)})", len(seed))

        def sampling(i: int) -> dict[str, Any]:
            if method == "greedy":
                return {"temperature": 0.0, "n": 1}
            if method == "beam":
                return {"temperature": 1.0, "n": beams, "seed": seeds[i]}
            return {"temperature": temperature, "n": 1, "seed": seeds[i]}

        bodies = [
            {
                "model": self.model,
                **self._asked(text),
                "max_tokens": max_new_tokens,
                **sampling(i),
                **({"stop": list(stop)} if stop else {}),
            }
            for i, text in enumerate(prompts)
        ]
        return self.endpoint.texts(ROUTES[self.api], bodies)

    def logprob(self, prompts: Sequence[str], answers: Sequence[str]) -> np.ndarray:
        raise ModelCapabilityError(
            f"{self.endpoint.url(ROUTES[self.api])}: an OpenAI-compatible endpoint gives no "
            "log-probabilities of given answers here (hf:PATH does)"
        )

    def _asked(self, text: str) -> dict[str, Any]:
        if self.api == "chat":
            return {"messages": [{"role": "user", "content": text}]}
        return {"prompt": text}


def _candidate(text: str, rank: int) -> Candidate:
    """Answers come in the endpoint's order, which gives no probabilities: score = -rank."""
    try:
        return Candidate(parse_infix(text), -float(rank))
    except GenprobeError:
        return Candidate(text, -float(rank))


def default_cache_dir() -> str:
    """Where a language model's answers are cached unless told: $XDG_CACHE_HOME/genprobe/openai
    (~/.cache/genprobe/openai), so that a rerun or a resumed probe asks nothing twice."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return str(Path(root) / "genprobe" / "openai")


def from_spec(
    target: str,
    task: Task | None = None,
    prompts: PromptGrid | None = None,
    api: str = "chat",
    **settings: Any,
) -> OpenAIModel | PromptedModel:
    """`MODEL@URL` or `MODEL` (URL from $OPENAI_BASE_URL, else OpenAI's): of the integration
    task (no `task`, or an `IntegrationTask`) an `OpenAIModel`; of any other task a
    `PromptedModel` asking `task`'s inputs as `prompts` say, its answers cached in `cache_dir`
    (default: `default_cache_dir()`).

    Raises:
        ConfigError: no model named, an unknown `api`, or prompt settings or the completions
            API for integration.
    """
    model, at, url = target.partition("@")
    if not model:
        raise ConfigError(
            "openai: model", "'openai:MODEL' or 'openai:MODEL@URL'", f"openai:{target}"
        )
    base_url = url if at else os.environ.get("OPENAI_BASE_URL", DEFAULT_URL)
    if task is None or isinstance(task, IntegrationTask):
        if prompts not in (None, PromptGrid()):
            raise ConfigError(
                "--formats/--shots/--shot-draws/--samples/--prompt-seed",
                "left out for the integration task (it asks in one fixed prompt)",
                f"openai:{target}",
            )
        if api != "chat":
            raise ConfigError("api", "chat for the integration task (it asks in a chat)", api)
        return OpenAIModel(EndpointConfig(model=model, base_url=base_url, **settings))
    settings["cache_dir"] = settings.get("cache_dir") or default_cache_dir()
    config = EndpointConfig(model=model, base_url=base_url, **settings)
    return PromptedModel(OpenAICompleter(config, api), task, prompts or PromptGrid())
