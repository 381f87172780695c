"""How often the positive integers of a training set fall in each coefficient range: the
statistic Welleck et al. (2022) set beside Figure 2 ("99.4% of the positive integers were between
1 and 100 ... 0.096% between 1,000 and 2,000").

Every `INT+` literal of every pair's problem and antiderivative counts once (`INT+ 0` and the
negative `INT-` ones do not: the paper counts positive integers). The literals are read from the
prefix text (`prefix.integer_literals`), not parsed into expressions: 200,000 pairs take about 3 s.

Example:
    count_integers("data/bwd8.txt.train", [range(1, 100), range(100, 200)])
    -> IntegerCounts(total=40730, in_range=(40482, 65))  # 5,875 BWD pairs, max_ops 8
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from genprobe.tasks.integration.datasets import read_dataset
from genprobe.tasks.integration.prefix import integer_literals
from genprobe.tasks.integration.tabular import FORMATS as TABLE_FORMATS


@dataclass(frozen=True)
class IntegerCounts:
    total: int  # positive integers in the training pairs
    in_range: tuple[int, ...]  # how many of them fall in each range asked for, in order


def count_integers(path: str | Path, ranges: Sequence[range]) -> IntegerCounts:
    """The positive integers of the training pairs in `path`, counted per range: all of a text
    file (Lample & Charton keep each split in its own file), the `train` split of a JSONL or
    Parquet dataset (as `integration train` reads them).

    Raises:
        DataFormatError: a malformed line or row, no `split` column in a table (file and line).
    """
    split = "train" if Path(path).suffix in TABLE_FORMATS else None
    counts: Counter[int] = Counter()
    for row in read_dataset(path, split):
        counts.update(integer_literals(row.input))
        counts.update(integer_literals(row.output or ""))
    positive = {value: count for value, count in counts.items() if value > 0}
    return IntegerCounts(
        sum(positive.values()),
        tuple(sum(n for value, n in positive.items() if value in span) for span in ranges),
    )
