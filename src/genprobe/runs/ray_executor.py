"""Shards on a Ray cluster: the same tasks, shards and run directory as the local executor.

Each worker is a Ray actor that makes the task's `setup` once (a loaded model, a verifier pool)
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
import socket
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genprobe.errors import ConfigError, GenprobeError
from genprobe.runs.executor import Executor, Result, StageTask, Worker
from genprobe.runs.shards import Shard

INSTALL = "pip install 'genprobe[ray]'"
WAIT_SECONDS = 10  # how often a waiting driver checks that the kept actors still fit


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise GenprobeError(f"--backend ray needs Ray: {INSTALL}") from None
    return ray


class RayExecutor(Executor):
    """Run shards on `workers` Ray actors, each holding `cpus` CPUs and, for tasks that use the
    device (`StageTask.needs_device`), `gpus` GPUs.

    `address`: None starts a Ray instance on this machine (or joins the one `RAY_ADDRESS`
    names), "auto" joins a running cluster, "ray://host:port" a remote one. `workers` None: as
    many actors as the cluster's CPUs (and GPUs) hold beside the actors kept for other tasks.

    Used as a context manager, the executor keeps each task's actors (and so their `setup`)
    until the block ends, so a study that alternates stages (a search: propose on the model's
    worker, verify on many) loads its model once. Kept actors hold their CPUs and GPUs; when a
    task finds no room for one actor, or the cluster shrinks under the kept ones (a lost node),
    the least recently used task's actors are released.
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
        if cpus <= 0 or gpus < 0:
            raise ConfigError("cpus/gpus per worker", "cpus > 0 and gpus >= 0", (cpus, gpus))
        self.address, self.workers, self.cpus, self.gpus = address, workers, cpus, gpus
        self.retries = retries
        self._started = False  # whether this executor started Ray here (and so stops it)
        self._depth = 0  # nested `with` blocks: the outermost one releases
        self._checked = False  # whether `address` answered
        self._crews: dict[int, _Crew] = {}  # id(task) -> its actors, least recently used first

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
        self, task: StageTask, shards: Sequence[Shard], scratch: Callable[[Shard], Path]
    ) -> Iterator[Result]:
        if not shards:
            return
        ray = self._connect()
        crew = self._crew_for(task, len(shards))
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

    def runtime(self, task: StageTask) -> dict[str, Any]:
        ray = self._connect()
        actor = self._crew_for(task, 1).actors[0]
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
        if not self._checked:
            _check_reachable(self.address)
            self._checked = True
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, log_to_driver=False, configure_logging=False)
            except ConnectionError as error:
                raise GenprobeError(f"--ray-address {self.address}: {error}") from None
            self._started = True
        return ray

    def _crew_for(self, task: StageTask, pending: int) -> _Crew:
        """The task's crew with at least one actor and at most `pending`: kept actors first
        (their `setup` is made), then new ones up to `workers` or what fits beside the other
        kept crews, releasing those (least recently used first) when not even one fits."""
        gpus = self.gpus if task.needs_device else 0
        crew = self._crews.pop(id(task), None) or _Crew(task, self.cpus, gpus)
        others = list(self._crews.values())
        self._crews[id(task)] = crew
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
        self._crews.pop(id(crew.task), None)


@dataclass
class _Crew:
    """A task's actors and what each holds."""

    task: StageTask
    cpus: float
    gpus: float
    actors: list[Any] = field(default_factory=list)

    def actor(self, retries: int) -> Any:
        remote = import_ray().remote(
            num_cpus=self.cpus, num_gpus=self.gpus, max_restarts=retries,
            max_task_retries=retries,
        )(Worker)  # fmt: skip
        return remote.remote(self.task)

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


def _check_reachable(address: str | None) -> None:
    """Refuse an address where nothing listens at once: Ray itself would retry for minutes."""
    if address is None or address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except (OSError, ValueError) as error:
        raise GenprobeError(
            f"--ray-address {address}: no Ray cluster answers there ({error}); "
            "start one with `ray start --head`"
        ) from None


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
