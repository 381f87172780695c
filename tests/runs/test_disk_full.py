"""A full disk is one line naming the file being written and the space left, exit 2, and
nothing half-written in its place."""

import errno
import os
import subprocess

import pytest

from genprobe.errors import DiskFullError
from genprobe.runs.atomic import atomic_path


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
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("mounting a small tmpfs needs a superuser")
    yield disk
    subprocess.run(["umount", str(disk)], check=True)


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
