import numpy as np
import pytest

from genprobe.errors import ConfigError
from genprobe.tasks.rewriting.grammar import Grammar
from genprobe.tasks.rewriting.suites import SPLITS, generate
from genprobe.tasks.rewriting.validity import valid_outputs


def lengths(src: np.ndarray) -> np.ndarray:
    return (src > 0).sum(axis=1)


def runs(row: np.ndarray) -> list[tuple[int, int]]:
    """(symbol, run length) of adjacent runs."""
    row = row[row > 0]
    change = np.flatnonzero(np.diff(row)) + 1
    return [(int(part[0]), len(part)) for part in np.split(row, change)]


@pytest.mark.parametrize("split", ["train", "validation", "standard", "short", "long"])
def test_distinct_suites(split):
    spec = SPLITS[split]
    ex = generate(split, 1500, seed=3)
    lo, hi = spec.lengths
    n = lengths(ex.src)
    assert n.min() == lo and n.max() == hi
    assert all(len(set(r[r > 0])) == len(r[r > 0]) for r in ex.src)
    assert valid_outputs(Grammar(), ex.src, ex.tgt, (ex.tgt >= 0).sum(1)).all()


@pytest.mark.parametrize("split", ["repeat", "uncharacteristic"])
def test_repeat_suites_are_adjacent_runs(split):
    lo, hi = SPLITS[split].lengths
    ex = generate(split, 1500, seed=3)
    n = lengths(ex.src)
    assert n.min() == lo and n.max() == hi
    for row in ex.src:
        r = runs(row)
        symbols = [s for s, _ in r]
        assert len(set(symbols)) == len(symbols)  # a symbol stands in one run only
        assert max(length for _, length in r) >= 2
        assert max(length for _, length in r) <= 6


def test_every_split_is_disjoint_from_train_by_input():
    train = {tuple(r[r > 0]) for r in generate("train", 100_000, seed=0).src}
    for split in ("validation", "standard", "repeat", "short", "long"):
        assert not {tuple(r[r > 0]) for r in generate(split, 2000, seed=0).src} & train


def test_same_seed_same_data_and_prefix_stable():
    a = generate("standard", 300, seed=5)
    b = generate("standard", 12_000, seed=5)
    assert np.array_equal(a.src, b.src[:300]) and np.array_equal(a.tgt, b.tgt[:300])
    c = generate("standard", 300, seed=6)
    assert not np.array_equal(a.src, c.src)
    assert not np.array_equal(generate("validation", 300, seed=5).src, a.src)


def test_bad_requests():
    with pytest.raises(ConfigError):
        generate("medium", 10, seed=0)
    with pytest.raises(ConfigError):
        generate("short", 0, seed=0)
    with pytest.raises(ConfigError):
        generate("long", 10, seed=0, grammar=Grammar(n_symbols=12))


def test_local_structures_are_the_adjacent_symbol_pairs():
    from genprobe.tasks.rewriting.task import RewritingTask

    assert RewritingTask().local_structures(["D", "FS", "E", "E"]) == ("D FS", "FS E", "E E")
    assert RewritingTask().local_structures(["D"]) == ()
