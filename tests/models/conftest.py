"""A real OpenAI-compatible server on localhost: `transformers serve` on the tiny GPT-2 of
tests/helpers.py, and a proxy in front of it that counts requests and can fail them."""

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import save_tiny_gpt2

SERVE_TIMEOUT = 120.0  # seconds for the server to load and answer /health
CHAT_TEMPLATE = "{% for message in messages %}{{ message['content'] }}{% endfor %}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def served_lm(tmp_path_factory):
    """(folder of the model `tiny`, the server's /v1 URL). The model's chat template passes
    the user's message on verbatim, so a chat asks exactly the prompt."""
    pytest.importorskip("transformers")
    for package in ("fastapi", "uvicorn", "openai"):
        pytest.importorskip(
            package, reason="transformers serve needs pip install 'genprobe[serve]'"
        )
    from transformers import AutoTokenizer

    root = tmp_path_factory.mktemp("served")
    folder = save_tiny_gpt2(root / "tiny", positions=512)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    port = _free_port()
    log = (root / "serve.log").open("w")
    # run in the model's parent folder: the request's model name "tiny" is the folder
    command = [sys.executable, "-m", "transformers.cli.transformers", "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    server = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_healthy(url, server, root / "serve.log")
        yield folder, f"{url}/v1"
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _wait_until_healthy(url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + SERVE_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(
                f"transformers serve exited ({server.returncode}): {log.read_text()[-2000:]}"
            )
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(
        f"transformers serve answered no /health in {SERVE_TIMEOUT:.0f} s: "
        + log.read_text()[-2000:]
    )


class Proxy:
    """Forwards POSTs to `target` and records their bodies; after `answer_first` forwarded
    requests (None: no limit) it answers `status` instead. Each request waits `delay` seconds
    first; `most_in_flight` is the most requests it held at once."""

    def __init__(self, target: str) -> None:
        self.target, self.bodies, self.answer_first, self.status = target, [], None, 503
        self.delay, self.in_flight, self.most_in_flight = 0.0, 0, 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                data = self.rfile.read(int(self.headers["Content-Length"]))
                with proxy.lock:
                    proxy.in_flight += 1
                    proxy.most_in_flight = max(proxy.most_in_flight, proxy.in_flight)
                time.sleep(proxy.delay)
                with proxy.lock:
                    failing = (
                        proxy.answer_first is not None and len(proxy.bodies) >= proxy.answer_first
                    )
                    if not failing:
                        proxy.bodies.append((self.path, json.loads(data)))
                if failing:
                    self._reply(proxy.status, b"{}")
                    return
                request = urllib.request.Request(
                    proxy.target + self.path, data, {"Content-Type": "application/json"}
                )
                try:
                    with urllib.request.urlopen(request, timeout=60) as response:
                        self._reply(response.status, response.read())
                except urllib.error.HTTPError as error:
                    self._reply(error.code, error.read())

            def _reply(self, status, data):
                with proxy.lock:  # before the client can have its answer and send the next
                    proxy.in_flight -= 1
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    # the client stopped waiting (its timeout): the server's traceback would
                    # land in the stderr the tests read, as if genprobe had printed it
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy(served_lm):
    """A fresh counting proxy in front of the served model."""
    front = Proxy(served_lm[1].removesuffix("/v1"))
    yield front
    front.close()
