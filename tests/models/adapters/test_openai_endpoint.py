"""The OpenAI-compatible adapter against a small chat-completions server on 127.0.0.1:
parsing, retries with backoff, the concurrency limit, timeouts, and the on-disk cache."""

import asyncio

import pytest

pytest.importorskip("httpx")

from genprobe.errors import EndpointError
from genprobe.tasks.integration import parse_infix
from genprobe.tasks.integration.reading import read_expression
from genprobe.under_test.registry import load_model


def read(value):
    """As the CLI reads problems: infix in L&C's canonical shape."""
    return read_expression(value, canonical=True)


PROBLEMS = [read("2*x"), read("cos(x)")]


def test_answers_are_parsed_and_the_key_comes_from_the_environment(endpoint, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = endpoint()
    model = load_model(f"openai:tiny-model@{server.url}", retries=0)
    found = model.candidates(PROBLEMS, k=2)
    assert [c.answer for c in found[0]] == [parse_infix("x^2")] * 2
    assert [c.score for c in found[0]] == [0.0, -1.0]
    assert found[1][0].answer == parse_infix("sin(x)")
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-test"
    assert body["model"] == "tiny-model" and body["n"] == 2


def test_it_answers_inside_a_running_event_loop_as_in_a_notebook(endpoint):
    model = load_model(f"openai:tiny-model@{endpoint().url}", retries=0)

    async def notebook_cell():
        return model.candidates(PROBLEMS[:1], k=1)

    found = asyncio.run(notebook_cell())
    assert found[0][0].answer == parse_infix("x^2")


@pytest.mark.parametrize("status", [429, 503])
def test_retryable_failures_are_retried(endpoint, status):
    server = endpoint(fail_first=2, status=status)
    model = load_model(f"openai:m@{server.url}", retries=3, concurrency=1, backoff=0.01)
    found = model.candidates(PROBLEMS[:1], k=1)
    assert found[0][0].answer == parse_infix("x^2")
    assert len(server.requests) == 3


def test_a_client_error_is_not_retried(endpoint):
    server = endpoint(fail_first=1, status=400)
    model = load_model(f"openai:m@{server.url}", retries=3)
    with pytest.raises(EndpointError, match="HTTP 400"):
        model.candidates(PROBLEMS[:1], k=1)
    assert len(server.requests) == 1


def test_timeouts_end_in_an_endpoint_error(endpoint):
    server = endpoint(delay=0.5)
    model = load_model(f"openai:m@{server.url}", retries=1, timeout=0.05, backoff=0.01)
    with pytest.raises(EndpointError, match="2 attempts"):
        model.candidates(PROBLEMS[:1], k=1)


def test_concurrency_is_limited(endpoint):
    server = endpoint(delay=0.05)
    model = load_model(f"openai:m@{server.url}", concurrency=2)
    problems = [read(f"x^{n}") for n in range(2, 10)]
    assert len(model.candidates(problems, k=1)) == 8
    assert server.max_in_flight == 2


def test_a_rerun_is_answered_from_the_cache(endpoint, tmp_path):
    server = endpoint()
    model = load_model(f"openai:m@{server.url}", cache_dir=str(tmp_path / "cache"))
    first = model.candidates(PROBLEMS, k=1)
    assert len(server.requests) == 2
    again = load_model(f"openai:m@{server.url}", cache_dir=str(tmp_path / "cache"))
    assert again.candidates(PROBLEMS, k=1) == first
    assert len(server.requests) == 2
    again.candidates(PROBLEMS, k=2)  # a different request: not in the cache
    assert len(server.requests) == 4
