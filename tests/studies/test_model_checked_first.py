"""A model under test that cannot be asked as set is refused in one line before a new run is
written: a mistyped endpoint, more shots than the task has, a file that is no checkpoint, a
device this machine does not have. The corrected command then starts the run afresh instead
of being refused as another run's."""

import socket

import pytest
import torch


def dead_url():
    """An http:// URL on a loopback port where nothing listens."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{free.getsockname()[1]}/v1"


def refused(cli, out, *argv):
    code, _, err = cli(*argv, "--out", str(out))
    said = [line for line in err.splitlines() if not line.startswith("[")]  # the log's lines
    assert code == 2 and len(said) == 1 and said[0].startswith("genprobe: error: "), err
    assert not out.exists()
    return err


def test_an_endpoint_that_does_not_answer_is_told_before_a_run_is_written(cli, tmp_path):
    url = dead_url()
    err = refused(cli, tmp_path / "p", "probe", "--model", f"openai:tiny@{url}", "--task", "scan")
    assert f"{url}: nothing answers (ConnectError" in err
    err = refused(
        cli, tmp_path / "p", "probe", "--model", "openai:tiny@127.0.0.1:9", "--task", "scan"
    )
    assert "openai: URL must be an http:// or https:// URL. Got '127.0.0.1:9'" in err
    for command in ("search", "evaluate"):
        asked = ("--model", f"openai:tiny@{url}", "--task", "scan")
        err = refused(cli, tmp_path / "s", command, *asked)
        assert "nothing answers" in err


def test_more_shots_than_the_pool_are_told_before_a_probe_is_written(cli, tmp_path):
    argv = ("probe", "--model", f"openai:tiny@{dead_url()}", "--task", "scan", "--shots")
    err = refused(cli, tmp_path / "p", *argv, "100000")
    assert "--shots must be an integer in 0..511" in err


def test_a_file_that_is_no_checkpoint_is_told_before_brittleness_is_written(cli, tmp_path):
    binary = tmp_path / "binary.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    for command in (("integration", "brittleness"), ("integration", "sagga")):
        err = refused(cli, tmp_path / "b", *command, "--model", f"ckpt:{binary}")
        assert "binary.bin: not a checkpoint genprobe can load" in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize(
    "command",
    [("probe",), ("search", "--task", "integration"), ("integration", "brittleness"),
     ("integration", "sagga")],
)  # fmt: skip
def test_a_gpu_this_machine_lacks_is_one_line_and_no_run(command, cli, tmp_path, checkpoint):
    err = refused(
        cli, tmp_path / "r", *command, "--model", f"ckpt:{checkpoint}", "--device", "cuda"
    )
    assert "--device must be a device that exists here" in err
