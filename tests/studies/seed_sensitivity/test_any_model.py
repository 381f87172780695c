"""The seed study on any model, through the command line: a researcher's own module
(examples/my_model.py) runs the whole study, the old model flags still name their options,
and a model that breaks its contract is one line, exit 2, with nothing written."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

EXAMPLES = Path(__file__).parents[3] / "examples"
SCAN = ["--task", "scan", "--task-option", "split=length", "--seeds", "2", "--max-epochs", "1"]
SCAN += ["--train-size", "300", "--validation-size", "20", "--suite-size", "30"]
SCAN += ["--optimizer", "adam"]


@pytest.mark.slow
def test_a_users_model_runs_the_whole_study_and_reports_from_anywhere(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    monkeypatch.setattr("sys.path", list(sys.path))
    mine, lstm = tmp_path / "mine", tmp_path / "lstm"
    args = [*SCAN, "--arch", "py:my_model:build", "--model-option", "width=32"]
    assert cli("sweep", *args, "--out", str(mine), "--json")[0] == 0
    assert cli("sweep", *SCAN, "--out", str(lstm), "--json")[0] == 0
    stored = json.loads((mine / "config.json").read_text())
    assert stored["config"]["model"] == {
        "arch": "py:my_model:build",
        "options": {"dropout": 0.0, "heads": 4, "layers": 2, "stacking": "auto", "width": 32},
    }
    notes = stored["provenance"]["model"]
    assert notes["members_equal_alone"] and notes["stacking"] == "loop"
    assert stored["provenance"]["user_modules"]["my_model"] == str(EXAMPLES / "my_model.py")
    assert cli("compare", str(lstm), str(mine), "--out", str(tmp_path / "cmp"))[0] == 0
    compared = (tmp_path / "cmp" / "report.md").read_text()
    assert "py:my_model:build(dropout=0.0, heads=4, layers=2, width=32)" in compared
    # Another process, in another directory: the run says where its module was found.
    report = [sys.executable, "-m", "genprobe", "report", str(mine)]
    done = subprocess.run(report, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "each bit for bit its seed trained alone" in (mine / "report.md").read_text()


@pytest.mark.slow
def test_the_old_model_flags_set_the_architectures_options(cli, tmp_path):
    run = tmp_path / "run"
    args = ["--arch", "transformer", "--hidden", "16", "--heads", "2", "--layers", "1"]
    args += ["--ffn", "32", "--decoder-only", "--positions", "rope"]
    assert cli("sweep", *SCAN, *args, "--out", str(run), "--json")[0] == 0
    options = json.loads((run / "config.json").read_text())["config"]["model"]["options"]
    assert options["width"] == 16 and options["decoder_only"] and options["positions"] == "rope"
    assert options["dropout"] == 0.1  # what `--arch transformer` always had


BROKEN = """
from torch import nn


def build(shape, seed):
    raise RuntimeError("out of memory")


class Flat(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.emb = nn.Embedding(shape.src_vocab, 4)

    def forward(self, src, tgt_in):
        return self.emb(tgt_in)


def flat(shape, seed):
    return Flat(shape)


class Pair(Flat):
    def forward(self, src, tgt_in):
        return super().forward(src, tgt_in), None


def pair(shape, seed):
    return Pair(shape)


class Unmasked(Flat):
    def forward(self, src, tgt_in):
        raise ValueError("no mask given")


def unmasked(shape, seed):
    return Unmasked(shape)


def linear(shape, seed):
    return nn.Linear(3, 3)  # its forward takes (seq) but floats, not token ids
"""


def _line(text: str) -> str:
    """Where `text` is in broken_model.py, as a message names it."""
    return f"(broken_model.py, line {BROKEN.splitlines().index(text) + 1})"


BAD = {
    "unknown arch": (["--arch", "lsmt"], "unknown architecture 'lsmt'"),
    "no such option": (["--arch", "mlp", "--heads", "2"], "one of mlp's options: emb, hidden"),
    "no such model option": (
        ["--model-option", "width=3"],
        "model option must be one of recurrent's options",
    ),
    "option given twice": (
        ["--hidden", "8", "--model-option", "hidden=16"],
        "model option hidden is given twice",
    ),
    "not name=value": (["--model-option", "width"], "--model-option must be name=value"),
    "bad value": (["--model-option", "hidden=many"], "model option hidden must be an integer"),
    "builder raises": (
        ["--arch", "py:broken_model:build"],
        "py:broken_model:build: the builder raised RuntimeError: out of memory "
        + _line('    raise RuntimeError("out of memory")'),
    ),
    "wrong logits": (["--arch", "py:broken_model:flat"], "forward must return logits"),
    "no logits": (
        ["--arch", "py:broken_model:pair"],
        "py:broken_model:pair: forward must return logits (B, T, tgt_vocab) = (8, 18, 9); "
        "it returned tuple",
    ),
    "forward raises": (
        ["--arch", "py:broken_model:unmasked"],
        "py:broken_model:unmasked: forward(src: int64 (8, 9), tgt_in: int64 (8, 18)) raised "
        "ValueError: no mask given " + _line('        raise ValueError("no mask given")'),
    ),
    "forward raises in vmap": (
        ["--arch", "py:broken_model:unmasked", "--model-option", "stacking=vmap"],
        "raised ValueError: no mask given " + _line('        raise ValueError("no mask given")'),
    ),
    "forward of torch's raises": (
        ["--arch", "py:broken_model:linear"],
        "py:broken_model:linear: forward(seq: int64 (8, 27)) raised RuntimeError: mat1 and mat2 "
        "must have the same dtype",
    ),
    "no module": (["--arch", "py:no_such_module:build"], "cannot import 'no_such_module'"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_model_is_one_line_and_exit_2_with_nothing_written(case, cli, tmp_path, monkeypatch):
    (tmp_path / "broken_model.py").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", list(sys.path))
    monkeypatch.delitem(sys.modules, "broken_model", raising=False)  # this case's file
    args, message = BAD[case]
    code, _, err = cli("sweep", *SCAN, *args, "--out", str(tmp_path / "run"))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_an_mlp_sweep_runs_and_cuts_inputs_longer_than_its_own(cli, tmp_path):
    run = tmp_path / "mlp"
    args = ["--task", "parity_check", "--task-option", "test_lengths=41", "--seeds", "2"]
    args += ["--max-epochs", "2", "--train-size", "500", "--validation-size", "50"]
    args += ["--suite-size", "40", "--optimizer", "adam", "--arch", "mlp"]
    assert cli("sweep", *args, "--model-option", "hidden=32", "--out", str(run), "--json")[0] == 0
    assert "MLP over a fixed-length input (1 hidden layer of 32" in (run / "report.md").read_text()
    predictions = pd.read_parquet(run / "predictions" / "length_41.parquet")
    assert len(predictions) == 80 and set(predictions["seed"]) == {1, 2}
