"""An OpenAI-compatible chat-completions endpoint as a model: `openai:MODEL@URL`.

Requests run concurrently (at most `concurrency` in flight) with a per-request timeout and
retries with exponential backoff on timeouts, connection errors, 429 and 5xx (a numeric
`Retry-After` is honoured). Each answer is cached on disk under a hash of the URL and the
request body, so a rerun with the same settings sends nothing. Answers are read with the safe
infix parser (`parse_infix`, which drops prose around the math); an answer it cannot read stays
raw text and the verifier judges it unparseable. The API key is read from the environment
(`OPENAI_API_KEY` by default) and is not part of the cache key.

httpx is an optional dependency (`pip install genprobe[openai]`), imported when used.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from genprobe.errors import ConfigError, EndpointError, GenprobeError
from genprobe.runs.atomic import write_text
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.infix import parse_infix
from genprobe.tasks.integration.under_test import Candidate, Model, problem_text

T = TypeVar("T")

DEFAULT_URL = "https://api.openai.com/v1"
SYSTEM_PROMPT = (
    "You are a calculus assistant. Answer with one antiderivative as a single expression in x, "
    "without the constant of integration and without explanation."
)


@dataclass(frozen=True)
class EndpointConfig:
    model: str
    base_url: str = DEFAULT_URL
    api_key_env: str = "OPENAI_API_KEY"  # the variable holding the key (none sent if unset)
    concurrency: int = 8  # requests in flight at once
    retries: int = 4  # further attempts after a retryable failure
    backoff: float = 1.0  # seconds before the first retry, doubled after each
    timeout: float = 60.0  # seconds per request
    temperature: float | None = None  # None: 0 for one candidate, 1 for several
    max_tokens: int = 512
    cache_dir: str | None = None  # None: no cache

    def validated(self) -> EndpointConfig:
        if self.concurrency < 1:
            raise ConfigError("concurrency", "at least 1", self.concurrency)
        if self.retries < 0:
            raise ConfigError("retries", "0 or more", self.retries)
        if not self.timeout > 0:
            raise ConfigError("timeout", "a positive number of seconds", self.timeout)
        return self


def prompt(problem: Expr) -> str:
    return f"Integrate with respect to x: {problem_text(problem)}"


class OpenAIModel(Model):
    def __init__(self, config: EndpointConfig) -> None:
        self.config = config.validated()
        self.name = f"openai:{config.model}@{config.base_url}"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, **asdict(self.config), "system_prompt": SYSTEM_PROMPT}

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
        answers = _run(self._answers(bodies))
        return [
            [_candidate(text, rank) for rank, text in enumerate(texts[:k])] for texts in answers
        ]

    async def _answers(self, bodies: list[dict[str, Any]]) -> list[list[str]]:
        import httpx

        key = os.environ.get(self.config.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        limit = asyncio.Semaphore(self.config.concurrency)
        async with httpx.AsyncClient(headers=headers, timeout=self.config.timeout) as client:

            async def one(body: dict[str, Any]) -> list[str]:
                cached = self._cache_file(body)
                if cached is not None and cached.exists():
                    return json.loads(cached.read_text(encoding="utf-8"))
                async with limit:
                    texts = await self._post(client, body)
                if cached is not None:
                    write_text(cached, json.dumps(texts))
                return texts

            return list(await asyncio.gather(*(one(body) for body in bodies)))

    def _cache_file(self, body: dict[str, Any]) -> Path | None:
        if self.config.cache_dir is None:
            return None
        request = json.dumps({"url": self.url, "body": body}, sort_keys=True)
        return Path(self.config.cache_dir) / f"{hashlib.sha256(request.encode()).hexdigest()}.json"

    @property
    def url(self) -> str:
        return self.config.base_url.rstrip("/") + "/chat/completions"

    async def _post(self, client: Any, body: dict[str, Any]) -> list[str]:
        import httpx

        delay = self.config.backoff
        problem = ""
        for attempt in range(self.config.retries + 1):
            if attempt:
                await asyncio.sleep(delay)
                delay *= 2
            try:
                response = await client.post(self.url, json=body)
            except (httpx.TimeoutException, httpx.TransportError) as error:
                problem = f"{type(error).__name__}: {error}"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                problem = f"HTTP {response.status_code}"
                delay = max(delay, _retry_after(response.headers.get("retry-after")))
                continue
            if response.status_code != 200:
                raise EndpointError(
                    f"{self.url}: HTTP {response.status_code}: {response.text[:200]}"
                )
            return _choice_texts(response, self.url)
        raise EndpointError(
            f"{self.url}: no answer after {self.config.retries + 1} attempts ({problem})"
        )


def _retry_after(value: str | None) -> float:
    try:
        return min(float(value), 60.0) if value is not None else 0.0
    except ValueError:
        return 0.0  # an HTTP date: keep the exponential backoff


def _choice_texts(response: Any, url: str) -> list[str]:
    try:
        choices = response.json()["choices"]
        return [str(choice["message"]["content"] or "") for choice in choices]
    except (ValueError, KeyError, TypeError) as error:
        raise EndpointError(f"{url}: unexpected response shape ({error!r})") from None


def _candidate(text: str, rank: int) -> Candidate:
    """Answers come in the endpoint's order, which gives no probabilities: score = -rank."""
    try:
        return Candidate(parse_infix(text), -float(rank))
    except GenprobeError:
        return Candidate(text, -float(rank))


def from_spec(target: str, **settings: Any) -> OpenAIModel:
    """`MODEL@URL` or `MODEL` (URL from $OPENAI_BASE_URL, else OpenAI's)."""
    model, at, url = target.partition("@")
    if not model:
        raise ConfigError(
            "openai: model", "'openai:MODEL' or 'openai:MODEL@URL'", f"openai:{target}"
        )
    base_url = url if at else os.environ.get("OPENAI_BASE_URL", DEFAULT_URL)
    return OpenAIModel(EndpointConfig(model=model, base_url=base_url, **settings))


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run to completion, also where an event loop is already running (a Jupyter notebook),
    in which case it runs on a loop of its own in another thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
