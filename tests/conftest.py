"""Fixtures shared by the whole suite: a cache directory of its own, the CLI entry point, tiny
checkpoints (random, trained, in Lample & Charton's layout), a validation file, a local
OpenAI-compatible endpoint, tiny sweeps."""

import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import torch
from helpers import save_random_transformer, write_validation
from hypothesis import settings

from genprobe.cli import main
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig

# spawned pool workers import test helpers (helpers.py, py: models) by module name
sys.path.insert(0, str(Path(__file__).parent))

# Property tests try the same examples on every run, so that a CI run passes or fails by the
# code, not by the draw; HYPOTHESIS_PROFILE=explore draws new ones.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


CACHE = pytest.StashKey[str]()


def pytest_configure(config):
    """Caches (the suite cache) go to a directory of this session, never the user's: set before
    collection, so the commands tests start in subprocesses inherit it too; so does the thread
    count of a pytest-xdist worker."""
    config.stash[CACHE] = tempfile.mkdtemp(prefix="genprobe-test-cache-")
    os.environ["GENPROBE_CACHE"] = config.stash[CACHE]
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:  # `make test`: each pytest-xdist worker gets its share of the cores
        share = _pin_to_a_share(int(workers), int(os.environ["PYTEST_XDIST_WORKER"][2:]))
        # torch's threads spin while they wait: with more of them than cores, a test of the
        # trainer took 178 s instead of 12 s on 2 cores
        os.environ["OMP_NUM_THREADS"] = str(share)  # for the processes tests start
        torch.set_num_threads(share)


def _pin_to_a_share(workers: int, index: int) -> int:
    """Run this pytest-xdist worker, and every process it starts, on its share of the cores
    (so genprobe's "one worker process per CPU" defaults see that share: on 2 cores and 2
    pytest workers, a sweep trains in its own process instead of starting two that each import
    torch; tests that ask for processes still get them). Returns the share's size."""
    if not hasattr(os, "sched_setaffinity"):
        return max(1, (os.cpu_count() or 1) // workers)
    cpus = sorted(os.sched_getaffinity(0))
    size = max(1, len(cpus) // workers)
    start = (index * size) % len(cpus)
    os.sched_setaffinity(0, cpus[start : start + size])
    return size


def pytest_unconfigure(config):
    shutil.rmtree(config.stash[CACHE], ignore_errors=True)


@pytest.fixture
def cli(capsys):
    """Run `genprobe ARGV…` through the real entry point: (exit code, stdout, stderr)."""

    def run(*argv):
        code = 0
        try:
            main(list(argv))
        except SystemExit as exit_:
            code = exit_.code
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    """A tiny random-weight transformer over L&C's vocabulary, saved as `ckpt:` reads it."""
    return save_random_transformer(tmp_path_factory.mktemp("ckpt") / "model.pt")


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


@pytest.fixture(scope="session")
def tiny_sweep():
    """A factory of sweep configs that train for seconds: one epoch on 200 examples."""
    from genprobe.studies.seed_sensitivity import SweepConfig
    from genprobe.training.trainer import TrainConfig

    def make(seeds, train=None, **kwargs) -> SweepConfig:
        return SweepConfig(
            seeds=seeds,
            train_size=200,
            validation_size=20,
            suite_size=12,
            train=train or TrainConfig(max_epochs=1),
            **kwargs,
        )

    return make


@pytest.fixture(scope="session")
def strong_sweep(tiny_sweep, tmp_path_factory):
    """Two MLP seeds of modular addition (p = 23) trained for 300 steps: right on most of
    their training pairs."""
    from genprobe.models.architectures.mlp import MLPConfig
    from genprobe.studies.seed_sensitivity import run_sweep
    from genprobe.tasks.registry import load_task
    from genprobe.training.trainer import TrainConfig

    config = tiny_sweep(
        seeds=(1, 2),
        task=load_task("binary_operation", {"p": 23}),
        model=MLPConfig(hidden=32),
        train=TrainConfig(steps=300, lr=0.01, optimizer="adamw", batch_size=16),
    )
    return run_sweep(config, tmp_path_factory.mktemp("strong") / "run")


@pytest.fixture(scope="module")
def validation(tmp_path_factory):
    """A tiny validation file in L&C's format: short problems SymPy integrates."""
    return write_validation(tmp_path_factory.mktemp("data") / "tiny.valid")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, validation):
    """A transformer trained for a few steps by `integration train`: it scores candidates."""
    from genprobe.cli import main

    out = tmp_path_factory.mktemp("model") / "run"
    args = [
        "integration", "train", "--data", str(validation), "--out", str(out), "--epochs", "2",
        "--epoch-size", "16", "--batch-size", "4", "--valid-size", "2", "--warmup", "2",
        "--max-len", "40", "--device", "cpu",
    ]  # fmt: skip
    try:
        main(args)
    except SystemExit as done:
        assert done.code == 0
    return out


@pytest.fixture
def lc_checkpoint(tmp_path):
    """A random tiny network saved in Lample & Charton's checkpoint layout (for `lc:`)."""
    import torch

    torch.manual_seed(0)
    config = TransformerConfig(dim=16, n_enc_layers=1, n_dec_layers=1, n_heads=2, max_positions=64)
    network = Seq2SeqTransformer(config)
    path = tmp_path / "lc.pth"
    torch.save(
        {"encoder": network.encoder.state_dict(), "decoder": network.decoder.state_dict()}, path
    )
    return path
