"""The failure search on an integration model (`--model bundled:NAME|ckpt:|py:… --task
integration`): one member, mutated by the integration task's operators (SAGGA's equation-tree
rewrites among them) and judged by the task's verifier."""

import functools
import json

import pandas as pd
import pytest

from genprobe.tasks.integration import probes as integration_probes
from genprobe.tasks.integration.expression import to_sympy
from genprobe.tasks.integration.features import BOOLEAN
from genprobe.tasks.integration.prefix import from_prefix
from genprobe.tasks.probing import from_input_keys, input_keys
from genprobe.tasks.registry import load_task, task_probes
from genprobe.tasks.tokens import output_lines

MODEL = "py:test_integration_model:constant_times_x"
BASE = 10


def constant_times_x(problem: str, k: int) -> str:
    """py: integration model: c*x, right exactly where the integrand is a constant c."""
    del k
    return f"x*({problem})"


@pytest.fixture
def tags_given(monkeypatch):
    """The integration task's tags of the inputs it was asked to tag, by input key: its own
    `tag_failures` (SymPy's `integrate`) still answers, with half a CPU second per integrand
    instead of `TAG_SECONDS` (half the mutants here run past either)."""
    given: dict[str, tuple[str, str]] = {}
    tag_failures = integration_probes.IntegrationProbes.tag_failures

    def spied(self, src, workers=None):
        tags = tag_failures(self, src, workers)
        for key, found in zip(input_keys(src), tags, strict=True):
            assert key not in given  # each input tagged once
            given[key] = (found.kind, found.detail)
        return tags

    monkeypatch.setattr(integration_probes, "TAG_SECONDS", 0.5)
    monkeypatch.setattr(integration_probes.IntegrationProbes, "tag_failures", spied)
    return given


@pytest.mark.slow
def test_an_integration_model_is_searched_and_fails_exactly_the_inputs_it_cannot_solve(
    cli, tmp_path, tags_given
):
    out = tmp_path / "search"
    args = ["--model", MODEL, "--task", "integration", "--generations", "3", "--population", "10"]
    args += ["--mutants", "3", "--base-size", "10", "--target", "any", "--tau", "1"]
    code, _, err = cli("search", *args, "--selection", "kmeans", "--out", str(out))
    assert code == 0, err
    state = json.loads((out / "search.json").read_text())
    assert state["runs"]["A"]["members"] == [MODEL] and state["stop"] == "generations"
    evaluated = pd.concat(pd.read_parquet(p) for p in (out / "generations").glob("*.parquet"))
    assert evaluated["operator"].str.startswith("tree_").any()
    problems = load_task("integration").problems(from_input_keys(list(evaluated["input"])))
    constant = [not to_sympy(problem).free_symbols for problem in problems]
    assert (evaluated["fitness"] == 1).tolist() == [not c for c in constant]
    archived = pd.read_parquet(out / "archive.parquet")["input"]
    assert set(archived) == set(evaluated.loc[evaluated["fitness"] == 1, "input"])
    report = (out / "report.md").read_text()
    assert "1 member\n" in report and "(the fittest of 10 k-means clusters" in report
    # the operator families are booleans: their one-feature slices say so
    slices = pd.read_parquet(out / "slices.parquet")
    assert set(slices.loc[slices["boolean"], "feature"]) <= set(BOOLEAN)
    assert not slices.loc[~slices["boolean"], "feature"].isin(BOOLEAN).any()
    assert slices["boolean"].any()
    # each example shown is tagged as SAGGA tags its failures: has it an elementary F at all?
    found = json.loads((out / "clusters.json").read_text())["clusters"]
    examples = [e for c in found for e in c["examples"]]
    tags = [tags_given[e["input"]] for e in examples]
    assert [(e["tag"]["kind"], e["tag"]["detail"]) for e in examples] == tags
    tagged = sum(sum(c["tagged"].values()) for c in found)
    assert tagged == len(tags_given)  # asked of the task once, the tags it gave counted
    assert tagged == min(24, len(archived)) >= len(examples)
    assert "| kind |" in report and f"of the {tagged} archived inputs nearest" in report
    # --tag-limit 0: nothing tagged, and the report says nothing of kinds
    tags_given.clear()
    code, _, err = cli(
        "search", *args, "--selection", "kmeans", "--tag-limit", "0", "--out", str(out)
    )
    assert code == 0, err
    assert not any(
        "tagged" in c for c in json.loads((out / "clusters.json").read_text())["clusters"]
    )
    assert "| kind |" not in (out / "report.md").read_text() and not tags_given


