"""What a command does with an input file it cannot use: an empty one, one of the wrong kind
(every row left out), a malformed one. Each is one line naming the file, exit 2, and a study
given one makes no run directory, so the corrected command is not refused as another run."""

import json
from pathlib import Path

import pytest

from genprobe.training.seq2seq_transformer import read_training_data

EXAMPLES = Path(__file__).parents[2] / "examples"
PAIR = "1|sub Y' mul INT+ 2 x\tpow x INT+ 2\n"


def readers(path: Path, out: Path) -> dict[str, list[str]]:
    """Every command that reads one input file (`path`), writing to `out`."""
    model = ["--model", "sympy", "--preset", "quick", "--n", "1"]
    return {
        "task check": ["task", "check", "reverse_string", "--input", str(path)],
        "integration verify": ["integration", "verify", "--input", str(path)],
        "integration score": ["integration", "score", "--model", "sympy", "--input", str(path)],
        "integration predict": ["integration", "predict", "--model", "sympy", "--problems",
                                str(path), "--out", str(out)],
        "integration suite": ["integration", "suite", "in-distribution", "--validation",
                              str(path), "--out", str(out)],
        "integration brittleness": ["integration", "brittleness", *model, "--validation",
                                    str(path), "--suites", "in-distribution", "--out", str(out)],
        "integration evaluate": ["integration", "evaluate", "--model", "sympy", "--data",
                                 str(path), "--out", str(out)],
        "integration train": ["integration", "train", "--data", str(path), "--out", str(out)],
        "integration mix": ["integration", "mix", "--part", str(path), "--out", str(out)],
        "brittleness --train-data": ["integration", "brittleness", *model, "--train-data",
                                     str(path), "--suites", "robustness-simple", "--out",
                                     str(out)],
        "rewriting check": ["rewriting", "check", "--src", str(path), "--tgt", str(path)],
    }  # fmt: skip


@pytest.mark.parametrize("suffix", [".jsonl", ".txt"])
@pytest.mark.parametrize("command", list(readers(Path(), Path())))
def test_an_empty_input_is_one_line_naming_it_and_exit_2(cli, tmp_path, command, suffix):
    path = tmp_path / f"empty{suffix}"
    path.write_text("")
    out = tmp_path / "out.jsonl"
    code, _, err = cli(*readers(path, out)[command])
    assert (code, err) == (2, f"genprobe: error: {path}: empty: no rows to read\n")
    assert not out.exists()


