"""The positive integers of a training set per coefficient range (Figure 2's statistic)."""

import json

import pytest

from genprobe.errors import DataFormatError
from genprobe.tasks.integration.integer_counts import count_integers

RANGES = (range(1, 100), range(100, 200), range(1000, 2000))


def test_counts_the_positive_integers_of_problems_and_antiderivatives(tmp_path):
    data = tmp_path / "pairs.train"
    data.write_text(
        "3|sub Y' mul INT+ 1 5 0 x\tmul INT+ 7 5 pow x INT+ 2\n"  # 150, 75, 2
        "1|sub Y' add x INT- 3\tmul div INT+ 1 INT+ 2 pow x INT+ 0\n"  # 1, 2 (-3 and 0 are not)
        "1|sub Y' mul INT+ 1 2 3 4 x\tmul INT+ 6 1 7 pow x INT+ 2\n"  # 1234, 617, 2
    )
    counts = count_integers(data, RANGES)
    assert counts.total == 8 and counts.in_range == (5, 1, 1)


def test_a_table_counts_its_train_split_only(tmp_path):
    data = tmp_path / "pairs.jsonl"
    rows = [
        {"split": "train", "input": "sub Y' INT+ 5", "output": "mul INT+ 5 x"},
        {"split": "test", "input": "sub Y' INT+ 1 5 0", "output": "mul INT+ 1 5 0 x"},
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert count_integers(data, RANGES).in_range == (2, 0, 0)
    data.write_text(json.dumps({"input": "sub Y' INT+ 5", "output": "x"}) + "\n")
    with pytest.raises(DataFormatError, match="split"):
        count_integers(data, RANGES)
