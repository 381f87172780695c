"""`genprobe tasks`, `genprobe task generate | check`, and what a user's bad input gets."""

import json
import sys
import textwrap
from pathlib import Path

import pytest

from genprobe.tasks.registry import TASKS

EXAMPLES = Path(__file__).parents[2] / "examples"
BRACKETS = ["task", "generate", "modular_arithmetic_brackets", "--split", "test"]


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_tasks_lists_every_task_with_its_splits(cli):
    code, out, _ = cli("tasks", "--json")
    listed = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [t["task"] for t in listed] == list(TASKS)
    scan = next(t for t in listed if t["task"] == "scan")
    length_test = scan["splits"]["length_test"]
    assert length_test["size"] == 3_920 and length_test["finite"]
    assert scan["options"] == {"split": "simple"} and scan["suites"] == ["simple_test"]
    code, out, _ = cli("tasks")
    assert code == 0 and "reverse_string: The input string read backwards" in out
    assert "length_41" in out and "lengths 41-41" in out


def test_generate_writes_a_finite_split_whole_and_a_prefix_with_n(cli, tmp_path):
    whole, head = tmp_path / "test.jsonl", tmp_path / "head.jsonl"
    code, _, _ = cli("task", "generate", "scan", "--split", "length_test", "--out", str(whole))
    assert code == 0 and len(read(whole)) == 3_920
    code, _, _ = cli(
        "task", "generate", "scan", "--split", "length_test", "--n", "7", "--out", str(head)
    )
    assert code == 0 and read(head) == read(whole)[:7]
    assert read(head)[0].keys() == {"input", "output"}


def test_generate_takes_task_options_and_any_length_split(cli, tmp_path):
    out = tmp_path / "r.jsonl"
    args = ["task", "generate", "reverse_string", "--split", "length_77", "--n", "5"]
    code, _, _ = cli(*args, "--seed", "3", "--task-option", "test_lengths=50", "--out", str(out))
    rows = read(out)
    assert code == 0 and len(rows) == 5
    assert all(len(r["input"].split()) == 77 and r["output"] == r["input"][::-1] for r in rows)


def test_check_judges_outputs_with_the_tasks_rule(cli, tmp_path):
    gold = tmp_path / "gold.jsonl"
    cli("task", "generate", "duplicate_string", "--split", "test", "--n", "50", "--out", str(gold))
    code, out, _ = cli("task", "check", "duplicate_string", "--input", str(gold), "--json")
    assert code == 0 and json.loads(out) == {
        "n": 50, "right": 50, "wrong": 0, "accuracy": 1.0, "wrong_lines": []
    }  # fmt: skip
    rows = read(gold)
    rows[0]["output"] += " 0"
    rows[1]["output"] = "not a token"
    rows[40]["output"] = ""
    # a blank line: the examples after it are a line further down
    lines = [json.dumps(r) for r in rows[:10]] + [""] + [json.dumps(r) for r in rows[10:]]
    gold.write_text("".join(line + "\n" for line in lines))
    code, out, _ = cli("task", "check", "duplicate_string", "--input", str(gold), "--json")
    assert code == 0 and json.loads(out) == {
        "n": 50, "right": 47, "wrong": 3, "accuracy": 0.94, "wrong_lines": [1, 2, 42]
    }  # fmt: skip
    code, _, err = cli("task", "check", "duplicate_string", "--input", str(gold))
    assert code == 0 and "47 of 50 outputs right, accuracy 94.00 %; wrong: lines 1, 2, 42" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["task", "generate", "scann", "--split", "x"],
            "unknown task 'scann'. Did you mean: scan?",
        ),
        (["task", "generate", "scan", "--split", "lenght_test"], "did you mean length_test"),
        (
            ["task", "generate", "scan", "--split", "all", "--task-option", "split=lenght"],
            "split must be one of simple, length, addprim_jump, addprim_turn_left (did you mean "
            "length?)",
        ),
        (
            ["task", "generate", "scan", "--split", "all", "--task-option", "splits=length"],
            "task option must be one of scan's options: split (did you mean split?)",
        ),
        (
            [*BRACKETS, "--task-option", "mult=maybe"],
            "task option mult must be true or false. Got 'maybe' instead.",
        ),
        (
            [*BRACKETS, "--task-option", "test_lengths=x"],
            "test_lengths must be lengths like 41,50,100 or 41-500:46 or all. Got 'x' instead.",
        ),
        (
            ["task", "generate", "scan", "--split", "all", "--task-option", "split"],
            "--task-option must be name=value",
        ),
        (["task", "generate", "scan", "--split", "all", "--n", "0"], "n must be an integer >= 1"),
    ],
)
def test_bad_task_input_is_one_line_and_writes_nothing(cli, tmp_path, args, message):
    out = tmp_path / "out.jsonl"
    code, _, err = cli(*args, "--out", str(out))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"input": "0 1", "output": "1 0"}', "oops"], "x.jsonl:2: not JSON"),
        (['{"input": "0 1"}'], "x.jsonl:1: field 'output' must be a string of tokens"),
        (['{"input": "0 7", "output": ""}'], "x.jsonl:1: unknown input token '7'"),
        (['{"input": "", "output": ""}'], "x.jsonl:1: empty input"),
        (["[1, 2]"], "x.jsonl:1: expected a JSON object"),
        ([], "x.jsonl: empty: no rows to read"),
    ],
)
def test_a_malformed_example_file_names_file_and_line(cli, tmp_path, lines, message):
    path = tmp_path / "x.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines))
    code, _, err = cli("task", "check", "reverse_string", "--input", str(path))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


BROKEN_TASKS = {
    "missing": """
        from genprobe.tasks import DeterministicTask

        class Task(DeterministicTask):
            def solve(self, src):
                return src
    """,
    "listverify": """
        from examples_copy import Copy

        class Task(Copy):
            def verify(self, src, out, out_len):
                return [True] * len(src)
    """,
    "notatask": """
        class Task:
            pass
    """,
}


@pytest.mark.parametrize(
    "module, message",
    [
        (
            "missing",
            "py:missing:Task: does not define generate, max_output_length, source_vocab, splits",
        ),
        ("listverify", "task py:listverify:Task: verify(gold) returned [True, True"),
        ("notatask", "must be a subclass of genprobe.tasks.Task, got <class 'notatask.Task'>"),
        ("nowhere", "task py:nowhere:Task: cannot import 'nowhere'"),
    ],
)
def test_a_py_task_that_breaks_the_contract_is_one_line(
    cli, tmp_path, monkeypatch, module, message
):
    monkeypatch.chdir(tmp_path)  # `py:` finds modules in the current directory
    monkeypatch.setattr("sys.path", list(sys.path))  # and adds it to the path: undone after
    (tmp_path / "examples_copy.py").write_text((EXAMPLES / "copy_task.py").read_text())
    for name, source in BROKEN_TASKS.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    out = tmp_path / "run"
    code, _, err = cli("sweep", "--task", f"py:{module}:Task", "--seeds", "1", "--out", str(out))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