@pytest.fixture
def copy_task_file(cli, tmp_path, monkeypatch):
    """Examples of the copy task (examples/copy_task.py) of the letters a-d: no integration
    problem among them (the letter e alone would be one, Euler's number)."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    path = tmp_path / "copy.jsonl"
    code, _, err = cli("task", "generate", "py:copy_task:Copy", "--task-option", "letters=4",
                       "--split", "train", "--n", "5", "--out", str(path))  # fmt: skip
    assert code == 0, err
    return path


@pytest.mark.parametrize(
    "command", ["integration predict", "integration suite", "integration brittleness",
                "integration evaluate"],
)  # fmt: skip
def test_a_file_of_another_task_is_refused_naming_its_first_row(
    cli, tmp_path, copy_task_file, command
):
    path = copy_task_file
    first = json.loads(path.read_text().splitlines()[0])["input"].split()[0]
    out = tmp_path / "out.jsonl"
    code, _, err = cli(*readers(path, out)[command])
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"genprobe: error: {path}:1: all 5 rows left out; this one: {first!r}")
    assert not out.exists()


def test_in_distribution_keeps_the_usable_rows_and_says_how_many_it_left(cli, tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_text(PAIR + "1|sub Y' mul y x\tx\n")
    out = tmp_path / "suite.jsonl"
    code, _, err = cli(*readers(path, out)["integration suite"])
    assert code == 0 and "1 rows left out (first: row 2," in err
    assert len(out.read_text().splitlines()) == 1


def test_a_split_with_no_rows_is_named(cli, tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps({"input": "2*x", "output": "x**2", "split": "train"}) + "\n")
    out = tmp_path / "run"
    code, _, err = cli(*readers(path, out)["integration brittleness"], "--split", "test")
    assert (code, err) == (2, f"genprobe: error: {path}: no rows of split 'test'\n")
    assert not out.exists()


def test_a_generated_dataset_may_have_an_empty_split(cli, tmp_path):
    """`integration generate --test-fraction …` writes NAME.valid empty: training holds its
    validation out instead, and mixing takes the other splits."""
    (tmp_path / "d.train").write_text(PAIR * 3)
    (tmp_path / "d.valid").write_text("")
    (tmp_path / "d.test").write_text(PAIR.replace("2 x", "3 x"))
    mixed = tmp_path / "mixed.txt"
    code, _, err = cli("integration", "mix", "--part", str(tmp_path / "d"), "--out", str(mixed))
    assert code == 0, err
    assert len(mixed.read_text().splitlines()) == 2
    data = read_training_data(tmp_path / "d.train", max_len=64, valid_size=1)
    assert (len(data.train), len(data.valid), data.valid_from) == (3, 0, "held out of the data")


BRITTLENESS = ["integration", "brittleness", "--model", "sympy", "--preset", "quick", "--n", "1"]
SAGGA = ["integration", "sagga", "--model", "sympy", "--generations", "1", "--generation-size", "4"]
BAD_INPUTS = {
    # (the command, with INPUT where the bad file goes; its content; what the error names)
    "brittleness --validation": (
        [*BRITTLENESS, "--validation", "INPUT", "--suites", "in-distribution"],
        PAIR + "garbage\n", ":2: column 'problem'",
    ),
    "brittleness --validation, for the derived suites only": (
        [*BRITTLENESS, "--validation", "INPUT", "--suites", "robustness-validation"],
        PAIR + "1|sub Y' x +\tx\n", ":2: column 'problem'",
    ),
    "brittleness --train-data": (
        [*BRITTLENESS, "--train-data", "INPUT", "--suites", "robustness-simple"],
        PAIR + "no tab here\n", ":2: expected 'count|input<TAB>output'",
    ),
    "evaluate --data": (
        ["integration", "evaluate", "--model", "sympy", "--data", "INPUT", "--n", "1"],
        "garbage\n", ":1: column 'problem'",
    ),
    "sagga --targets": (
        [*SAGGA, "--fitness", "target_problems", "--targets", "INPUT"],
        "x**2\nx +\n", ":2: not a problem",
    ),
    "sagga --basis-file": (
        [*SAGGA, "--basis-file", "INPUT"], "x +\n",
        ":1: not a problem",
    ),
    "train --data": (
        ["integration", "train", "--data", "INPUT"], PAIR + "1|sub Y' x\tzzz\n",
        ":2: token 0 ('zzz') is not in the vocabulary",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_a_study_refuses_a_malformed_input_before_it_makes_a_run_directory(cli, tmp_path, name):
    argv, content, message = BAD_INPUTS[name]
    path = tmp_path / "input.txt"
    path.write_text(content)
    out = tmp_path / "run"
    code, _, err = cli(*[str(path) if a == "INPUT" else a for a in argv], "--out", str(out))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{path}{message}" in err
    assert not out.exists()


def test_evaluate_names_its_own_option_for_a_missing_file(cli, tmp_path):
    missing = tmp_path / "nope.txt"
    code, _, err = cli("integration", "evaluate", "--model", "sympy", "--data", str(missing))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"Invalid value for '--data': file '{missing}' does not exist" in err
    assert list(tmp_path.iterdir()) == []


def test_evaluate_checks_the_run_directory_it_makes_beside_the_data(cli, tmp_path):
    data = tmp_path / "data.txt"
    data.write_text(PAIR)
    (tmp_path / "data.txt.eval").write_text("mine\n")
    code, _, err = cli("integration", "evaluate", "--model", "sympy", "--data", str(data))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{tmp_path / 'data.txt.eval'} is a file, not a folder" in err


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_a_study_refuses_a_missing_input_before_it_makes_a_run_directory(cli, tmp_path, name):
    argv, _, _ = BAD_INPUTS[name]
    missing = tmp_path / "missing.txt"
    out = tmp_path / "run"
    code, _, err = cli(*[str(missing) if a == "INPUT" else a for a in argv], "--out", str(out))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert str(missing) in err
    assert not out.exists()
