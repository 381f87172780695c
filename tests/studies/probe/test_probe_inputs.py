"""A probe's `--input FILE`: the user's own inputs as a suite, decoded by every member and
judged like the task's suites (the seed study's `evaluate`, for any model under test); inputs
the task refuses are counted, a file that cannot be read is one line with nothing written."""

import json

import pytest

pytest.importorskip("transformers")

from helpers import model_settings, save_tiny_gpt2

from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.results import read_probe, read_results, read_suites

TASK = ["--task", "addition", "--task-option", "format=plain", "--task-option",
        "train_digits=2", "--task-option", "test_lengths=3"]  # fmt: skip
INPUTS = ["8 + 1", "7 2 + 1", "+ 7", "7 4 + 8 8"]  # "+ 7" is no sum: the task refuses it


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), positions=512)


def write_inputs(path, lines):
    path.write_text("".join(json.dumps({"input": line}) + "\n" for line in lines))
    return path


def test_a_file_of_inputs_is_a_suite_every_member_answers(cli, saved, tmp_path):
    inputs = write_inputs(tmp_path / "mine.jsonl", INPUTS)
    out = tmp_path / "probe"
    code, _, err = cli("probe", "--model", f"hf:{saved}", *TASK, "--families", "",
                       "--relations", "", "--no-task-suites", "--formats", "2", "--size", "4",
                       "--input", str(inputs), "--out", str(out))  # fmt: skip
    assert code == 0, err
    suites = read_suites(out).set_index("suite")
    assert suites.loc["input-mine", "kind"] == "input"
    assert (suites.loc["input-mine", "inputs"], suites.loc["input-mine", "invalid"]) == (3, 1)
    rows = read_results(out).query("suite == 'input-mine'")
    assert len(rows) == 2 * 3 and rows["member"].nunique() == 2
    assert set(rows["input"]) == {"8 + 1", "7 2 + 1", "7 4 + 8 8"}
    right = rows["output"] == rows["input"].map(
        {"8 + 1": "9", "7 2 + 1": "7 3", "7 4 + 8 8": "1 6 2"}
    )
    assert list(rows["outcome"] == "correct") == list(right)
    assert "input-mine" in (out / "report.md").read_text()
    assert read_probe(out).inputs == (str(inputs),)


def test_a_changed_file_is_another_run(tmp_path):
    inputs = write_inputs(tmp_path / "mine.jsonl", INPUTS)
    config = ProbeConfig(model_settings("sympy"), task="integration", inputs=(str(inputs),))
    before = config.identity()
    assert ProbeConfig.from_identity(before) == config
    write_inputs(inputs, INPUTS[:2])
    assert config.identity() != before
    assert "inputs" not in ProbeConfig(model_settings("sympy"), task="integration").identity()


@pytest.mark.parametrize(
    ("lines", "name", "message"),
    [
        (["8 + 1", "8 + x"], "mine.jsonl", "mine.jsonl:2: unknown input token 'x'"),
        (None, "absent.jsonl", "--input must be an existing file"),
        (["8 + 1"], "two words.jsonl", "--input must be a file named by letters"),
    ],
)
def test_a_bad_file_of_inputs_is_one_line_and_writes_nothing(
    cli, saved, tmp_path, lines, name, message
):
    path = tmp_path / name
    if lines is not None:
        write_inputs(path, lines)
    out = tmp_path / "probe"
    code, _, err = cli("probe", "--model", f"hf:{saved}", *TASK, "--input", str(path),
                       "--out", str(out))  # fmt: skip
    errors = [line for line in err.splitlines() if line.startswith("genprobe:")]
    assert code == 2 and len(errors) == 1 and message in errors[0], err
    assert not out.exists()
