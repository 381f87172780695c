"""`genprobe integration suite`, run through the real entry point."""

import json

import pytest

from genprobe.cli import main
from genprobe.tasks.integration.suites import read_suite, robustness_simple


@pytest.fixture
def cli(capsys):
    """Run `genprobe integration suite ARGV…`: (exit code, stdout, stderr)."""

    def run(*argv):
        code = 0
        try:
            main(["integration", "suite", *map(str, argv)])
        except SystemExit as exit_:
            code = exit_.code
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def test_builds_a_suite_and_prints_rows_per_set(cli, tmp_path):
    out = tmp_path / "robustness.parquet"
    code, _, err = cli("robustness-simple", "--n", 2, "--seed", 7, "--out", out)
    assert code == 0
    frame = read_suite(out)
    assert len(frame) == 116 and frame.equals(robustness_simple(2, 7))
    assert "simple_coeff1_range" in err and "84" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["robustnes-simple"], "did you mean robustness-simple"),
        (["compositionality"], "--solved must be a results file"),
        (["validation-primitives"], "--validation must be a dataset file"),
        (["robustness-simple", "--n", "0"], "n must be at least 1"),
        (["robustness-simple", "--n", "20000"], "the number of tuples must be at most 9801"),
        (["operator-extrapolation", "--train-max-ops", "0"], "--train-max-ops must be at least 1"),
    ],
)
def test_bad_requests_exit_2_with_one_line(cli, tmp_path, argv, message):
    out = tmp_path / "suite.jsonl"
    code, _, err = cli(*argv, "--out", out)
    assert code == 2
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_bad_output_name_fails_before_building(cli, tmp_path):
    code, _, err = cli("robustness-simple", "--out", tmp_path / "suite.csv")
    assert code == 2 and ".jsonl or .parquet" in err


@pytest.mark.slow
def test_operator_extrapolation_from_the_models_training_max_ops(cli, tmp_path):
    out = tmp_path / "ops.jsonl"
    # the smallest max_ops (0 is refused: test_bad_requests_exit_2_with_one_line), one worker:
    # rounds of 2 generation attempts, not 4, of at most 21 operators, not 25
    code, _, err = cli(
        "operator-extrapolation", "--train-max-ops", 1, "--n", 1, "--workers", 1, "--out", out
    )
    assert code == 0, err
    assert list(read_suite(out)["set"]) == ["ops_1-1", "ops_6", "ops_11", "ops_16", "ops_21"]


def _results(suite_path, results_path):
    """A results file that says the model solved every problem of a suite at top-1."""
    frame = read_suite(suite_path)[["problem", "set", "reference"]]
    lines = [json.dumps({**record, "first_correct_rank": 1}) for record in frame.to_dict("records")]
    results_path.write_text("\n".join(lines) + "\n")
    return results_path


def test_validation_primitives_then_perturbations(cli, tmp_path):
    valid = tmp_path / "prim_fwd.valid"
    valid.write_text(
        "3|sub Y' mul INT+ 2 x\tpow x INT+ 2\n2|sub Y' cos x\tsin x\n"
        "1|sub Y' asin x\tadd mul x asin x sqrt add INT+ 1 mul INT- 1 pow x INT+ 2\n"
    )
    primitives = tmp_path / "primitives.jsonl"
    code, _, err = cli("validation-primitives", "--validation", valid, "--out", primitives)
    assert code == 0 and "1 rows left out" in err
    assert read_suite(primitives)["source_rows"].tolist() == [[1], [2]]
    results = _results(primitives, tmp_path / "results.jsonl")
    out = tmp_path / "perturbed.jsonl"
    code, _, _ = cli("robustness-validation", "--solved", results, "--n", 4, "--out", out)
    assert code == 0
    frame = read_suite(out)
    assert frame.groupby("set").size().to_dict() == {
        "coeff_k*f": 4, "coeff_f/k": 4, "add_exp": 2, "add_ln": 2,
    }  # fmt: skip
    valid.write_text("3|sub Y' mul INT+ 2\tpow x INT+ 2\n")
    code, _, err = cli("validation-primitives", "--validation", valid, "--out", primitives)
    assert code == 2 and "prim_fwd.valid:1: column 'problem'" in err


def test_solved_by_code_takes_primitives_that_passed_below_rank_1(cli, tmp_path):
    valid = tmp_path / "prim_fwd.valid"
    valid.write_text("3|sub Y' mul INT+ 2 x\tpow x INT+ 2\n2|sub Y' cos x\tsin x\n")
    primitives = tmp_path / "primitives.jsonl"
    assert cli("validation-primitives", "--validation", valid, "--out", primitives)[0] == 0
    frame = read_suite(primitives)[["problem", "set", "reference"]]
    results = tmp_path / "results.jsonl"
    ranks = {"first_correct_rank": None, "first_generous_rank": 3}  # a timeout passed at 3
    results.write_text("".join(json.dumps({**r, **ranks}) + "\n" for r in frame.to_dict("records")))
    out = tmp_path / "perturbed.jsonl"
    argv = ("robustness-validation", "--solved", results, "--n", 4, "--out", out)
    assert cli(*argv, "--solved-by", "code")[0] == 0
    assert sorted(set(read_suite(out)["source_rows"].sum())) == [1, 2]
    code, _, err = cli(*argv)  # the paper's criterion: nothing solved at rank 1
    assert code == 2, err


def test_compositionality_from_solved_simple_primitives(cli, tmp_path):
    simple = tmp_path / "simple.jsonl"
    assert cli("robustness-simple", "--n", 3, "--out", simple)[0] == 0
    results = _results(simple, tmp_path / "results.jsonl")
    out = tmp_path / "comp.jsonl"
    code, _, _ = cli("compositionality", "--solved", results, "--n", 5, "--out", out)
    assert code == 0
    frame = read_suite(out)
    # 21 solved simple_coeff1 primitives, 24 exponents; no validation primitives
    assert frame.groupby(["set", "k"]).size().to_dict() == {
        (family, k): 5 for family in ("comp_coeff", "comp_exp") for k in (2, 3, 4)
    }
    code, _, err = cli("compositionality", "--solved", results, "--n", 500, "--out", out)
    assert code == 2 and "at most 441" in err


def test_in_distribution_from_a_jsonl_dataset(cli, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(
        '{"split": "valid", "input": "sub Y\' cos x", "output": "sin x"}\n'
        '{"split": "test", "input": "sub Y\' exp x", "output": "exp x"}\n'
    )
    out = tmp_path / "in.jsonl"
    code, _, _ = cli("in-distribution", "--validation", data, "--split", "test", "--out", out)
    assert code == 0
    frame = read_suite(out)
    assert frame["problem"].tolist() == ["exp x"] and frame["source_rows"].tolist() == [[2]]
