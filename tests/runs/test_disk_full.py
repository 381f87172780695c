"""A full disk is one line naming the file being written and the space left, exit 2, and
nothing half-written in its place."""

import errno
import os

import pytest
import torch
from helpers import small_disk

from genprobe.errors import DiskFullError
from genprobe.runs.atomic import atomic_path
from genprobe.runs.resume import save_state


def test_running_out_of_space_names_the_file_and_keeps_the_old_one(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("old")
    full = pytest.raises(DiskFullError, match=f"no space left to write {path} \\(.* MiB free")
    with full, atomic_path(path) as tmp:
        tmp.write_text("half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["results.json"]


@pytest.fixture
def full_disk(tmp_path):
    """A file system of 8 KiB (a tmpfs), where a superuser may mount one."""
    with small_disk(tmp_path / "disk", "8k") as (disk, _):
        yield disk


def test_a_command_on_a_full_disk_is_one_line_and_the_rerun_with_space_is_the_same(
    cli, full_disk, tmp_path
):
    generate = ("task", "generate", "scan", "--split", "all", "--n", "2000", "--seed", "3")
    out = full_disk / "examples.jsonl"
    code, _, err = cli(*generate, "--out", str(out))
    assert code == 2 and err.startswith(f"genprobe: error: no space left to write {out} (")
    assert len(err.splitlines()) == 1 and list(full_disk.iterdir()) == []
    there = tmp_path / "examples.jsonl"
    assert cli(*generate, "--out", str(there))[0] == 0
    assert there.stat().st_size > 8192


def test_a_torch_file_on_a_full_disk_is_disk_full_not_torchs_runtime_error(full_disk):
    """torch.save writing a file itself turns the full disk into a RuntimeError ("unexpected
    pos"); a resume state (as a checkpoint) is written as one write of its bytes instead."""
    state = full_disk / "state.pt"
    with pytest.raises(DiskFullError, match=f"no space left to write {state} \\("):
        save_state(state, {"weights": torch.zeros(4096)})
    assert list(full_disk.iterdir()) == []
