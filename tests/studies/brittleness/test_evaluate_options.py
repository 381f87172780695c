"""`genprobe integration evaluate`'s options, written by `BrittlenessConfig`'s fields: the
config each set of arguments builds is the one the command built when it declared them by
hand (so a run's config hash stays what it was), its k 1 10 where none is given, shown so in
`--help`; bad input is one line and exit 2. No model runs: the command's run is replaced,
or refused before it starts."""

import pytest
import typer.main

from genprobe.cli import app
from genprobe.runs.provenance import config_hash
from genprobe.studies.brittleness.config import EVALUATE_KS, BrittlenessConfig


def _hand_written(model, data, ks=(1, 10), n=None, split=None, policy="strict",
                  deadline=2.0, workers=1, seed=43):  # fmt: skip
    """The config `integration evaluate` built when it declared its options by hand (its
    defaults those options had)."""
    return BrittlenessConfig(
        model=model,
        suites=("in-distribution",),
        sizes={} if n is None else {"in-distribution": n},
        ks=tuple(sorted(set(ks))),
        seed=seed, policy=policy, deadline=deadline, validation=str(data), split=split,
        workers=workers,
    )  # fmt: skip


@pytest.fixture
def built(cli, monkeypatch, tmp_path):
    """Run `integration evaluate ARGS…` on a problems file up to its run: (exit code, stderr,
    the config it built, the problems file)."""
    data = tmp_path / "problems.txt"
    data.write_text("x^2\n")
    made = []
    monkeypatch.setattr("genprobe.cli.brittleness._run", lambda config, out: made.append(config))

    def run(*args):
        code, _, err = cli("integration", "evaluate", "--model", "sympy", "--data", str(data),
                           *args)  # fmt: skip
        return code, err, made.pop() if made else None, data

    return run


@pytest.mark.parametrize(
    ("args", "old"),
    [
        ([], {}),
        (["--k", "10", "1", "1"], {"ks": (10, 1, 1)}),
        (["--k", "1,50", "--k", "10"], {"ks": (1, 50, 10)}),
        (["--seed", "7", "--policy", "generous", "--deadline", "3", "--n", "5"],
         {"seed": 7, "policy": "generous", "deadline": 3.0, "n": 5}),
        (["--split", "test", "--workers", "2", "--k", "50"],
         {"split": "test", "workers": 2, "ks": (50,)}),
        (["--seed", "43", "--policy", "strict", "--deadline", "2", "--k", "1", "10"], {}),
        (["--beam", "4", "--model-deadline", "1", "--deadline", "0.5"], {"deadline": 0.5}),
    ],
)  # fmt: skip
def test_evaluate_builds_the_config_its_hand_written_options_built(built, args, old):
    code, err, config, data = built(*args)
    assert code == 0, err
    expected = _hand_written(config.model, data, **old)
    assert config == expected
    assert config_hash(config.identity()) == config_hash(expected.identity())


def test_evaluates_k_is_1_10_unless_given_and_help_says_so():
    assert EVALUATE_KS == (1, 10) and BrittlenessConfig.ks != EVALUATE_KS  # its own default
    command = typer.main.get_command(app).commands["integration"].commands["evaluate"]
    params = {param.name: param for param in command.params}
    assert params["ks"].opts == ["--k"] and params["ks"].show_default == "1,10"
    for name, default in [("seed", 43), ("policy", "strict"), ("deadline", 2.0),
                          ("split", None), ("workers", 1)]:  # fmt: skip
        assert params[name].default == default == getattr(BrittlenessConfig, name)
    assert params["split"].help == "--data's split, for JSONL/Parquet datasets."
    own = {"model_spec", "data", "out", "n"}
    assert {"suites", "validation", "method", "solved_by", "train_data"}.isdisjoint(params)
    assert own <= set(params)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "nonsense"], "--policy must be strict or generous"),
        (["--k", "0"], "--k must be one or more positive integers"),
        (["--k", "1,x"], "--k must be an integer. Got 'x'"),
        (["--overlap", "off"], "No such option: --overlap"),
        (["--suites", "compositionality"], "No such option: --suites"),
    ],
)
def test_bad_evaluate_input_is_one_line_and_exit_2(cli, tmp_path, args, message):
    data = tmp_path / "problems.txt"
    data.write_text("x^2\n")
    out = tmp_path / "run"
    code, _, err = cli("integration", "evaluate", "--model", "sympy", "--data", str(data),
                       "--out", str(out), *args)  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not out.exists()
