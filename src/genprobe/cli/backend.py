"""`--backend local|ray` and `--ray-address`, shared by the commands that run shards."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

import typer

from genprobe.errors import GenprobeError

if TYPE_CHECKING:
    from genprobe.runs.executor import Executor


class Backend(str, Enum):
    local = "local"
    ray = "ray"


BACKEND = typer.Option(
    Backend.local,
    help="Where shards run: local (this machine's processes) or ray (a Ray cluster; "
    "pip install 'genprobe[ray]').",
)
RAY_ADDRESS = typer.Option(
    None,
    help="--backend ray: the cluster to join ('auto': the running one, ray://host:port) "
    "[default: start or join a Ray instance on this machine].",
)


def make_executor(
    backend: Backend,
    address: str | None,
    *,
    local_workers: int = 1,
    ray_workers: int | None = None,
    cpus: float = 1,
    gpus: float = 0,
) -> Executor:
    """The local executor with `local_workers` processes, or `ray_workers` Ray actors (None:
    as many as the cluster holds) of `cpus` CPUs and `gpus` GPUs each."""
    if backend is Backend.local:
        from genprobe.runs.executor import LocalExecutor

        _local_needs_no_address(address)
        return LocalExecutor(local_workers)
    from genprobe.runs.ray_executor import RayExecutor, import_ray

    import_ray()  # the one-line install hint before any work
    return RayExecutor(address, ray_workers, cpus, gpus)


def _local_needs_no_address(address: str | None) -> None:
    if address is not None:
        raise GenprobeError("--ray-address needs --backend ray")


def verifier_workers(workers: int | None, backend: Backend) -> int | None:
    """Verifier processes: `workers`, else one per CPU locally and one per Ray worker."""
    return workers or (1 if backend is Backend.ray else None)


def model_study_executor(
    backend: Backend, address: str | None, workers: int | None, device: str
) -> Executor | None:
    """For studies whose workers each load a model and run `workers` verifier processes: None
    locally (the study runs each stage in this process, setting up and closing per stage); on
    Ray, as many workers of `workers` CPUs (and a GPU on cuda) as fit."""
    if backend is Backend.local:
        _local_needs_no_address(address)
        return None
    gpus = 1 if device.startswith("cuda") else 0
    return make_executor(backend, address, cpus=workers or 1, gpus=gpus)
