"""The report's numbers beside the paper's, like with like: the same k, the paper's timeout rule,
the paper's beam (a paper cell from another beam is marked, a k the run lacks is left out)."""

import math

import pytest
from helpers import ranked_problems

from genprobe.studies.brittleness.compare import Beside, notes, paper_columns


def _config(ks, spec="ckpt:model", method="beam", beam=10, policy="strict"):
    decoding = {"method": method, "beam_size": beam}
    return {"ks": list(ks), "policy": policy, "model": {"spec": spec, "decoding": decoding}}


@pytest.mark.parametrize(
    ("config", "beam", "marked"),
    [
        (_config([1, 10]), 10, []),  # the paper's beam for Fail@1 and Fail@10
        (_config([1, 10, 50]), 50, [1, 10]),  # one beam of 50 for every k
        (_config([1, 10], beam=20), 20, [1, 10]),
        (_config([50]), 50, []),
        (_config([1, 10], method="greedy"), None, [1, 10]),
        (_config([1, 10], spec="sympy"), None, [1, 10]),
    ],
)
def test_a_paper_cell_is_marked_where_its_beam_is_not_the_runs(config, beam, marked):
    beside = Beside.of(config)
    assert beside.beam == beam
    assert [k for k in beside.shared((50, 10, 1)) if beside.marked(k)] == marked


def _problems():
    """Two groups: `a` solved at rank 1 once a timeout passes, at rank 3 strictly; `b` unsolved."""
    return ranked_problems([3, None], [1, None], template=["a", "b"])


def test_ours_under_the_papers_rule_sit_beside_the_papers_for_the_k_both_have():
    beside = Beside.of(_config([1, 2, 10], beam=12))
    numbers = {"a": (5.0, 6.0, 7.0)}  # the paper's order: Fail@50, Fail@10, Fail@1
    columns, marked = paper_columns(_problems(), ["template"], beside, numbers, (50, 10, 1))
    assert list(columns) == ["generous Fail@1", "paper Fail@1", "generous Fail@10", "paper Fail@10"]
    assert list(columns["generous Fail@1"]) == [0.0, 100.0]  # strictly, `a` fails at 1
    assert columns["paper Fail@1"][0] == 7.0 and math.isnan(columns["paper Fail@1"][1])
    assert columns["paper Fail@10"][0] == 6.0
    assert marked == {"paper Fail@1", "paper Fail@10"}  # beam 12, not the paper's 10
    assert notes(beside, (50, 10, 1)) == [
        "The paper's Fail@50 is left out: this run has no k = 50.",
        "† The paper's Fail@1, Fail@10 from a beam of 10; ours from one beam of 12 for every k "
        "(a beam of another width can rank its first candidates differently).",
    ]


def test_under_the_generous_policy_the_tables_own_columns_are_the_papers_rule():
    beside = Beside.of(_config([1, 10], policy="generous"))
    columns, marked = paper_columns(_problems(), ["template"], beside, {}, (10, 1))
    assert list(columns) == ["paper Fail@1", "paper Fail@10"] and marked == set()
    assert notes(beside, (10, 1)) == []
    sympy = Beside.of(_config([1, 10, 50], spec="sympy"))
    assert notes(sympy, (50, 10, 1)) == [
        "† The paper's Fail@1, Fail@10 from a beam of 10 and Fail@50 from a beam of 50; this "
        "model's candidates are its own answers, up to k per problem."
    ]
