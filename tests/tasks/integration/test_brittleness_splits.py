"""The brittleness study's suites that need no model, as splits of the integration token task:
the same problems and references as the study's builders make, so `probe` decodes what
`integration brittleness` decodes."""

from collections import Counter

import pytest

from genprobe.errors import ConfigError
from genprobe.runs.cpus import usable_cpus
from genprobe.tasks.integration.suites import splits
from genprobe.tasks.integration.suites.operators import operator_extrapolation
from genprobe.tasks.integration.suites.simple import integer_extrapolation, robustness_simple
from genprobe.tasks.registry import load_task
from genprobe.tasks.tokens import encode_inputs, encode_outputs, input_lines, output_lines


@pytest.fixture
def small_pools(monkeypatch):
    """The seeded-order splits drawn at N = 3 instead of the paper's 500 (174 and 126 problems),
    so that a whole split can be built here."""
    monkeypatch.setattr(splits, "PAPER_N", 3)
    splits._pool.cache_clear()
    yield
    splits._pool.cache_clear()


def _right(task, problem: str, reference: str) -> bool:
    """Whether `reference` is an antiderivative of `problem` (prefix tokens), as the task's
    verifier finds it."""
    src = encode_inputs(task.source_vocab, [(None, problem.split())], "test")
    tgt, length = encode_outputs(task.target_vocab, [reference.split()])
    return bool(task.verify(src, tgt, length)[0])


def pairs(task, examples):
    return Counter(
        zip(
            input_lines(task.source_vocab, examples.src),
            output_lines(task.target_vocab, examples.tgt),
            strict=True,
        )
    )


@pytest.mark.parametrize(
    ("split", "build"),
    [("robustness-simple", robustness_simple), ("integer-extrapolation", integer_extrapolation)],
)
def test_a_whole_split_is_the_studys_suite_in_another_order(small_pools, split, build):
    task = load_task("integration")
    table = build(n=3, seed=7)
    examples = task.generate(split, len(table), 7)
    assert pairs(task, examples) == Counter(zip(table["problem"], table["reference"], strict=True))
    first = input_lines(task.source_vocab, examples.src[:20])
    assert first != list(table["problem"][:20])  # drawn across the suite's sets, not its head
    with pytest.raises(ConfigError, match=f"all of split {split}"):
        task.generate(split, len(table) + 1, 7)


def test_another_seed_draws_other_problems_and_every_reference_is_right():
    task = load_task("integration")
    seeded = [task.generate("robustness-simple", 30, seed) for seed in (43, 44)]
    assert pairs(task, seeded[0]) != pairs(task, seeded[1])
    for examples in seeded:
        lengths = (examples.tgt >= 0).sum(axis=1)
        assert task.verify(examples.src, examples.tgt, lengths).all()


def test_operator_extrapolation_at_five_n_is_the_studys_suite_at_n(monkeypatch):
    # the study's builder, made once (about a CPU second per problem): the split must ask it
    # for the study's suite at N = 1 and hand out its problems a set each in turn
    built = []

    def builder(*args, **kwargs):
        built.append((args, kwargs, operator_extrapolation(*args, **kwargs)))
        return built[-1][2]

    monkeypatch.setattr(splits, "operator_extrapolation", builder)
    splits.suite_table.cache_clear()  # a table made before would not call the builder
    task = load_task("integration", {"max_ops": 1})  # the fewest operators: sets of up to 21
    examples = task.generate("operator-extrapolation", 5, 43)
    [(args, kwargs, table)] = built  # the study's suite, built once
    assert args == (1, 43) and kwargs == {"method": "bwd", "workers": usable_cpus(), "max_ops": 1}
    split = list(
        zip(
            output_lines(task.target_vocab, examples.tgt),
            input_lines(task.source_vocab, examples.src),
            strict=True,
        )
    )
    study = dict(zip(table["reference"], table["problem"], strict=True))
    assert [f for f, _ in split] == list(study)  # the same antiderivatives F, in its order
    assert dict(split) == study  # and the same problems, each a right pair
    assert all(_right(task, problem, f) for f, problem in split)
    # a set each in turn: the training settings (ops_1-1), then exactly 6, 11, 16 and 21 operators
    by_reference = dict(zip(table["reference"], table["set"], strict=True))
    sets = [by_reference[f] for f, _ in split]
    assert sets == ["ops_1-1", "ops_6", "ops_11", "ops_16", "ops_21"]


def test_only_the_cheap_splits_are_default_suites():
    task = load_task("integration")
    assert task.suites() == ("test", "robustness-simple", "integer-extrapolation")
    assert "operator-extrapolation" in task.splits()


@pytest.mark.parametrize("split", ["robustness-simple", "integer-extrapolation"])
def test_in_cells_order_a_split_takes_a_problem_of_every_cell_in_turn(small_pools, split):
    """`order=cells` (the brittleness preset's): the seeded order's problems, the first of
    every set × template × coefficient range before any second, so a small split holds every
    cell; the whole split the same problems. At its default the option is left out of the
    task's options, so runs made before keep their hash."""
    seeded, cells = load_task("integration"), load_task("integration", {"order": "cells"})
    assert "order" not in seeded.options() and cells.options()["order"] == "cells"
    n = len(splits._pool(split, 7))
    whole = splits.suite_table(split, n, 7, "bwd", 15, "cells")
    keys = list(zip(whole["set"], whole["template"], whole["coeff_range"], strict=True))
    count = len(set(keys))
    assert len(set(keys[:count])) == count  # every cell once, first
    assert sorted(whole["problem"]) == sorted(splits.suite_table(split, n, 7, "bwd", 15)["problem"])
    with pytest.raises(ConfigError, match="order"):
        load_task("integration", {"order": "sorted"})
