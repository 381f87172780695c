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
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genprobe.errors import ConfigError, GenprobeError
from genprobe.runs.executor import Executor, Result, StageTask
from genprobe.runs.shards import Outputs, Shard

INSTALL = "pip install 'genprobe[ray]'"


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise GenprobeError(f"--backend ray needs Ray: {INSTALL}") from None
    return ray


class RayExecutor(Executor):
    """Run shards on `workers` Ray actors, each holding `cpus` CPUs and `gpus` GPUs.

    `address`: None starts a Ray instance on this machine (or joins the one `RAY_ADDRESS`
    names), "auto" joins a running cluster, "ray://host:port" a remote one. `workers` None: as
    many actors as the cluster's CPUs (and GPUs) hold. The actors of the latest task live until
    another task comes or the executor's block ends, so a study that runs one shard per call
    (a search, generation by generation) loads its model once; use it as a context manager.
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
        self._task: StageTask | None = None
        self._actors: list[Any] = []  # the task's

    def __enter__(self) -> RayExecutor:
        self._connect()
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth:
            return
        self._drop(list(self._actors))
        self._task = None
        if self._started:
            import_ray().shutdown()
            self._started = False

    def map(
        self, task: StageTask, shards: Sequence[Shard], scratch: Callable[[Shard], Path]
    ) -> Iterator[Result]:
        if not shards:
            return
        ray = self._connect()
        actors = self._actors_for(task, len(shards))
        todo = list(reversed(shards))
        running: dict[Any, tuple[Any, Shard]] = {}  # object ref -> (actor, shard)

        def submit(actor: Any) -> None:
            shard = todo.pop()
            running[actor.run.remote(shard, scratch(shard).absolute())] = (actor, shard)

        try:
            for actor in actors:
                submit(actor)
            while running:
                [ready], _ = ray.wait(list(running), num_returns=1)
                actor, shard = running.pop(ready)
                outputs, seconds = _unwrap(ray, lambda ref=ready: ray.get(ref))
                if todo:
                    submit(actor)
                elif running:
                    # Its CPUs go back to the cluster: a worker restarting after a lost node
                    # may be waiting for them.
                    self._drop([actor])
                yield shard, outputs, seconds
        finally:
            for ref in running:  # an error or an interrupt: nobody would record these
                ray.cancel(ref)

    def runtime(self, task: StageTask) -> dict[str, Any]:
        ray = self._connect()
        actor = self._actors_for(task, 1)[0]
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

    def _actors_for(self, task: StageTask, pending: int) -> list[Any]:
        """The task's actors, at most `pending` of them: kept ones first (their `setup` is
        made), then new ones up to `workers` or what the cluster holds."""
        if task is not self._task:
            self._drop(list(self._actors))
            self._task, self._actors = task, []
        ray = import_ray()
        count = self.workers or _fitting(ray.cluster_resources(), self.cpus, self.gpus)
        actor = ray.remote(
            num_cpus=self.cpus,
            num_gpus=self.gpus,
            max_restarts=self.retries,
            max_task_retries=self.retries,
        )(_Worker)
        while len(self._actors) < min(count, pending):
            self._actors.append(actor.remote(task))
        return self._actors[:pending]

    def _drop(self, actors: list[Any]) -> None:
        """Close and end `actors`."""
        if not actors:
            return
        ray = import_ray()
        ray.wait([actor.close.remote() for actor in actors], num_returns=len(actors), timeout=30)
        for actor in actors:
            ray.kill(actor)
            self._actors.remove(actor)


class _Worker:
    """One actor: the task's `setup` once, then its shards one at a time."""

    def __init__(self, task: StageTask) -> None:
        self.task, self.context = task, None
        self.ready = False

    def run(self, shard: Shard, scratch: Path) -> tuple[Outputs, float]:
        # `setup` runs with the first shard, not in __init__: an error in it then reaches the
        # driver as itself instead of as a dead actor.
        if not self.ready:
            self.context, self.ready = self.task.setup(), True
        start = time.perf_counter()
        outputs = self.task.run(self.context, shard, scratch)
        return outputs, time.perf_counter() - start

    def runtime(self) -> dict[str, Any]:
        return self.task.runtime()

    def close(self) -> None:
        if self.ready:
            self.task.close(self.context)
            self.ready = False


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
    count = int(resources.get("CPU", 1) // cpus)
    if gpus:
        count = min(count, int(resources.get("GPU", 0) // gpus))
    return max(1, count)


def _unwrap(ray: Any, get: Callable[[], Any]) -> Any:
    """`get()`, with an error raised in a worker re-raised as itself (a ConfigError stays a
    ConfigError, and the CLI prints it as one line)."""
    try:
        return get()
    except ray.exceptions.RayTaskError as error:
        cause = error.cause
        raise (cause if isinstance(cause, BaseException) else error) from None
