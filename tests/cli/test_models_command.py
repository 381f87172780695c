"""`genprobe models` and `genprobe integration predict | score` end to end (`evaluate`: see
tests/studies/brittleness/test_brittleness.py)."""

import json

import pytest


def cli_answer(problem: str, k: int):
    """py: model for the CLI tests: right on polynomials x^n (as SymPy prints them), wrong else."""
    del k
    return ["x^3/3", "x"] if problem == "x**2" else ["x"]


@pytest.fixture
def problems(tmp_path):
    path = tmp_path / "problems.txt"
    path.write_text("x^2\n1|sub Y' cos x\tsin x\n\n3*x^2 + 2\n")
    return path


def test_models_lists_every_kind(cli):
    code, out, _ = cli("models", "--json")
    assert code == 0
    kinds = {json.loads(line)["kind"]: json.loads(line)["tasks"] for line in out.splitlines()}
    assert list(kinds) == ["ckpt", "lc", "bundled", "sympy", "openai", "py", "hf", "run"]
    assert kinds["run"] == kinds["hf"] == "token tasks" and kinds["ckpt"] == "integration"
    assert kinds["openai"] == "every task"


def test_predict_writes_ranked_candidates(cli, checkpoint, problems, tmp_path):
    out = tmp_path / "preds.jsonl"
    code, _, err = cli(
        "integration", "predict", "--model", f"ckpt:{checkpoint}",
        "--problems", str(problems), "--beam", "3", "--k", "2", "--max-len", "8",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0, err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["problem"] for r in records] == ["x^2", "sub Y' cos x", "3*x^2 + 2"]
    assert [r["line"] for r in records] == [1, 2, 4]
    for record in records:
        assert len(record["candidates"]) == 2
        first, second = record["candidates"]
        assert first["score"] >= second["score"]
        assert first["logprob"] < 0


def test_score_prints_log_probabilities(cli, checkpoint, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    lines = [
        {"problem": "2*x", "candidate": "x^2"},
        {"problem": ["cos", "x"], "candidate": "sin x"},
    ]
    pairs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, out, err = cli(
        "integration",
        "score",
        "--model",
        f"ckpt:{checkpoint}",
        "--input",
        str(pairs),
        "--json",
    )
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 2 and all(r["logprob"] < 0 for r in records)


def test_score_needs_a_model_with_probabilities(cli, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"problem": "2*x", "candidate": "x^2"}) + "\n")
    code, _, err = cli("integration", "score", "--model", "sympy", "--input", str(pairs))
    assert code == 2
    assert err.count("\n") == 1 and "log-probabilities" in err


def test_bad_input_is_one_line_and_exit_2(cli, tmp_path, problems):
    bad = tmp_path / "bad.txt"
    bad.write_text("x^2\nsin(\n")
    code, _, err = cli(
        "integration", "predict", "--model", "sympy", "--problems", str(bad),
        "--out", str(tmp_path / "p.jsonl"),
    )  # fmt: skip
    assert code == 2 and f"{bad}:2" in err and err.count("\n") == 1
    code, _, err = cli(
        "integration",
        "predict",
        "--model",
        "nope:x",
        "--problems",
        str(problems),
        "--out",
        "p",
    )
    assert code == 2 and "unknown model" in err
