"""Member checkpoints: one file per seed, written by the `train` stage, stacked for decoding.

A member is saved with CPU tensors and loaded with `weights_only=True` onto any device, so
where it was trained does not matter to whoever reads it; only once its file is checked against
the sha256 its shard's manifest records.
"""

from __future__ import annotations

from pathlib import Path

from genprobe.errors import RunDirError
from genprobe.models.device import present_device
from genprobe.models.member_stack import MemberStack
from genprobe.runs.rundir import read_config
from genprobe.runs.shards import ShardStore
from genprobe.runs.torch_files import load_torch, torch_bytes
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.study import TRAIN
from genprobe.training.trainer import MemberResult


def member_path(seed: int) -> str:
    """Where a seed's checkpoint lives, relative to the run directory."""
    return f"members/seed={seed}.pt"


def member_bytes(config: SweepConfig, result: MemberResult) -> bytes:
    """A trained member as checkpoint file contents: {format, model, seed, training, state}
    (`model`: the run's identity of its architecture and options)."""
    assert result.state is not None, "a member is saved after its first validation"
    return torch_bytes(
        {
            "format": config.model.member_format,
            "model": config.identity()["model"],
            "seed": result.seed,
            "training": result.summary(),
            "state": {name: tensor.cpu() for name, tensor in result.state.items()},
        }
    )


def unfinished_seeds(run: str | Path) -> list[int]:
    """The run's seeds, in its order, whose checkpoint the train stage has not recorded.

    Raises:
        RunDirError: not a sweep's run directory.
        DamagedFileError: a recorded member's file is missing or damaged.
    """
    run = Path(run)
    config = SweepConfig.from_identity(read_config(run)["config"])
    recorded = set(ShardStore(run).outputs(TRAIN, ".pt"))  # each checked against its sha256
    return [seed for seed in config.seeds if run / member_path(seed) not in recorded]


def load_members(run: str | Path, device: str = "cpu") -> MemberStack:
    """Stack every member checkpoint of a run, in the order of the run's seeds, on `device`.

    Raises:
        RunDirError: a member is missing (training did not finish) or is not a member file.
        DamagedFileError: a member's file is missing or damaged (not what its shard recorded).
        CheckpointError: a member's file holds objects other than tensors and plain data.
    """
    run = Path(run)
    device = present_device(device)
    config = SweepConfig.from_identity(read_config(run)["config"])
    ShardStore(run).check_planned(TRAIN)  # a member trained whose record is gone is damage
    unfinished = unfinished_seeds(run)
    if unfinished:
        missing = run / member_path(unfinished[0])
        raise RunDirError(f"{missing} is missing: run the sweep to finish training")
    states = []
    for seed in config.seeds:
        path = run / member_path(seed)
        checkpoint = load_torch(path, device)
        expected = config.model.member_format
        if not isinstance(checkpoint, dict) or checkpoint.get("format") != expected:
            raise RunDirError(f"{path}: not a {expected} checkpoint")
        states.append(checkpoint["state"])
    return config.model.from_members(config.model_shape(), states).to(device)
