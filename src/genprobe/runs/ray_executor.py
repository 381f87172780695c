"""Shards on a Ray cluster: the same stages, shards and run directory as the local executor.

Each worker is a Ray actor that makes the stage's `setup` once (a loaded model, a verifier pool)
and then runs shards; the driver writes every result as it arrives, exactly as locally. Ray
restarts an actor whose process or node died and retries the shard it was running
(`retries` times), so a killed worker costs that shard's work, never the run. Imported only
when `--backend ray` is asked for: Ray is the optional extra `genprobe[ray]`.

Shards get the driver's scratch path: on one machine, or with the run directory on a shared
file system (the usual cluster setup), a retried shard resumes from it; elsewhere it starts
over, with the same result.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genprobe.errors import ConfigError, GenprobeError, finite, warn
from genprobe.runs.executor import Executor, Result, Stage, Worker
from genprobe.runs.shards import Shard

INSTALL = "pip install 'genprobe[ray]'"
WAIT_SECONDS = 10  # how often a waiting driver checks that the kept actors still fit
# How long a Ray cluster has to accept a connection, and then to answer, before it counts as
# gone. Ray itself retries a gone cluster for about 14 minutes, deaf to Ctrl-C, printing only
# its own warnings (under its 5 s connect timeout, so none of them is printed before this).
CONNECT_SECONDS = 4.0


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise GenprobeError(f"--backend ray needs Ray: {INSTALL}") from None
    return ray


class RayExecutor(Executor):
    """Run shards on `workers` Ray actors, each holding `cpus` CPUs and, for stages that use the
    device (`Stage.needs_device`), `gpus` GPUs.

    `address`: None joins the cluster `RAY_ADDRESS` names, else the one Ray recorded at the
    last `ray start` here, else (none, or it does not answer) starts a Ray instance on this
    machine; "auto" joins a running cluster, "ray://host:port" a remote one; a cluster named
    that does not answer within CONNECT_SECONDS is a `GenprobeError`. `workers` None: as
    many actors as the cluster's CPUs (and GPUs) hold beside the actors kept for other stages.

    Used as a context manager, the executor keeps each stage's actors (and so their `setup`)
    until the block ends, so a study that alternates stages (a search: propose on the model's
    worker, verify on many) loads its model once. Kept actors hold their CPUs and GPUs; when a
    stage finds no room for one actor, or the cluster shrinks under the kept ones (a lost node),
    the least recently used stage's actors are released.
    """

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        cpus: float = 1,
        gpus: float = 0,
        retries: int = 3,
    ) -> None:
        if workers is not None and workers < 1:
            raise ConfigError("workers", "at least 1", workers)
        if not (finite(cpus) and finite(gpus) and cpus > 0 and gpus >= 0):
            raise ConfigError("cpus/gpus per worker", "cpus > 0 and gpus >= 0", (cpus, gpus))
        self.address, self.workers, self.cpus, self.gpus = address, workers, cpus, gpus
        self.retries = retries
        self._started = False  # whether this executor started Ray here (and so stops it)
        self._depth = 0  # nested `with` blocks: the outermost one releases
        self._checked = False  # whether `address` answered
        self._crews: dict[int, _Crew] = {}  # id(stage) -> its actors, least recently used first

    def __enter__(self) -> RayExecutor:
        self._connect()
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth:
            return
        for crew in list(self._crews.values()):
            self._release(crew)
        if self._started:
            import_ray().shutdown()
            self._started = False

    def map(
        self, stage: Stage, shards: Sequence[Shard], scratch: Callable[[Shard], Path]
    ) -> Iterator[Result]:
        if not shards:
            return
        ray = self._connect()
        crew = self._crew_for(stage, len(shards))
        todo = list(reversed(shards))
        running: dict[Any, tuple[Any, Shard]] = {}  # object ref -> (actor, shard)

        def submit(actor: Any) -> None:
            shard = todo.pop()
            running[actor.run.remote(shard, scratch(shard).absolute())] = (actor, shard)

        try:
            for actor in crew.actors[: len(shards)]:
                submit(actor)
            while running:
                ready, _ = ray.wait(list(running), num_returns=1, timeout=WAIT_SECONDS)
                if not ready:
                    self._fit_cluster(crew)  # a restarting actor may need kept ones' CPUs
                    continue
                actor, shard = running.pop(ready[0])
                outputs, seconds = _unwrap(ray, lambda ref=ready[0]: ray.get(ref))
                if todo:
                    submit(actor)
                elif running:
                    # Its CPUs go back to the cluster: a worker restarting after a lost node
                    # may be waiting for them.
                    crew.drop([actor])
                yield shard, outputs, seconds
        finally:
            for ref in running:  # an error or an interrupt: nobody would record these
                ray.cancel(ref)

    def runtime(self, stage: Stage) -> dict[str, Any]:
        ray = self._connect()
        actor = self._crew_for(stage, 1).actors[0]
        return {"backend": "ray", **_unwrap(ray, lambda: ray.get(actor.runtime.remote()))}

    @contextmanager
    def channel(self) -> Iterator[Any]:
        ray = self._connect()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        # on the driver's node, so that losing a worker node does not lose the channel
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        name = f"genprobe-channel-{uuid.uuid4().hex}"
        actor = ray.remote(num_cpus=0)(_Channel).options(name=name, scheduling_strategy=here)
        inbox = actor.remote()
        try:
            yield ChannelByName(name)
        finally:
            ray.kill(inbox)

    def _connect(self) -> Any:
        ray = import_ray()
        if ray.is_initialized():
            if not self._checked and self.address is not None:
                _bootstrap(self.address)  # an address given must answer, Ray started here or not
            self._checked = True
            return ray
        target = _bootstrap(self.address)
        self._checked = True
        try:
            ray.init(address=target, log_to_driver=False, configure_logging=False)
        except ConnectionError as error:
            raise GenprobeError(f"Ray at {target}: {error}") from None
        self._started = True
        return ray

    def _crew_for(self, stage: Stage, pending: int) -> _Crew:
        """The stage's crew with at least one actor and at most `pending`: kept actors first
        (their `setup` is made), then new ones up to `workers` or what fits beside the other
        kept crews, releasing those (least recently used first) when not even one fits."""
        gpus = self.gpus if stage.needs_device else 0
        crew = self._crews.pop(id(stage), None) or _Crew(stage, self.cpus, gpus)
        others = list(self._crews.values())
        self._crews[id(stage)] = crew
        totals = import_ray().cluster_resources()

        def room() -> int:
            return _fitting(_left(totals, self._crews.values()), crew.cpus, crew.gpus)

        for other in others:
            if len(crew.actors) + room() >= min(self.workers or 1, pending):
                break
            self._release(other)
        count = min(self.workers or max(1, len(crew.actors) + room()), pending)
        while len(crew.actors) < count:
            crew.actors.append(crew.actor(self.retries))
        return crew

    def _fit_cluster(self, running: _Crew) -> None:
        """Release the least recently used other crews while the kept actors hold more than the
        cluster has (it lost a node)."""
        totals = import_ray().cluster_resources()
        for crew in [c for c in self._crews.values() if c is not running]:
            left = _left(totals, self._crews.values())
            if min(left.values()) >= 0:
                return
            self._release(crew)

    def _release(self, crew: _Crew) -> None:
        crew.drop(list(crew.actors))
        self._crews.pop(id(crew.stage), None)


@dataclass
class _Crew:
    """A stage's actors and what each holds."""

    stage: Stage
    cpus: float
    gpus: float
    actors: list[Any] = field(default_factory=list)

    def actor(self, retries: int) -> Any:
        remote = import_ray().remote(
            num_cpus=self.cpus, num_gpus=self.gpus, max_restarts=retries,
            max_task_retries=retries,
        )(Worker)  # fmt: skip
        return remote.remote(self.stage)

    def drop(self, actors: list[Any]) -> None:
        """Close and end `actors`."""
        if not actors:
            return
        ray = import_ray()
        ray.wait([actor.close.remote() for actor in actors], num_returns=len(actors), timeout=30)
        for actor in actors:
            ray.kill(actor)
            self.actors.remove(actor)


