"""The OpenAI-compatible adapter against a small chat-completions server on 127.0.0.1:
parsing, retries with backoff, the concurrency limit, timeouts, and the on-disk cache."""

import asyncio
import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("httpx")

from genprobe.errors import EndpointError
from genprobe.models.registry import load_model
from genprobe.tasks.integration import parse_infix
from genprobe.tasks.integration.reading import read_expression


def read(value):
    """As the CLI reads problems: infix in L&C's canonical shape."""
    return read_expression(value, canonical=True)


class Endpoint:
    """Answers `x^2` for 2*x and `sin(x)` otherwise; can fail or stall the first calls."""

    def __init__(self, fail_first=0, status=500, delay=0.0):
        self.fail_first, self.status, self.delay = fail_first, status, delay
        self.requests, self.in_flight, self.max_in_flight = [], 0, 0
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with endpoint.lock:
                    endpoint.requests.append((self.path, dict(self.headers), body))
                    failing = len(endpoint.requests) <= endpoint.fail_first
                    endpoint.in_flight += 1
                    endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
                time.sleep(endpoint.delay)
                with endpoint.lock:
                    endpoint.in_flight -= 1
                if failing:
                    self.send_response(endpoint.status)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    return
                question = body["messages"][-1]["content"]
                text = "So the answer is $x^2 + C$." if question.endswith("2*x") else "sin(x)"
                reply = {"choices": [{"message": {"content": text}}] * body["n"]}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                # the client may have given up (the timeout test)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint():
    servers = []

    def start(**kwargs):
        servers.append(Endpoint(**kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


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
