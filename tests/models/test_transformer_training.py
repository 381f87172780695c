"""`genprobe integration train`: learns, validates with the verifier, checkpoints, resumes."""

import json

import pytest
import sympy as sp

from genprobe.models.registry import load_model
from genprobe.tasks.integration import X, from_sympy, problem_prefix, to_prefix


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """L&C text format: `count|sub Y' f<TAB>F` for F = c·x^n and c·sin(x) + x."""
    lines = []
    for c in range(1, 6):
        for F in [c * X**n for n in range(2, 6)] + [c * sp.sin(X) + X]:
            f = sp.diff(F, X)
            lines.append(
                f"1|{' '.join(problem_prefix(from_sympy(f)))}\t{' '.join(to_prefix(from_sympy(F)))}"
            )
    path = tmp_path_factory.mktemp("data") / "pairs.train"
    path.write_text("\n".join(lines) + "\n")
    return path


def train(cli, data, out, *extra):
    code, _, err = cli(
        "integration", "train", "--data", str(data), "--out", str(out),
        "--batch-size", "8", "--valid-size", "5", "--warmup", "5", "--lr", "3e-3",
        "--max-len", "40", "--device", "cpu", *extra,
    )  # fmt: skip
    return code, err


def test_training_lowers_the_loss_and_writes_a_usable_checkpoint(cli, data, tmp_path):
    out = tmp_path / "run"
    code, err = train(cli, data, out, "--epochs", "4", "--epoch-size", "64")
    assert code == 0, err
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in metrics] == [0, 1, 2, 3]
    assert metrics[-1]["train_loss"] < metrics[0]["train_loss"]
    assert all(0.0 <= m["valid_fail@1"] <= 1.0 and m["valid_size"] == 5 for m in metrics)
    model = load_model(f"ckpt:{out}")
    assert len(model.candidates([from_sympy(2 * X)], k=2)[0]) == 2


def test_an_interrupted_run_resumes_after_its_last_epoch(cli, data, tmp_path):
    out = tmp_path / "run"
    code, err = train(cli, data, out, "--epochs", "2", "--epoch-size", "32", "--max-minutes", "0")
    assert code == 0, err
    first = (out / "metrics.jsonl").read_text().splitlines()
    assert len(first) == 1  # stopped after one step, validated and saved epoch 0
    code, err = train(cli, data, out, "--epochs", "2", "--epoch-size", "32")
    assert code == 0, err
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in metrics] == [0, 1]
    assert metrics[1]["step"] == metrics[0]["step"] + 4
    code, err = train(cli, data, out, "--epochs", "3", "--epoch-size", "32")
    assert code == 2 and "different run" in err
