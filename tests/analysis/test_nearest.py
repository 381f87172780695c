"""The nearest training example by edit distance over tokens, against a Levenshtein written
out as its dynamic programme; ties to the first; per member among the examples it may use."""

import numpy as np
import pytest
from helpers import levenshtein

from genprobe.analysis import nearest as module
from genprobe.analysis.nearest import distances, nearest


@pytest.fixture
def sequences():
    rng = np.random.default_rng(1)
    make = lambda n: [[f"t{x}" for x in rng.integers(0, 4, rng.integers(1, 7))] for _ in range(n)]  # noqa: E731
    return make(30), make(50)


def test_the_nearest_choice_and_its_distance_are_the_programmes(sequences, monkeypatch):
    queries, choices = sequences
    monkeypatch.setattr(module, "CELLS", 120)  # queries in chunks of two
    index, distance = nearest(queries, choices)
    for q, i, d in zip(queries, index, distance, strict=True):
        every = [levenshtein(q, c) for c in choices]
        assert (i, d) == (int(np.argmin(every)), min(every))  # argmin: the first of the nearest


def test_each_member_chooses_among_the_examples_it_may_use(sequences):
    queries, choices = sequences
    allowed = np.random.default_rng(2).random((3, 50)) < 0.5
    allowed[2] = False
    index, distance = nearest(queries, choices, allowed)
    assert index.shape == (3, 30) and (index[2] == -1).all() and (distance[2] == -1).all()
    for member in (0, 1):
        for q, i, d in zip(queries, index[member], distance[member], strict=True):
            every = [levenshtein(q, c) if allowed[member, k] else 99 for k, c in enumerate(choices)]
            assert (i, d) == (int(np.argmin(every)), min(every)) and allowed[member, i]


def test_pairwise_distances_and_tokens_are_not_characters(sequences):
    queries, choices = sequences
    assert distances(queries, choices[:30]).tolist() == [
        levenshtein(a, b) for a, b in zip(queries, choices[:30], strict=True)
    ]
    assert distances([["1", "2"]], [["12"]]).tolist() == [2]
    with pytest.raises(ValueError, match="2 sequences against 1"):
        distances([["a"], ["b"]], [["a"]])


def test_a_distance_of_its_own_is_used_for_the_nearest():
    def length_gap(a, b, **_):  # RapidFuzz passes its keyword arguments to any scorer
        return abs(len(a) - len(b)) + 0.5

    queries = [["a"], ["a", "b", "c", "d"]]
    choices = [["x", "y", "z"], ["a", "b"], ["q"]]
    index, found = nearest(queries, choices, distance=length_gap)
    assert index.tolist() == [2, 0] and found.tolist() == [0.5, 1.5]  # not edit distance's [1, 1]
    assert nearest(queries, choices)[0].tolist() == [1, 1]
