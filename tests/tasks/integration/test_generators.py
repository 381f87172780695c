"""Random trees, the FWD/BWD/IBP generators, and the datasets they write."""

import json
import math
from collections import Counter
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import sympy as sp

from genprobe.errors import ConfigError, DataFormatError, DifferentRunError
from genprobe.runs.executor import LocalExecutor
from genprobe.runs.provenance import config_hash
from genprobe.tasks.integration import (
    GeneratorConfig,
    TreeSettings,
    generate,
    generators,
    random_expression,
    verify_many,
)
from genprobe.tasks.integration.datasets import read_dataset, split_of, write_dataset
from genprobe.tasks.integration.expression import X, fold, from_sympy, to_sympy
from genprobe.tasks.integration.generation import Row
from genprobe.tasks.integration.generation_config import INTEGRATION_OPERATORS, GenerationConfig
from genprobe.tasks.integration.generation_run import generate_run
from genprobe.tasks.integration.generators import Rejected, attempt, backward_pair, forward_pair
from genprobe.tasks.integration.prefix import from_prefix, strip_problem_prefix, to_prefix
from genprobe.tasks.integration.random_trees import _counts
from genprobe.tasks.verdict import Outcome


def _n_operators(tree):
    return fold(tree, lambda node, kids: (node.op not in ("x", "int", "pi", "E")) + sum(kids))


def test_counting_recursion_gives_the_large_schroeder_numbers():
    # D(1, n): unary-binary tree shapes with n operators (L = p1 = p2 = 1)
    table = _counts(6)
    assert [table[n][1] for n in range(1, 7)] == [2, 6, 22, 90, 394, 1806]


def test_random_trees_have_the_requested_size_and_leaves():
    rng = np.random.default_rng(0)
    settings = TreeSettings(max_int=3)
    for n_ops in range(0, 16):
        tree = random_expression(rng, n_ops, settings)
        assert _n_operators(tree) == n_ops
        ints = fold(tree, lambda node, kids: [node.value] * (node.op == "int") + sum(kids, []))  # noqa: RUF017
        assert all(1 <= v <= 3 for v in ints)


def _shape(node, kids):
    return f"{len(kids)}({','.join(kids)})" if kids else "L"


def test_tree_shapes_are_uniform():
    # two operators: unary over unary or binary (2 shapes), binary over a unary or binary
    # child on the left or right (4): 6 shapes, each drawn with probability 1/6
    rng = np.random.default_rng(1)
    settings = TreeSettings(operators={"add": 1, "exp": 1})
    shapes = Counter()
    for _ in range(3500):
        tree = random_expression(rng, 2, settings)
        shapes[fold(tree, _shape)] += 1
    assert len(shapes) == 6
    assert all(abs(count / 3500 - 1 / 6) < 0.03 for count in shapes.values())


def test_operator_weights_follow_the_settings():
    rng = np.random.default_rng(2)
    ops = Counter()
    for _ in range(300):
        tree = random_expression(rng, 10, TreeSettings())
        fold(tree, lambda node, kids: ops.update([node.op]) if kids else None)
    unary_total = sum(w for op, w in INTEGRATION_OPERATORS.items() if op in ("sin", "atanh"))
    assert ops["sin"] > 2 * ops["atanh"]  # weights 4 and 1
    assert unary_total == 5


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError):
        GeneratorConfig(method="sideways").validated()
    with pytest.raises(ConfigError):
        TreeSettings(operators={"banana": 1}).validated()
    with pytest.raises(ConfigError):
        TreeSettings(operators={"add": 1}).validated()  # no unary operator
    with pytest.raises(ConfigError, match="weight of sin"):
        TreeSettings(operators={"add": 1, "sin": math.inf}).validated()
    with pytest.raises(ConfigError):
        generate(GeneratorConfig(), 0)


def test_attempts_depend_only_on_seed_and_index():
    config = GeneratorConfig(method="bwd", max_ops=6)
    assert attempt((config, {}), (5, 17)) == attempt((config, {}), (5, 17))


@pytest.mark.parametrize("method", ["fwd", "bwd"])
def test_generated_pairs_verify_and_do_not_depend_on_workers(method):
    # FWD on the fast engine, as below: lc's `doit` sits near its CPU deadline
    config = GeneratorConfig(method=method, max_ops=6, engine="fast" if method == "fwd" else "lc")
    one = generate(config, 8, seed=11, workers=1, round_size=32)
    two = generate(config, 8, seed=11, workers=2, round_size=32)
    assert one.rows == two.rows and one.counters == two.counters
    assert len(one.rows) == 8
    assert all(row.input.startswith("sub Y' ") for row in one.rows)
    assert one.attempts == sum(one.counters.values())  # one outcome per attempt
    assert one.counters["ok"] == len(one.rows)
    # the conformance check: the verifier accepts every gold answer
    verdicts = verify_many([(row.input, row.output) for row in one.rows])
    assert [v.outcome for v in verdicts] == [Outcome.CORRECT] * 8