def _left(totals: dict[str, float], crews: Iterable[_Crew]) -> dict[str, float]:
    """The cluster's CPUs and GPUs that `crews` do not hold (negative: more than it has)."""
    held = list(crews)
    return {
        "CPU": totals.get("CPU", 0) - sum(c.cpus * len(c.actors) for c in held),
        "GPU": totals.get("GPU", 0) - sum(c.gpus * len(c.actors) for c in held),
    }


class _Channel:
    """An actor holding a queue; async, so a waiting `get` does not block `put`."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()

    async def put(self, item: Any) -> None:
        await self.queue.put(item)

    async def get(self) -> Any:
        return await self.queue.get()


@dataclass
class ChannelByName:
    """`put`/`get` on a channel actor found by name. It travels as its name: an actor handle
    among a worker's constructor arguments would keep Ray from restarting the worker safely."""

    name: str

    def put(self, item: Any) -> None:
        ray = import_ray()
        ray.get(ray.get_actor(self.name).put.remote(item))

    def get(self) -> Any:
        ray = import_ray()
        return ray.get(ray.get_actor(self.name).get.remote())


def _bootstrap(address: str | None) -> str:
    """What to give `ray.init` for `address`: the cluster it names, as Ray finds it (`auto`,
    RAY_ADDRESS, the address Ray records at `ray start`), once it answers within
    CONNECT_SECONDS; "local" (a new instance on this machine) when no address was given and
    none is recorded or the recorded one is gone. A cluster given (`--ray-address`, `auto`,
    RAY_ADDRESS) that does not answer is a `GenprobeError` naming the address tried."""
    environment = os.environ.get("RAY_ADDRESS")
    client = address if address not in (None, "auto") else environment
    if client and "://" in client:  # a Ray Client server, ray://host:port
        if (problem := _no_answer(client.partition("://")[2], gcs=False)) is not None:
            given = f"--ray-address {address}" if client == address else f"RAY_ADDRESS={client}"
            raise GenprobeError(
                f"{given}: no Ray cluster answers there ({problem}); "
                "start one with `ray start --head`"
            )
        return client
    from ray._common.utils import get_ray_address_file
    from ray._private import services

    try:
        found = services.canonicalize_bootstrap_address(address)
    except (ConnectionError, ValueError) as error:  # `auto` finds none; a malformed address
        given = f"--ray-address {address}" if address is not None else f"RAY_ADDRESS={environment}"
        raise GenprobeError(f"{given}: {error}") from None
    if found is None:
        return "local"
    problem = _no_answer(found)
    if problem is None:
        return found
    record = get_ray_address_file(None)
    if address is None and not environment:
        warn(
            f"the Ray instance recorded in {record} ({found}) does not answer ({problem}); "
            "starting a new one for this run (`ray stop` clears the record)"
        )
        return "local"
    if address is None:
        given, instead = f"RAY_ADDRESS={environment}", "unset RAY_ADDRESS"
    else:
        given, instead = f"--ray-address {address}", "leave out --ray-address"
    if address == found:
        where = "there"
    elif environment or not _recorded(record, found):
        where = f"at {found}"
    else:
        where = f"at {found}, the address recorded in {record} (`ray stop` clears it)"
    raise GenprobeError(
        f"{given}: no Ray cluster answers {where} ({problem}); start one with "
        f"`ray start --head`, or {instead} to start one for this run"
    )


