"""The grokking tables of Power et al. (2022): equation sets, grok's split, answers, bad input."""

import json

import numpy as np
import pytest

from genprobe.errors import ConfigError
from genprobe.tasks import load_task
from genprobe.tasks.binary_operation import OPERATIONS, BinaryOperation
from genprobe.tasks.conformance import check_task

# The first three equations "x y z" of openai/grok's `ArithmeticDataset.make_data(operator)`
# (grok/data.py at 3d64b1d: p = 97, shuffled with seed 0), printed by running their code beside
# this one; data seed 0 must give the same.
GROK_FIRST = {
    "x+y": ["66 47 16", "96 82 81", "41 92 36"],
    "x-y": ["66 47 19", "96 82 14", "41 92 46"],
    "x*y": ["66 47 95", "96 82 15", "41 92 86"],
    "x/y": ["77 47 78", "11 23 30", "18 3 6"],
    "x^2+y": ["66 47 38", "96 82 83", "41 92 27"],
    "x^3+y": ["66 47 35", "96 82 81", "41 92 46"],
    "x^2+y^2": ["66 47 66", "96 82 32", "41 92 57"],
    "x^2+xy+y^2": ["66 47 64", "96 82 47", "41 92 46"],
    "x^2+xy+y^2+x": ["66 47 33", "96 82 46", "41 92 87"],
    "x^3+xy": ["66 47 83", "96 82 14", "41 92 40"],
    "x^3+xy^2+y": ["66 47 38", "96 82 50", "41 92 4"],
    "x/y if y odd else x-y": ["66 47 53", "96 82 14", "41 92 46"],
    "x+y if x even else x*y": ["66 47 16", "96 82 81", "41 92 86"],
    "x+y if x even else x-y": ["66 47 16", "96 82 81", "41 92 46"],
}

# (x, y, z) worked out by hand, mod 97
BY_HAND = {
    "x+y": [(90, 10, 3), (0, 0, 0)],
    "x-y": [(3, 10, 90), (10, 3, 7)],
    "x*y": [(50, 2, 3), (96, 96, 1)],
    "x/y": [(1, 2, 49), (5, 3, 34), (0, 5, 0)],  # 2 · 49 = 98; 3 · 34 = 102
    "x^2+y": [(10, 0, 3), (2, 5, 9)],
    "x^3+y": [(5, 1, 29), (2, 1, 9)],  # 126 - 97
    "x^2+y^2": [(10, 1, 4), (3, 4, 25)],
    "x^2+xy+y^2": [(1, 2, 7), (10, 10, 9)],  # 300 - 291
    "x^2+xy+y^2+x": [(1, 2, 8), (10, 0, 13)],  # 110 - 97
    "x^3+xy": [(2, 3, 14), (5, 0, 28)],  # 125 - 97
    "x^3+xy^2+y": [(2, 3, 29), (0, 96, 96)],
    "x/y if y odd else x-y": [(5, 3, 34), (5, 4, 1), (1, 0, 1)],
    "x+y if x even else x*y": [(2, 3, 5), (3, 3, 9), (51, 2, 5)],  # 102 - 97
    "x+y if x even else x-y": [(2, 3, 5), (3, 5, 95), (96, 1, 0)],
}


def everything(task, seed=0):
    """Both splits whole, as (x, y, z) rows."""
    rows = {}
    for split in ("train", "held_out"):
        examples = task.generate(split, task.split_spec(split).size, seed)
        rows[split] = np.column_stack([examples.src[:, :2] - 1, examples.tgt[:, 0]])
    return rows


def ask(task, x, y):
    return task.solve(np.array([[x + 1, y + 1, task.p + 1]]))[0, 0]


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_every_operation_keeps_the_contract_at_a_small_prime(operation):
    check_task(BinaryOperation(operation, p=7), f"binary_operation {operation}")


def test_the_table_sizes_are_grok_s():
    assert BinaryOperation().equations == 97 * 97 == 9_409
    assert BinaryOperation("x/y").equations == 97 * 96  # y = 0 left out
    assert BinaryOperation("x/y if y odd else x-y").equations == 9_409
    splits = BinaryOperation(train_fraction=0.3).splits()
    assert splits["train"].size == round(0.3 * 9_409) == 2_823
    assert splits["held_out"].size == 9_409 - 2_823
    assert splits["held_out"].finite and splits["held_out"].disjoint


@pytest.mark.parametrize("operation", ["x+y", "x/y", "x/y if y odd else x-y"])
def test_train_and_held_out_are_disjoint_and_cover_the_table(operation):
    task = BinaryOperation(operation, p=13, train_fraction=0.3)
    rows = everything(task)
    pairs = [set(map(tuple, rows[s][:, :2].tolist())) for s in ("train", "held_out")]
    assert len(pairs[0]) == len(rows["train"]) == round(0.3 * task.equations)
    assert not pairs[0] & pairs[1]
    table = {(x, y) for x in range(13) for y in range(13) if operation != "x/y" or y}
    assert pairs[0] | pairs[1] == table


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_data_seed_0_gives_grok_s_own_first_equations(operation):
    examples = BinaryOperation(operation).generate("train", 3, 0)
    rows = np.column_stack([examples.src[:, :2] - 1, examples.tgt[:, 0]])
    assert [" ".join(map(str, r)) for r in rows.tolist()] == GROK_FIRST[operation]


