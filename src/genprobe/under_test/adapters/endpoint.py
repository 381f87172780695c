"""Requests to an OpenAI-compatible endpoint, shared by its models under test (`openai.py`).

Requests run concurrently (at most `concurrency` in flight) with a per-request timeout and
retries with exponential backoff on timeouts, connection errors, 429 and 5xx (a numeric
`Retry-After` is honoured). Each answer is cached on disk under a hash of the URL and the
request body, so a rerun with the same settings sends nothing; a cache file holds the
answers' texts (a JSON list) and its request, the prompt in it: together they are the record
of what was asked and answered. The API key is read from the environment (`OPENAI_API_KEY` by
default) and is part of neither the cache key nor the record.

    endpoint = Endpoint(EndpointConfig("gpt-4o-mini", cache_dir="cache"))
    endpoint.texts("chat/completions", [{"model": "gpt-4o-mini", "messages": [...]}])

httpx is an optional dependency (`pip install genprobe[openai]`), imported when used.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from genprobe.errors import ConfigError, EndpointError, finite
from genprobe.runs.atomic import write_text

T = TypeVar("T")

DEFAULT_URL = "https://api.openai.com/v1"
ROUTES = {"chat": "chat/completions", "completions": "completions"}  # each API's route
CHECK_SECONDS = 10.0  # the longest `Endpoint.check` waits for any answer


@dataclass(frozen=True)
class EndpointConfig:
    model: str
    base_url: str = DEFAULT_URL
    api_key_env: str = "OPENAI_API_KEY"  # the variable holding the key (none sent if unset)
    concurrency: int = 8  # requests in flight at once
    retries: int = 4  # further attempts after a retryable failure
    backoff: float = 1.0  # seconds before the first retry, doubled after each
    timeout: float = 60.0  # seconds per request
    temperature: float | None = None  # integration: None: 0 for one candidate, 1 for several
    max_tokens: int = 512  # integration: tokens per answer
    cache_dir: str | None = None  # None: no cache

    def validated(self) -> EndpointConfig:
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError("openai: URL", "an http:// or https:// URL", self.base_url)
        if self.concurrency < 1:
            raise ConfigError("concurrency", "at least 1", self.concurrency)
        if self.retries < 0:
            raise ConfigError("retries", "0 or more", self.retries)
        if not (finite(self.timeout) and self.timeout > 0):
            raise ConfigError("timeout", "a positive number of seconds", self.timeout)
        return self


class Endpoint:
    """The endpoint at `config.base_url`: request bodies in, the texts of their choices out."""

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config.validated()

    def check(self) -> None:
        """That something answers HTTP at the base URL (any status will do), asked once before
        a new run is written: a mistyped host or port is told in seconds, not after every
        request's retries.

        Raises:
            EndpointError: nothing answers (refused, unknown host, no answer in time).
        """
        import httpx

        url = self.config.base_url
        try:
            httpx.get(url, timeout=min(self.config.timeout, CHECK_SECONDS))
        except httpx.TransportError as error:  # timeouts included
            raise EndpointError(
                f"{url}: nothing answers ({type(error).__name__}: {error})"
            ) from None

    def url(self, route: str) -> str:
        return self.config.base_url.rstrip("/") + "/" + route

    def texts(self, route: str, bodies: list[dict[str, Any]]) -> list[list[str]]:
        """Per body, the texts of the choices answered at `route` ("chat/completions" or
        "completions"), in the endpoint's order.

        Raises:
            EndpointError: a request refused (4xx but 429), failing after every retry, or
                answered in an unexpected shape; the message names the URL and the status.
        """
        return _run(self._texts(self.url(route), bodies))

    async def _texts(self, url: str, bodies: list[dict[str, Any]]) -> list[list[str]]:
        import httpx

        key = os.environ.get(self.config.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        limit = asyncio.Semaphore(self.config.concurrency)
        async with httpx.AsyncClient(headers=headers, timeout=self.config.timeout) as client:

            async def one(body: dict[str, Any]) -> list[str]:
                cached = self._cache_file(url, body)
                if cached is not None and cached.exists():
                    return _cached_texts(cached)
                async with limit:
                    texts = await self._post(client, url, body)
                if cached is not None:
                    record = {"texts": texts, "url": url, "body": body}
                    write_text(cached, json.dumps(record))
                return texts

            # every request runs to its end, so that all answers are cached before an error
            answers = await asyncio.gather(*(one(body) for body in bodies), return_exceptions=True)
            for answer in answers:
                if isinstance(answer, BaseException):
                    raise answer
            return answers  # type: ignore[return-value]

    def _cache_file(self, url: str, body: dict[str, Any]) -> Path | None:
        if self.config.cache_dir is None:
            return None
        request = json.dumps({"url": url, "body": body}, sort_keys=True)
        return Path(self.config.cache_dir) / f"{hashlib.sha256(request.encode()).hexdigest()}.json"

    async def _post(self, client: Any, url: str, body: dict[str, Any]) -> list[str]:
        import httpx

        delay = self.config.backoff
        problem = ""
        for attempt in range(self.config.retries + 1):
            if attempt:
                await asyncio.sleep(delay)
                delay *= 2
            try:
                response = await client.post(url, json=body)
            except (httpx.TimeoutException, httpx.TransportError) as error:
                problem = f"{type(error).__name__}: {error}"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                problem = f"HTTP {response.status_code}"
                delay = max(delay, _retry_after(response.headers.get("retry-after")))
                continue
            if response.status_code != 200:
                raise EndpointError(f"{url}: HTTP {response.status_code}: {response.text[:200]}")
            return _choice_texts(response, url)
        raise EndpointError(
            f"{url}: no answer after {self.config.retries + 1} attempts ({problem})"
        )


def _cached_texts(path: Path) -> list[str]:
    """The texts of a cache file: a record, or a bare list as genprobe wrote them before."""
    stored = json.loads(path.read_text(encoding="utf-8"))
    return stored["texts"] if isinstance(stored, dict) else stored


def _retry_after(value: str | None) -> float:
    try:
        return min(float(value), 60.0) if value is not None else 0.0
    except ValueError:
        return 0.0  # an HTTP date: keep the exponential backoff


def _choice_texts(response: Any, url: str) -> list[str]:
    """A chat choice's message content, or a completions choice's text."""
    try:
        choices = response.json()["choices"]
        return [
            str((choice["message"]["content"] if "message" in choice else choice["text"]) or "")
            for choice in choices
        ]
    except (ValueError, KeyError, TypeError) as error:
        raise EndpointError(f"{url}: unexpected response shape ({error!r})") from None


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run to completion, also where an event loop is already running (a Jupyter notebook),
    in which case it runs on a loop of its own in another thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
