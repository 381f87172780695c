"""Sparse parity (Barak et al. 2022): the rule, the fixed subset, disjoint halves, bad input."""

import numpy as np
import pytest

from genprobe.errors import ConfigError
from genprobe.tasks import load_task
from genprobe.tasks.conformance import check_task
from genprobe.tasks.sparse_parity import SparseParity, held_out_half


def every_string(n):
    return (np.arange(2**n)[:, None] >> np.arange(n)) & 1


@pytest.mark.parametrize("options", [{"n": 2, "k": 2}, {"n": 10, "k": 10}, {"n": 7, "k": 1}])
def test_small_settings_keep_the_contract(options):
    check_task(SparseParity(**options), "sparse_parity")


def test_the_label_is_the_parity_of_the_relevant_bits_only():
    task = SparseParity(n=12, k=4, subset_seed=3)
    relevant = task.relevant.tolist()
    assert len(set(relevant)) == 4 and relevant == sorted(relevant)
    bits = every_string(12)
    labels = task.solve(bits + 1)[:, 0]
    assert labels.tolist() == (bits[:, relevant].sum(axis=1) % 2).tolist()
    noise = next(i for i in range(12) if i not in relevant)
    flipped = bits.copy()
    flipped[:, noise] ^= 1
    assert np.array_equal(task.solve(flipped + 1)[:, 0], labels)


def test_the_subset_follows_from_the_options_alone():
    assert SparseParity().relevant.tolist() == SparseParity().relevant.tolist() == [20, 24, 32]
    assert SparseParity(subset_seed=1).relevant.tolist() != [20, 24, 32]
    assert SparseParity(n=5, k=5).relevant.tolist() == [0, 1, 2, 3, 4]


def test_train_and_held_out_come_from_the_two_halves_of_all_strings():
    task = SparseParity(n=10, k=3)
    half = held_out_half(every_string(10))
    train, held = (task.generate(s, 2_000, 0).src - 1 for s in ("train", "held_out"))
    assert not held_out_half(train).any() and held_out_half(held).all()
    # both draw (close to) uniformly within their half: most of each half turns up
    codes = every_string(10) @ (1 << np.arange(10))
    for drawn, inside in ((train, ~half), (held, half)):
        seen = np.unique(drawn @ (1 << np.arange(10)))
        assert set(seen) <= set(codes[inside]) and len(seen) > 0.8 * inside.sum()


@pytest.mark.parametrize("n", range(2, 15))
def test_both_halves_hold_strings_from_two_bits_on(n):
    half = held_out_half(every_string(n))
    assert half.any() and not half.all()


def test_default_splits_are_balanced_fresh_draws():
    task = SparseParity()
    train = task.generate("train", 20_000, 0)
    assert abs(train.tgt.mean() - 0.5) < 0.02 and abs((train.src - 1).mean() - 0.5) < 0.01
    assert len(np.unique(train.src, axis=0)) == 20_000
    assert not np.array_equal(train.src[:100], task.generate("train", 100, 1).src)


def test_the_verifier_rejects_a_wrong_bit_and_a_malformed_string():
    task = SparseParity(n=4, k=2)
    # "1 1 1 1": two relevant ones -> 0; then a wrong answer, 3 bits, and a fifth token
    src = np.array([[2, 2, 2, 2, 0], [2, 2, 2, 2, 0], [2, 2, 2, 0, 0], [2, 2, 2, 2, 1]])
    out = np.array([[0], [1], [0], [0]])
    verdicts = task.verify(src, out, np.ones(4, dtype=int))
    assert verdicts.tolist() == [True, False, False, False]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"k": 0}, "k must be an integer in 1..n (40). Got 0 instead"),
        ({"k": 41}, "k must be an integer in 1..n (40). Got 41 instead"),
        ({"n": 0}, "n must be an integer in 2..1000. Got 0 instead"),
        ({"n": 1, "k": 1}, "n must be an integer in 2..1000. Got 1 instead"),
        ({"subset_seed": -1}, "subset_seed must be an integer >= 0"),
    ],
)
def test_bad_options_are_config_errors(options, message):
    with pytest.raises(ConfigError) as error:
        SparseParity(**options)
    assert message in str(error.value)


def test_the_cli_turns_a_bad_option_into_one_line(cli, tmp_path):
    out = tmp_path / "out.jsonl"
    args = ["task", "generate", "sparse_parity", "--split", "train", "--task-option", "k=50"]
    code, _, err = cli(*args, "--out", str(out))
    assert code == 2 and "k must be an integer in 1..n (40)" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
    assert load_task("sparse_parity", {"n": "8", "k": "2"}).options() == {
        "n": 8, "k": 2, "subset_seed": 0
    }  # fmt: skip
