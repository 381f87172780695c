"""The Chomsky-hierarchy tasks: their length splits and the rules where NNCH has quirks."""

import numpy as np
import pytest

from genprobe.errors import ConfigError
from genprobe.tasks import load_task
from genprobe.tasks.chomsky.base import parse_lengths
from genprobe.tasks.chomsky.dcf.modular_arithmetic_brackets import evaluate, expression
from genprobe.tasks.task import NO_ANSWER
from genprobe.tasks.tokens import encode_inputs, output_lines


def answers(name, *inputs, **options):
    task = load_task(name, options)
    src = encode_inputs(task.source_vocab, [(None, text.split()) for text in inputs], "test")
    return output_lines(task.target_vocab, task.solve(src))


def test_test_lengths_accept_lists_ranges_and_all():
    assert parse_lengths("41,50, 100") == (41, 50, 100)
    assert parse_lengths("41-44,60") == (41, 42, 43, 44, 60)
    assert parse_lengths("all") == tuple(range(41, 501))
    assert parse_lengths("41-500:46") == (41, 87, 133, 179, 225, 271, 317, 363, 409, 455)
    for bad in ("41,x", "0-3", "41-600", "", "41:3", "41-50:0"):
        with pytest.raises(ConfigError, match="test_lengths"):
            parse_lengths(bad)


def test_length_splits_hold_inputs_of_one_length_listed_or_not():
    task = load_task("reverse_string", {"test_lengths": "41,100"})
    assert task.suites() == ("test", "length_41", "length_100")
    examples = task.generate("length_123", 20, 0)  # not listed, still a split
    assert (examples.src > 0).sum(axis=1).tolist() == [123] * 20
    assert task.split_spec("length_123").disjoint and not task.split_spec("length_7").disjoint
    train = task.generate("train", 2_000, 0)
    lengths = (train.src > 0).sum(axis=1)
    assert lengths.min() == 1 and lengths.max() == 40 and abs(lengths.mean() - 20.5) < 1
    with pytest.raises(ConfigError, match="split must be one of"):
        task.split_spec("length_501")


def test_modular_arithmetic_has_odd_lengths_only_as_in_nnch():
    task = load_task("modular_arithmetic")
    assert set((task.generate("length_10", 30, 0).src > 0).sum(axis=1)) == {9}
    assert answers("modular_arithmetic", "2 - 3 * 4", "4 * 4 * 4 - 1") == ["0", "3"]
    task = load_task("modular_arithmetic")
    src = encode_inputs(task.source_vocab, [(None, ["1", "+"]), (None, ["+", "1", "2"])], "t")
    assert task.solve(src)[:, 0].tolist() == [NO_ANSWER, NO_ANSWER]


def test_odds_first_follows_the_paper_not_nnchs_code():
    # NNCH's code gives "0 1 1 1 0 1 0 0" (0-based odd indices first)
    assert answers("odds_first", "0 0 1 1 0 1 0 1") == ["0 1 0 0 0 1 1 1"]


def test_short_inputs_keep_nnchs_fixed_answers():
    assert answers("binary_multiplication", "1", "0 1") == ["", "0"]
    assert answers("binary_addition", "0 1", "0") == ["0 1", "0"]
    assert answers("solve_equation", "0", "0 0") == ["0", "0"]
    assert answers("missing_duplicate_string", "1") == ["1"]


def test_inputs_that_are_not_the_tasks_have_no_right_answer():
    task = load_task("solve_equation")
    src = encode_inputs(task.source_vocab, [(None, ["(", "1", "+", "2", ")", "=", "3"])], "test")
    assert task.solve(src)[:, 0].tolist() == [NO_ANSWER]  # no x
    nothing = np.zeros((1, 0), dtype=np.int64)
    assert not task.verify(src, nothing, np.array([0])).any()  # not even an empty output
    assert evaluate("((1+2)") is None and evaluate("(1+2)*") is None


def test_bracketed_expressions_have_the_length_asked_and_their_value():
    rng = np.random.default_rng(0)
    for length in (1, 2, 3, 4, 5, 9, 40, 200):
        text, value = expression(rng, length, mult=True)
        assert len(text) == length and evaluate(text) == value


def test_binary_numbers_are_never_zero_and_split_the_length():
    task = load_task("binary_addition")
    x = task.sample(np.random.default_rng(0), 500, 12)
    first = np.argmax(x == 2, axis=1)
    assert ((x == 2).sum(axis=1) == 1).all() and first.min() == 1 and first.max() == 10
    left = np.where(np.arange(12) < first[:, None], x, 0).any(axis=1)
    right = np.where(np.arange(12) > first[:, None], x, 0).any(axis=1)
    assert left.all() and right.all()