def test_another_data_seed_shuffles_the_same_table_otherwise():
    task = BinaryOperation(p=11)
    first, second = everything(task, 0), everything(task, 1)
    assert not np.array_equal(first["train"], second["train"])
    same = [np.concatenate([r["train"], r["held_out"]]).tolist() for r in (first, second)]
    assert sorted(same[0]) == sorted(same[1])


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_each_operation_answers_as_worked_out_by_hand(operation):
    task = BinaryOperation(operation)
    for x, y, z in BY_HAND[operation]:
        assert ask(task, x, y) == z, (x, y)


def test_the_verifier_takes_only_the_right_answer_to_a_well_formed_equation():
    task = BinaryOperation("x/y", p=7)  # ids: x -> x + 1, "=" -> 8
    src = np.array([[4, 3, 8, 0], [4, 3, 8, 0], [4, 1, 8, 0], [4, 3, 0, 0], [4, 3, 8, 1]])
    out = np.array([[5], [4], [0], [5], [5]])  # 3 / 2 = 5 mod 7 (2 · 5 = 10)
    verdicts = task.verify(src, out, np.ones(5, dtype=int))
    # right; wrong; a division by 0; no "="; a token after "=": the last three have no answer
    assert verdicts.tolist() == [True, False, False, False, False]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"train_fraction": 1.0}, "train_fraction must be between 0 and 1, leaving both splits"),
        ({"train_fraction": 0}, "train_fraction must be between 0 and 1, leaving both splits"),
        ({"train_fraction": 1.5}, "train_fraction must be between 0 and 1, leaving both splits"),
        ({"train_fraction": -0.1}, "train_fraction must be between 0 and 1, leaving both splits"),
        (
            {"p": 2, "train_fraction": 0.1},
            "leaving both splits of the 4 equations non-empty. Got 0.1",
        ),
        (
            {"p": 2, "train_fraction": 0.9},
            "leaving both splits of the 4 equations non-empty. Got 0.9",
        ),
        ({"p": 1}, "p must be an integer in 2..1000. Got 1 instead"),
        ({"p": 1_009}, "p must be an integer in 2..1000"),
        ({"operation": "x/y", "p": 96}, "p must be a prime for operation x/y. Got 96 instead"),
        ({"operation": "x/y if y odd else x-y", "p": 9}, "p must be a prime for operation x/y if"),
        ({"operation": "x+z"}, "operation must be one of x+y, x-y"),
        ({"operation": "x/ y"}, "(did you mean x/y"),
    ],
)
def test_bad_options_are_config_errors(options, message):
    with pytest.raises(ConfigError) as error:
        BinaryOperation(**options)
    assert message in str(error.value)


def test_a_modulus_that_need_not_be_prime_is_taken():
    assert BinaryOperation("x*y", p=96).equations == 96 * 96
    assert BinaryOperation("x+y", p=2, train_fraction=0.5).splits()["train"].size == 2


def test_options_given_as_text_are_converted_and_checked():
    task = load_task(
        "binary_operation", {"operation": "x^3+xy", "p": "13", "train_fraction": "0.3"}
    )
    assert task.options() == {"operation": "x^3+xy", "p": 13, "train_fraction": 0.3}
    with pytest.raises(ConfigError, match="train_fraction"):
        load_task("binary_operation", {"train_fraction": "1.5"})


@pytest.mark.parametrize(
    "options, message",
    [
        (["train_fraction=1.5"], "train_fraction must be between 0 and 1, leaving both splits"),
        (["operation=x/y", "p=96"], "p must be a prime for operation x/y. Got 96 instead."),
    ],
)
def test_the_cli_turns_a_bad_option_into_one_line(cli, tmp_path, options, message):
    out = tmp_path / "out.jsonl"
    flags = [f for option in options for f in ("--task-option", option)]
    code, _, err = cli(
        "task", "generate", "binary_operation", "--split", "train", *flags, "--out", str(out)
    )
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_the_cli_writes_and_judges_the_held_out_equations(cli, tmp_path):
    out = tmp_path / "held.jsonl"
    flags = ["--task-option", "operation=x/y if y odd else x-y", "--task-option", "p=11"]
    code, _, _ = cli(
        "task", "generate", "binary_operation", "--split", "held_out", *flags, "--out", str(out)
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 0 and len(rows) == 121 - 60 and rows[0]["input"].endswith(" =")
    code, printed, _ = cli(
        "task", "check", "binary_operation", "--input", str(out), *flags, "--json"
    )
    assert code == 0 and json.loads(printed)["accuracy"] == 1.0