@pytest.mark.parametrize("method", ["fwd", "bwd"])
def test_a_generation_run_keeps_the_pairs_of_one_process_for_any_workers(method, tmp_path):
    # not lc's FWD: its `doit` spends 2-3 CPU seconds on some of these attempts, against a
    # 3 s deadline, and SymPy's cache makes that depend on what the process ran before
    # (docs/integration.md, "Known limits")
    config = GeneratorConfig(method=method, max_ops=6, engine="fast" if method == "fwd" else "lc")
    in_process = generate(config, 12, seed=4, round_size=16)
    run_config = GenerationConfig(config, 12, seed=4, shard_size=8)
    one = generate_run(run_config, tmp_path / "one")
    with LocalExecutor(2) as executor:
        two = generate_run(run_config, tmp_path / "two", executor, workers=2)
    assert one.rows == two.rows == in_process.rows
    assert one.counters == two.counters and one.attempts == sum(one.counters.values())
    shards = sorted((tmp_path / "one" / "attempts").iterdir())
    stamps = [path.stat().st_mtime_ns for path in shards]
    assert generate_run(run_config, tmp_path / "one").rows == one.rows  # replayed, not redone
    assert [path.stat().st_mtime_ns for path in shards] == stamps


def test_a_generation_run_refuses_ibp_and_another_config(tmp_path):
    with pytest.raises(ConfigError, match="method"):
        GenerationConfig(GeneratorConfig(method="ibp")).validated()
    config = GenerationConfig(GeneratorConfig(method="bwd", max_ops=5), 3, shard_size=8)
    generate_run(config, tmp_path / "run")
    with pytest.raises(DifferentRunError, match="max_ops: run has 5, command has 6"):
        generate_run(
            replace(config, generator=GeneratorConfig(method="bwd", max_ops=6)), tmp_path / "run"
        )


def test_ibp_finds_pairs_through_its_primitive_cache():
    tree = TreeSettings(operators={"add": 1, "mul": 1, "exp": 1, "sin": 1, "cos": 1})
    config = GeneratorConfig(method="ibp", max_ops=4, max_ops_g=1, small_probability=0, tree=tree)
    report = generate(config, 1, seed=0, workers=2, round_size=16, max_attempts=64)
    assert report.counters["no_cached_primitive"] > 0
    assert len(report.rows) == 1
    verdicts = verify_many([(row.input, row.output) for row in report.rows])
    assert verdicts[0].outcome is Outcome.CORRECT


ROWS = [
    Row(f"sub Y' mul INT+ {k} x", f"mul div INT+ {k} INT+ 2 pow x INT+ 2", k % 3 + 1)
    for k in range(1, 200)
]


def test_split_is_stable_and_never_leaks(tmp_path):
    paths = write_dataset(ROWS, tmp_path / "prim", "text", valid_fraction=0.1, test_fraction=0.1)
    assert [p.name for p in paths] == ["prim.train", "prim.valid", "prim.test"]
    splits = {p.suffix[1:]: read_dataset(p) for p in paths}
    train_inputs = {row.input for row in splits["train"]}
    assert not train_inputs & {row.input for row in splits["test"] + splits["valid"]}
    assert sum(len(rows) for rows in splits.values()) == len(ROWS)
    assert 5 <= len(splits["test"]) <= 40
    for split, rows in splits.items():
        assert all(split_of(row.input, 0.1, 0.1) == split for row in rows)
    for path in paths:
        counts = [int(line.partition("|")[0]) for line in path.read_text().splitlines()]
        assert counts == sorted(counts, reverse=True)  # L&C's files are sorted by count


def test_text_jsonl_and_parquet_hold_the_same_rows(tmp_path):
    (text,) = write_dataset(ROWS, tmp_path / "all.txt")
    assert text.read_text().splitlines()[0].count("|") == 1
    assert sorted((r.input, r.output) for r in read_dataset(text)) == sorted(
        (r.input, r.output) for r in ROWS
    )
    (jsonl,) = write_dataset(ROWS, tmp_path / "all.jsonl", "jsonl", test_fraction=0.2)
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    (parquet,) = write_dataset(ROWS, tmp_path / "all.parquet", "parquet", test_fraction=0.2)
    frame = pd.read_parquet(parquet)
    assert frame.to_dict("records") == records
    assert {r["split"] for r in records} == {"train", "test"}


def test_bad_dataset_lines_name_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("1|sub Y' x\tmul x x\nno tab here\n")
    with pytest.raises(DataFormatError, match=r"bad\.txt:2"):
        read_dataset(path)
    with pytest.raises(ConfigError):
        write_dataset(ROWS, tmp_path / "x", "csv")


# -- Lample & Charton's forms: BWD's simplify, FWD's doit ------------------------------------


def _bwd_trees(n, seed=5):
    config = GeneratorConfig(method="bwd", max_ops=6)
    for index in range(n):
        rng = np.random.default_rng([seed, index])
        n_ops = int(rng.integers(4, 7))
        yield random_expression(rng, n_ops, config.tree), n_ops


