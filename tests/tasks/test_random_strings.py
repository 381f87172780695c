"""`random_strings`, the sampling helper a task's `generate` can draw its inputs with."""

import numpy as np

from genprobe.tasks import random_strings
from genprobe.tasks.sampling import STRING_CHUNK


def test_strings_have_their_lengths_symbols_and_padding():
    src = random_strings(0, "train", 1_000, (3, 9), symbols=4)
    length = (src > 0).sum(axis=1)
    assert src.shape == (1_000, 9) and src.dtype == np.int64
    assert set(np.unique(length)) == set(range(3, 10))  # every length drawn
    assert set(np.unique(src[src > 0])) == {1, 2, 3, 4}
    assert ((src > 0) == (np.arange(9) < length[:, None])).all()  # padding only after


def test_the_first_n_strings_never_depend_on_n_and_the_split_and_seed_do():
    many = random_strings(7, "train", 3 * STRING_CHUNK + 5, (1, 8), symbols=5)
    for n in (1, STRING_CHUNK - 1, STRING_CHUNK + 1, 2 * STRING_CHUNK):
        assert (random_strings(7, "train", n, (1, 8), symbols=5) == many[:n]).all()
    assert not (random_strings(7, "test", 50, (1, 8), symbols=5) == many[:50]).all()
    assert not (random_strings(8, "train", 50, (1, 8), symbols=5) == many[:50]).all()
    assert random_strings(0, "train", 0, (1, 8), symbols=5).shape == (0, 8)
