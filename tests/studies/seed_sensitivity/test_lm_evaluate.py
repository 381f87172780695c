"""`genprobe evaluate --model hf:PATH --task T`: a language model in the seed study, its members
the ways of asking it. On a tiny random GPT-2 built here (tests/helpers.py): the run holds a
sweep's predictions, report and tables; a rerun asks nothing (the model is not even loaded); an
interrupted run asks only the suites it has no answers to and ends as one never interrupted;
bad input is one line, exit 2, nothing written. (An endpoint's run resuming from its answer
cache: tests/models/test_openai_lm.py.)"""

import json

import pandas as pd
import pytest

pytest.importorskip("transformers")

from helpers import save_tiny_gpt2

from genprobe import read_tables
from genprobe.cli import main
from genprobe.prompts import parse_answers
from genprobe.runs.rundir import read_config
from genprobe.studies.seed_sensitivity.compare import load_runs, write_comparison
from genprobe.studies.seed_sensitivity.results import read_predictions
from genprobe.tasks.registry import load_task
from genprobe.tasks.task import split_examples
from genprobe.tasks.tokens import encode_inputs
from genprobe.under_test.adapters import causal_lm

OPTIONS = {"format": "plain", "train_digits": 2, "test_lengths": "3"}
TASK = load_task("addition", OPTIONS)
TASK_ARGS = [arg for name, value in OPTIONS.items() for arg in ("--task-option", f"{name}={value}")]
SUITES = ["test", "length_3", "mine"]  # the task's suites, then the file's


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), positions=512)


@pytest.fixture(scope="module")
def mine(tmp_path_factory):
    path = tmp_path_factory.mktemp("inputs") / "mine.jsonl"
    path.write_text("".join(json.dumps({"input": x}) + "\n" for x in ["8 + 1", "7 2 + 1"]))
    return path


def argv(saved, mine, out, *more):
    return ["evaluate", "--model", f"hf:{saved}", "--task", "addition", *TASK_ARGS,
            "--formats", "2", "--shots", "1", "--suite-size", "3", "--input", str(mine),
            "--out", str(out), *more]  # fmt: skip


@pytest.fixture(scope="module")
def whole(saved, mine, tmp_path_factory):
    """A run never interrupted, with its report."""
    out = tmp_path_factory.mktemp("whole") / "run"
    try:
        main(argv(saved, mine, out))
    except SystemExit as failed:  # main exits only on an error
        pytest.fail(f"evaluate exited {failed.code}")
    return out


def counted(monkeypatch):
    """The language model's loads and completion calls, as they happen."""
    calls = {"loads": 0, "completions": 0}
    load, complete = causal_lm.load_causal_lm, causal_lm.CausalLM.complete

    def loading(*args, **kwargs):
        calls["loads"] += 1
        return load(*args, **kwargs)

    def completing(self, *args, **kwargs):
        calls["completions"] += 1
        if calls["completions"] == calls.get("interrupt_at"):
            raise KeyboardInterrupt
        return complete(self, *args, **kwargs)

    monkeypatch.setattr(causal_lm, "load_causal_lm", loading)
    monkeypatch.setattr(causal_lm.CausalLM, "complete", completing)
    return calls