def test_bwd_simplifies_as_sympys_simplify_of_sympys_derivative():
    config = GeneratorConfig(method="bwd", max_ops=6)
    compared = rewritten = 0
    for tree, n_ops in _bwd_trees(40):
        try:
            pair = backward_pair(tree, n_ops, True, config)
        except Rejected:
            continue
        big_f = to_sympy(tree).as_independent(X, as_Add=True)[1]
        expected = to_prefix(from_sympy(sp.simplify(sp.diff(big_f, X))))
        assert strip_problem_prefix(pair.input.split()) == expected, pair.output
        plain = backward_pair(tree, n_ops, False, config)
        rewritten += plain.input != pair.input
        compared += 1
    assert compared >= 25 and rewritten >= 5  # the draws exercise simplify, not only no-ops


def test_bwd_keeps_the_derivative_when_simplify_fails_times_out_or_brings_a_dummy(monkeypatch):
    config = GeneratorConfig(method="bwd", max_ops=6)
    tree = from_prefix(["mul", "x", "ln", "add", "x", "INT+", "3"])  # F' = x/(x + 3) + ln(x + 3)
    plain = backward_pair(tree, 2, False, config).input

    def dummy(expr, **kwargs):
        return sp.Dummy("x") + 1

    def busy(expr, **kwargs):
        while True:
            pass

    def failing(expr, **kwargs):
        raise ValueError("no")

    monkeypatch.setattr(generators, "BWD_SIMPLIFY_SECONDS", 0.05)
    for stand_in, remembered in ((dummy, True), (busy, False), (failing, True)):
        generators._SIMPLIFIED.clear()
        monkeypatch.setattr(sp, "simplify", stand_in)
        assert backward_pair(tree, 2, True, config).input == plain, stand_in.__name__
        # a result cut short by the time limit is not kept: another budget may finish it
        assert bool(generators._SIMPLIFIED) is remembered, stand_in.__name__


def test_bwd_asks_simplify_once_per_derivative(monkeypatch):
    config = GeneratorConfig(method="bwd", max_ops=6)
    tree = from_prefix(["mul", "x", "ln", "add", "x", "INT+", "3"])
    calls = Counter()
    real = sp.simplify

    def counted(expr, **kwargs):
        calls[str(expr)] += 1
        return real(expr, **kwargs)

    generators._SIMPLIFIED.clear()
    monkeypatch.setattr(sp, "simplify", counted)
    first, second = (backward_pair(tree, 2, True, config) for _ in range(2))
    assert first == second and sum(calls.values()) == 1


def test_fast_engine_keeps_its_own_simplifier():
    lc = GeneratorConfig(method="bwd", max_ops=6)
    fast = replace(lc, engine="fast")
    differ = 0
    for tree, n_ops in _bwd_trees(40):
        try:
            differ += backward_pair(tree, n_ops, True, lc) != backward_pair(tree, n_ops, True, fast)
        except Rejected:
            continue
    assert differ > 0  # another distribution, named and kept for old runs


def test_fwd_integrates_what_risch_leaves_unevaluated_as_lample_charton():
    config = GeneratorConfig(method="fwd", max_ops=6)
    for f, primitive in ((sp.sqrt(X), 2 * X ** sp.Rational(3, 2) / 3),
                         (sp.asin(X), X * sp.asin(X) + sp.sqrt(1 - X**2))):  # fmt: skip
        pair = forward_pair(f, 1, False, config)
        assert pair.output.split() == to_prefix(from_sympy(primitive))
        with pytest.raises(Rejected, match="non_elementary"):  # the engine of older runs
            forward_pair(f, 1, False, replace(config, engine="fast"))
    with pytest.raises(Rejected, match="special_function"):  # doit's answer holds erf
        forward_pair(sp.sqrt(X) * sp.exp(X), 2, False, config)
    with pytest.raises(Rejected, match="non_elementary"):
        forward_pair(sp.exp(X**2), 2, False, config)


def test_x_is_read_after_sympys_cache_has_let_it_go():
    from sympy.core.cache import clear_cache

    clear_cache()
    again = sp.Symbol("x", real=True, nonzero=True)
    assert again is not X and to_prefix(from_sympy(again + 1)) == to_prefix(from_sympy(X + 1))


def test_older_generation_runs_keep_their_config_hash():
    fast = GenerationConfig(GeneratorConfig(method="bwd", engine="fast"), 10)
    assert config_hash(fast.identity()) == "5dd14d3d023f03ca"  # its hash before the lc engine
    assert config_hash(GenerationConfig(GeneratorConfig(method="bwd"), 10).identity()) != (
        config_hash(fast.identity())
    )


@pytest.mark.parametrize("method", ["fwd", "bwd"])
def test_max_ops_below_the_default_fewest_draws_expressions_of_max_ops(method):
    # L&C's fewest operators (fwd 3, bwd 4) above --max-ops once left numpy no count to draw
    config = GeneratorConfig(method=method, max_ops=2, small_probability=0, engine="fast")
    attempts = [attempt((config, {}), (0, index)) for index in range(8)]
    assert not any(a.status.startswith("sympy_error") for a in attempts)
    assert {a.n_ops for a in attempts if a.status == "ok"} == {2}
