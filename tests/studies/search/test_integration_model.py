"""The failure search on an integration model (`--model bundled:NAME|ckpt:|py:… --task
integration`): one member, mutated by the integration task's operators (SAGGA's equation-tree
rewrites among them) and judged by the task's verifier."""

import json

import pandas as pd
import pytest

from genprobe.studies.search.evolve import from_keys
from genprobe.tasks.integration.expression import to_sympy
from genprobe.tasks.registry import load_task

MODEL = "py:test_integration_model:constant_times_x"


def constant_times_x(problem: str, k: int) -> str:
    """py: integration model: c*x, right exactly where the integrand is a constant c."""
    del k
    return f"x*({problem})"


@pytest.mark.slow
def test_an_integration_model_is_searched_and_fails_exactly_the_inputs_it_cannot_solve(
    cli, tmp_path
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
    problems = load_task("integration").problems(from_keys(list(evaluated["input"])))
    constant = [not to_sympy(problem).free_symbols for problem in problems]
    assert (evaluated["fitness"] == 1).tolist() == [not c for c in constant]
    archived = pd.read_parquet(out / "archive.parquet")["input"]
    assert set(archived) == set(evaluated.loc[evaluated["fitness"] == 1, "input"])
    report = (out / "report.md").read_text()
    assert "1 member\n" in report and "(the fittest of 10 k-means clusters" in report


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
