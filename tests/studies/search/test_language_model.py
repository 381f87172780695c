"""The failure search of a language model's prompts (`genprobe search --model hf:PATH --task
T`): its members are the prompt grid's, every input comes with every member's outcome, the
fitness is the target's of those outcomes, and a rerun resumes. On the tiny random GPT-2 of
tests/helpers.py, whose answers are judged afresh by the same model here."""

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("transformers")

from helpers import save_tiny_gpt2

from genprobe.cli import main
from genprobe.studies.search.generation import judged
from genprobe.tasks.probing import from_input_keys
from genprobe.tasks.registry import load_task
from genprobe.tasks.verdict import Outcome
from genprobe.under_test.adapters.causal_lm import load_causal_lm
from genprobe.under_test.adapters.prompted import PromptedModel, PromptGrid

OPTIONS = {"format": "plain", "train_digits": 2, "test_lengths": "3"}
TASK = load_task("addition", OPTIONS)
MEMBERS = ["format=0 draw=0", "format=1 draw=0"]


def _argv(model: str, out, *extra: str) -> list[str]:
    options = [part for k, v in OPTIONS.items() for part in ("--task-option", f"{k}={v}")]
    return [
        "search", "--model", model, "--task", "addition", *options, "--formats", "2",
        "--generations", "2", "--base-size", "8", "--population", "4", "--mutants", "2",
        "--out", str(out), *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), positions=512)


@pytest.fixture(scope="module")
def model(saved):
    return PromptedModel(load_causal_lm(saved), TASK, PromptGrid(formats=2))


@pytest.fixture(scope="module")
def searched(saved, tmp_path_factory):
    out = tmp_path_factory.mktemp("search") / "lm"
    try:
        main(_argv(f"hf:{saved}", out))
    except SystemExit as exit:
        assert exit.code == 0
    return out


def _evaluated(run) -> pd.DataFrame:
    return pd.concat(pd.read_parquet(p) for p in sorted((run / "generations").glob("*.parquet")))


def test_every_input_has_each_members_outcome_and_the_targets_fitness(searched, saved, model):
    state = json.loads((searched / "search.json").read_text())
    assert state["members"] == MEMBERS
    assert state["runs"] == {"A": {"model": f"hf:{saved}", "members": MEMBERS}}
    assert state["task"] == "addition" and state["generations"] == 2
    config = json.loads((searched / "config.json").read_text())["config"]
    assert config["model"] == f"hf:{saved}" and config["formats"] == 2
    assert config["task"] == "addition" and config["task_options"] == TASK.options()
    evaluated = _evaluated(searched)
    assert set(evaluated["generation"]) == {0, 1, 2}
    assert {len(o) for o in evaluated["outcomes"]} == {len(a) for a in evaluated["answers"]} == {2}
    # the outcomes are the model's own, decoded afresh; most: the share of members failing
    outcomes, answers = judged(model, from_input_keys(list(evaluated["input"])))
    np.testing.assert_array_equal(np.array(list(evaluated["outcomes"])), outcomes.T)
    np.testing.assert_array_equal(np.array(list(evaluated["answers"])), answers.T)
    failed = outcomes != Outcome.CORRECT.value
    np.testing.assert_array_equal(evaluated["failed"], failed.sum(axis=0))
    np.testing.assert_allclose(evaluated["fitness"], failed.mean(axis=0))
    archive = pd.read_parquet(searched / "archive.parquet")
    assert set(archive["input"]) == set(evaluated.loc[evaluated["fitness"] >= 0.5, "input"])


def test_a_rerun_resumes_and_decodes_nothing(searched, saved, cli, monkeypatch):
    before = {p.name: p.read_bytes() for p in (searched / "generations").iterdir()}

    def refused(*args, **kwargs):
        raise AssertionError("a finished generation was decoded again")

    monkeypatch.setattr(PromptedModel, "candidates", refused)
    code, _, err = cli(*_argv(f"hf:{saved}", searched))
    assert code == 0, err
    assert {p.name: p.read_bytes() for p in (searched / "generations").iterdir()} == before


def test_the_report_names_the_model_and_its_members(searched, saved):
    text = (searched / "report.md").read_text()
    assert "# Failure search: addition" in text and "2 members" in text
    assert f"Model `hf:{saved}` (format=0 draw=0, format=1 draw=0)" in text
    assert "the share of members that fail it" in text and "seeds" not in text


def test_any_and_disagree_name_member_positions(saved, model, tmp_path, cli):
    out = tmp_path / "any"
    code, _, err = cli(*_argv(f"hf:{saved}", out, "--target", "any", "--tau", "1"))
    assert code == 0, err
    evaluated = _evaluated(out)
    failed = np.array(list(evaluated["outcomes"])) != Outcome.CORRECT.value
    np.testing.assert_array_equal(evaluated["fitness"], failed.any(axis=1).astype(float))
    out = tmp_path / "disagree"
    code, _, err = cli(*_argv(f"hf:{saved}", out, "--target", "disagree:1,0"))
    assert code == 0, err
    evaluated = _evaluated(out)
    failed = np.array(list(evaluated["outcomes"])) != Outcome.CORRECT.value
    np.testing.assert_array_equal(evaluated["fitness"], (failed[:, 0] & ~failed[:, 1]) * 1.0)
    assert "1 if member 1 (`format=1 draw=0`) is right" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--task", ""], "--task must be a task to ask the model"),
        (["--target", "disagree:0,2"], "two of the model's member positions (0, 1)"),
        (["--target", "best"], "disagree:A,B (A, B: member positions)"),
        (["--against", "run:."], "--against must be left out for a language model"),
        (["--concurrency", "4"], "not an OpenAI-compatible endpoint"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(saved, tmp_path, cli, argv, said):
    out = tmp_path / "out"
    code, _, err = cli(*_argv(f"hf:{saved}", out), *argv)
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_a_model_that_is_no_token_model_is_refused(tmp_path, cli):
    """An integration model asked another task than integration."""
    out = tmp_path / "out"
    code, _, err = cli("search", "--model", "sympy", "--task", "addition", "--out", str(out))
    assert (
        code == 2
        and "or an integration model (ckpt:, lc:, bundled:, sympy, py:, with --task integration)"
        in err
    ), err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
