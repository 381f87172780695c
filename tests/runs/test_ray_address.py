"""The Ray cluster to join answers within seconds or is not joined: Ray itself retries a gone
one for about 14 minutes, deaf to Ctrl-C, saying only its own warnings. A stale address that
Ray recorded at an earlier `ray start` (a killed session's) gives way to a new local instance;
a cluster the user named (`--ray-address`, `auto`, RAY_ADDRESS) that does not answer is one
line. No cluster starts here: `ray.init` is replaced."""

import re
import socket
import threading
import time

import pytest

from genprobe.errors import GenprobeError, GenprobeWarning
from genprobe.runs import ray_executor
from genprobe.runs.ray_executor import RayExecutor

ray = pytest.importorskip("ray")


@pytest.fixture
def stale_record(tmp_path, monkeypatch):
    """Ray's address record (under RAY_TMPDIR) naming a loopback port where nothing listens,
    no Ray process on this machine, and Ray not started in this process; yields the port."""
    from ray._private import services

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{port}")
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(services, "_find_address_from_flag", lambda flag: [])  # `ps` finds none
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    services.find_gcs_addresses.cache_clear()
    yield port
    services.find_gcs_addresses.cache_clear()


@pytest.fixture
def inits(monkeypatch):
    """The addresses `ray.init` is called with (it starts nothing)."""
    called = []
    monkeypatch.setattr(ray, "init", lambda address=None, **kwargs: called.append(address))
    return called


def test_a_stale_recorded_instance_gives_way_to_a_new_local_one(stale_record, inits):
    started = time.monotonic()
    with pytest.warns(GenprobeWarning, match=rf"ray_current_cluster \(.*:{stale_record}\) does"):
        RayExecutor()._connect()
    assert inits == ["local"]  # not None: Ray would read the stale record again
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("how", ["auto", "environment", "client"])
def test_a_named_cluster_that_does_not_answer_is_one_line(
    how, stale_record, inits, cli, monkeypatch, tmp_path
):
    args = ["rewriting", "sweep", "--seeds", "1", "--backend", "ray"]
    if how == "auto":
        args += ["--ray-address", "auto"]
        said = rf"--ray-address auto: no Ray cluster answers at \S+:{stale_record}, the address "
    elif how == "environment":
        monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{stale_record}")
        said = rf"RAY_ADDRESS=127.0.0.1:{stale_record}: no Ray cluster answers at \S+:"
    else:  # a Ray Client server
        monkeypatch.setenv("RAY_ADDRESS", f"ray://127.0.0.1:{stale_record}")
        said = rf"RAY_ADDRESS=ray://127.0.0.1:{stale_record}: no Ray cluster answers there"
    started = time.monotonic()
    code, _, err = cli(*args, "--out", str(tmp_path / "run"))
    assert time.monotonic() - started < 10
    assert code == 2
    [line] = err.strip().splitlines()
    assert re.match(rf"genprobe: error: {said}", line), line
    assert "ray start --head" in line
    assert inits == []
    assert not (tmp_path / "run").exists()


def test_a_cluster_that_accepts_but_never_answers_is_not_waited_for(inits, monkeypatch):
    """Something else on a reused port, or a hung GCS: the socket connects, Ray's client
    would wait for minutes."""
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray_executor, "CONNECT_SECONDS", 0.2)
    released = threading.Event()

    class Silent:  # Ray's GCS client connecting to a port that never answers
        def __init__(self, address):
            released.wait(30)

    monkeypatch.setattr(ray._raylet, "GcsClient", Silent)
    with socket.socket() as listening:
        listening.bind(("127.0.0.2", 0))  # loopback that Ray keeps (127.0.0.1 it spells as the
        listening.listen()  # machine's network address)
        address = f"127.0.0.2:{listening.getsockname()[1]}"
        try:
            with pytest.raises(GenprobeError, match=r"accepted, but no Ray answer comes in 0\.2 s"):
                RayExecutor(address)._connect()
        finally:
            released.set()
    assert inits == []