def _recorded(record: str, address: str) -> bool:
    """Whether the address file `record` names `address` (Ray spells this machine's loopback
    address as its network one when it reads it)."""
    try:
        text = Path(record).read_text().strip()
    except OSError:
        return False
    return text.rpartition(":")[2] == address.rpartition(":")[2]


def _no_answer(address: str, gcs: bool = True) -> str | None:
    """Why nothing answers at host:port within CONNECT_SECONDS, or None when something does:
    a socket connection, and with `gcs` a Ray GCS client's (which fails only after minutes, so
    it runs in a thread that is left behind when it takes too long)."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), CONNECT_SECONDS).close()
    except (OSError, ValueError) as error:
        return str(error) or type(error).__name__
    if not gcs:
        return None
    from ray._raylet import GcsClient

    failed: list[BaseException] = []

    def connect() -> None:
        try:
            GcsClient(address=address)
        except Exception as error:
            failed.append(error)

    thread = threading.Thread(target=connect, name="genprobe-ray-check", daemon=True)
    thread.start()
    thread.join(CONNECT_SECONDS)
    if thread.is_alive():
        return f"a connection is accepted, but no Ray answer comes in {CONNECT_SECONDS:g} s"
    if not failed:
        return None
    said = str(failed[0]).strip()
    return said.splitlines()[0] if said else type(failed[0]).__name__


def _fitting(resources: dict[str, float], cpus: float, gpus: float) -> int:
    """How many actors of `cpus` CPUs and `gpus` GPUs fit in `resources`."""
    count = int(max(0.0, resources["CPU"]) // cpus)
    if gpus:
        count = min(count, int(max(0.0, resources["GPU"]) // gpus))
    return count


def _unwrap(ray: Any, get: Callable[[], Any]) -> Any:
    """`get()`, with an error raised in a worker re-raised as itself (a ConfigError stays a
    ConfigError, and the CLI prints it as one line)."""
    try:
        return get()
    except ray.exceptions.RayTaskError as error:
        cause = error.cause
        raise (cause if isinstance(cause, BaseException) else error) from None