def test_a_language_models_run_is_a_sweeps_with_its_members_the_ways_of_asking(
    whole, saved, mine, cli, monkeypatch, tmp_path
):
    stored = read_config(whole)
    assert stored["kind"] == "language-model" and len(stored["hash"]) == 16
    assert stored["config"]["model"] == f"hf:{saved}" and stored["config"]["formats"] == 2
    assert stored["provenance"]["versions"]["transformers"]
    predictions = read_predictions(whole)
    assert set(predictions["seed"]) == {0, 1} and set(predictions["suite"]) == set(SUITES)
    # the suites are a sweep's of the same task, data seed and suite size
    assert list(predictions.query("seed == 0 and suite == 'test'")["input"]) == [
        " ".join(TASK.source_vocab[i - 1] for i in row[row > 0])
        for row in split_examples(TASK, "test", 3, 0).src
    ]
    # each output is read from the completion the member's prompt got, and judged
    src = encode_inputs(TASK.source_vocab, [(None, x.split()) for x in predictions["input"]], "-")
    read = parse_answers(TASK, src, list(predictions["completion"]))
    assert [" ".join(TASK.target_vocab[i] for i in a.ids or ()) for a in read] == list(
        predictions["output"]
    )
    assert set(predictions["member"]) == {"format=0 draw=0", "format=1 draw=0"}
    # each member asks every input in its own format
    asks = zip(predictions["input"], predictions["prompt"], strict=True)
    assert all(x in prompt for x, prompt in asks)
    asked = predictions.pivot(index=["suite", "index"], columns="seed", values="prompt")
    assert (asked[0] != asked[1]).all()
    report = (whole / "report.md").read_text()
    assert report.startswith("# Prompt sensitivity of generalization")
    assert "## Accuracy across members (%)" in report and "| member | format | draw |" in report
    tables = read_tables(whole)
    assert list(tables) == ["scores", "members", "judged"]
    assert list(tables["members"]["member"]) == ["format=0 draw=0", "format=1 draw=0"]
    judged = tables["judged"]  # its members by label, its verdicts as the model's answers got them
    assert sorted(judged["outcome"]) == sorted(predictions["outcome"])
    at = judged.columns.get_loc("seed")
    assert list(judged.columns[at : at + 4]) == ["seed", "format", "draw", "sample"]
    assert list(tables["scores"].columns[:4]) == ["seed", "format", "draw", "sample"]
    summary = json.loads((whole / "stats.json").read_text())["summary"]
    assert {suite: s["n"] for suite, s in summary.items()} == dict.fromkeys(SUITES, 2)
    # `compare` reads it as a sweep, a language model's members as seeds
    runs = load_runs([whole, whole], ["a", "b"])
    compared = json.loads(write_comparison(runs, tmp_path / "compare")[0].with_name(
        "compare.json").read_text())  # fmt: skip
    assert compared["summary"]["a"] == {suite: s for suite, s in summary.items()}

    calls = counted(monkeypatch)
    code, out, err = cli(*argv(saved, mine, whole, "--json"))  # a finished run is read
    assert code == 0, err
    assert calls == {"loads": 0, "completions": 0}
    assert json.loads(out)["summary"] == summary
    pd.testing.assert_frame_equal(read_predictions(whole), predictions)


def test_an_interrupted_run_asks_only_what_it_has_no_answers_to(
    whole, saved, mine, cli, monkeypatch, tmp_path
):
    calls = counted(monkeypatch)
    calls["interrupt_at"] = 3  # the first member's answers to the second suite
    out = tmp_path / "run"
    code, _, err = cli(*argv(saved, mine, out, "--no-report"))
    assert code == 130 and "resume: the suites answered are kept" in err, err
    assert [path.stem for path in (out / "predictions").iterdir()] == ["test"]
    calls.update(completions=0, interrupt_at=None)
    code, _, err = cli(*argv(saved, mine, out, "--no-report"))
    assert code == 0, err
    assert calls["completions"] == 2 * 2  # the two suites left, each member once
    pd.testing.assert_frame_equal(read_predictions(out), read_predictions(whole))


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (["--formats", "0"], "--formats must be an integer >= 1"),
        (["--concurrency", "2"], "--concurrency must be left out for a model that is not"),
        (["--name", "test"], "--name must be a name other than the study's own test"),
        (["--model", "sympy"], "--model must be a language model: hf:PATH, hf:ORG/NAME or"),
        (["--model", "hf:./no/such-model"], "--model must be the folder of a saved model"),
        (["--input", "LONG"], "long: the model cannot be asked 1 of the 2 inputs"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(saved, mine, cli, tmp_path, more, message):
    long = tmp_path / "long.jsonl"
    digits = " ".join("7" * 250)  # a prompt longer than the model's 512 positions
    long.write_text(json.dumps({"input": "8 + 1"}) + "\n" + json.dumps({"input": f"{digits} + 1"}))
    out = tmp_path / "run"
    args = [str(long) if arg == "LONG" else arg for arg in argv(saved, mine, out) + more]
    code, _, err = cli(*args)
    errors = [line for line in err.splitlines() if line.startswith("genprobe:")]
    assert code == 2 and len(errors) == 1 and message in errors[0], err
    assert not out.exists()


def test_the_command_refuses_what_is_no_language_models_run(whole, saved, mine, cli, tmp_path):
    code, _, err = cli("evaluate", "--model", f"hf:{saved}", "--task", "integration",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 2 and "--task must be a token task other than integration" in err, err
    assert not (tmp_path / "run").exists()
    code, _, err = cli("evaluate", str(whole), "--input", str(mine), "--formats", "2")
    assert code == 2 and "--formats must be left out with RUN_DIR" in err, err
    code, _, err = cli("evaluate", str(whole), "--input", str(mine), "--data-seed", "0")
    assert code == 2 and "--data-seed must be left out with RUN_DIR" in err, err  # even at 0
    code, _, err = cli("evaluate", str(whole), "--input", str(mine))
    assert code == 2 and "holds a language model's run: add inputs to it with" in err, err
    code, _, err = cli("evaluate", "--input", str(mine))
    assert code == 2 and "RUN_DIR must be given" in err, err