@functools.cache
def base_antiderivatives() -> dict[str, str]:
    """F of each of the search's base integrands (the validation split, data seed 0), by text."""
    task = load_task("integration")
    examples = task.generate(task.validation_split, BASE, 0)
    problems = task_probes(task).input_text(examples.src)
    answers = output_lines(task.target_vocab, examples.tgt)
    return {p: str(from_prefix(a.split())) for p, a in zip(problems, answers, strict=True)}


def second_is_right(problem: str, k: int) -> list[str]:
    """py: integration model: a wrong first answer (0), then F where it knows F (the base)."""
    return ["0", base_antiderivatives().get(problem, "1")][:k]


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 2])
def test_at_k_a_member_fails_an_input_none_of_its_top_k_answers_solve(cli, tmp_path, k):
    out = tmp_path / "search"
    args = ["--model", "py:test_integration_model:second_is_right", "--task", "integration"]
    args += ["--generations", "1", "--population", "5", "--mutants", "2", "--base-size", str(BASE)]
    # --tag-limit 0: nothing here reads a tag (SymPy's integrate of each failure, the test above's)
    args += ["--target", "any", "--k", str(k), "--tag-limit", "0"]
    code, _, err = cli("search", *args, "--out", str(out))
    assert code == 0, err
    evaluated = pd.concat(pd.read_parquet(p) for p in sorted((out / "generations").glob("*.pa*")))
    known = base_antiderivatives()
    problems = load_task("integration").problems(from_input_keys(list(evaluated["input"])))
    assert evaluated["text"].tolist() == [str(p) for p in problems]  # infix, as SAGGA prints
    right = [k == 2 and text in known for text in evaluated["text"]]  # k = 1 asks only the 0
    assert sum(right) == (BASE if k == 2 else 0) and len(evaluated) > BASE
    assert (evaluated["fitness"] == 0).tolist() == right
    shown = [answers[0] for answers in evaluated["answers"]]
    assert [a != "0" for a in shown] == right  # the right answer, as SymPy prints it, if known
    said = "fails an input when none of its top 2" if k == 2 else "decodes greedily"
    assert said in (out / "report.md").read_text()


@pytest.mark.parametrize(
    "args, said",
    [
        (["--model", "bundled:integration-cpu"], "with --task integration"),
        (["--model", "bundled:integration-cpu", "--task", "scan"], "an integration model"),
    ],
)
def test_an_integration_model_without_the_integration_task_is_one_line(cli, tmp_path, args, said):
    out = tmp_path / "search"
    code, _, err = cli("search", *args, "--out", str(out))
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert not out.exists()


@pytest.mark.parametrize(
    "args, said",
    [
        (["--model", MODEL, "--breeder", "sagga"], "--task must be integration with --breeder"),
        (["--model", "run:{tmp}", "--task", "integration", "--breeder", "sagga"],
         "--model must be an integration model with --breeder sagga"),
        (["--model", MODEL, "--task", "integration", "--breeder", "sagga", "--mutants", "2"],
         "--mutants must be left out unless --breeder task"),
        (["--model", MODEL, "--task", "integration", "--basis", "x"],
         "--basis must be left out unless --breeder sagga"),
        (["--model", MODEL, "--task", "integration", "--breeder", "sag"], "did you mean sagga"),
    ],
)  # fmt: skip
def test_a_breeder_with_settings_it_does_not_take_is_one_line(cli, tmp_path, args, said):
    out = tmp_path / "search"
    args = [arg.format(tmp=tmp_path) for arg in args]  # run:{tmp}: a directory, no sweep's
    code, _, err = cli("search", *args, "--out", str(out))
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert not out.exists()
