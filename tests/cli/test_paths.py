"""Where a command writes is checked when its options are read: an output that cannot be
written (a folder given for a file, a path under a file) is one line and exit 2, before any
work, and nothing is written."""

import pytest

TINY_SWEEP = (
    "--task", "reverse_string", "--seeds", "1", "--train-size", "20", "--validation-size", "10",
    "--suite-size", "10", "--max-epochs", "1", "--no-report",
)  # fmt: skip


def commands(data):
    """Every command that writes, with its output option last: (argv, what it writes)."""
    return {
        "task generate": (["task", "generate", "scan", "--split", "all", "--n", "2"], "file"),
        "rewriting generate": (["rewriting", "generate", "--suite", "long", "--n", "2"], "file"),
        "integration generate": (["integration", "generate", "--n", "2"], "file"),
        "integration mix": (["integration", "mix", "--part", str(data)], "file"),
        "integration predict": (
            ["integration", "predict", "--model", "sympy", "--problems", str(data)], "file"
        ),
        "integration suite": (["integration", "suite", "robustness-simple", "--n", "1"], "file"),
        "sweep": (["sweep", *TINY_SWEEP], "folder"),
        "rewriting sweep": (["rewriting", "sweep", *TINY_SWEEP[2:]], "folder"),
        "integration train": (["integration", "train", "--data", str(data)], "folder"),
        "integration brittleness": (
            ["integration", "brittleness", "--model", "sympy", "--suites", "robustness-simple"],
            "folder",
        ),
        "integration evaluate": (
            ["integration", "evaluate", "--model", "sympy", "--data", str(data)], "folder"
        ),
        "integration sagga": (["integration", "sagga", "--model", "sympy"], "folder"),
        "compare": (["compare", str(data), str(data)], "folder"),
    }  # fmt: skip


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.txt"
    path.write_text("1|sub Y' mul INT+ 2 x\tpow x INT+ 2\n")
    return path


@pytest.mark.parametrize("command", list(commands("data.txt")))
@pytest.mark.parametrize("under", ["a file", "a file's folder"])
def test_an_output_under_a_file_is_one_line_and_exit_2(cli, tmp_path, data, command, under):
    argv, _ = commands(data)[command]
    blocker = tmp_path / "FILE"
    blocker.write_text("mine\n")
    out = blocker / "x" if under == "a file" else blocker / "deeper" / "x"
    code, _, err = cli(*argv, "--out", str(out))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{blocker} is a file, not a folder" in err
    assert blocker.read_text() == "mine\n"


@pytest.mark.parametrize("command", list(commands("data.txt")))
def test_the_wrong_kind_of_output_is_one_line_and_exit_2(cli, tmp_path, data, command):
    argv, kind = commands(data)[command]
    if kind == "file":  # a folder where a file is written
        out, message = tmp_path, f"{tmp_path} is a folder, not a file"
    else:  # a file where a run directory is made
        out = tmp_path / "FILE"
        out.write_text("mine\n")
        message = f"{out} is a file, not a folder"
    before = sorted(tmp_path.iterdir())
    code, _, err = cli(*argv, "--out", str(out))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert message in err
    assert sorted(tmp_path.iterdir()) == before


def test_the_current_folder_is_no_output_file(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("task", "generate", "scan", "--split", "all", "--n", "2", "--out", ".")
    assert code == 2
    assert err == "genprobe: error: Invalid value for '--out': . is a folder, not a file\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["integration", "predict", "--model", "openai:some-model", "--problems", "p.txt",
         "--out", "p.jsonl", "--cache-dir"],
    ],
)  # fmt: skip
def test_a_cache_folder_under_a_file_is_one_line_and_exit_2(cli, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("mine\n")
    (tmp_path / "p.txt").write_text("x\n")
    code, _, err = cli(*argv, "FILE/cache")
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "FILE is a file, not a folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE", "p.txt"]
