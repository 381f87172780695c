"""Random trees, the FWD/BWD/IBP generators, and the datasets they write."""

import json
from collections import Counter
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from genprobe.errors import ConfigError, DataFormatError, DifferentRunError
from genprobe.runs.executor import LocalExecutor
from genprobe.tasks.integration import (
    GeneratorConfig,
    TreeSettings,
    generate,
    random_expression,
    verify_many,
)
from genprobe.tasks.integration.datasets import read_dataset, split_of, write_dataset
from genprobe.tasks.integration.expression import fold
from genprobe.tasks.integration.generation import Row
from genprobe.tasks.integration.generation_run import GenerationConfig, generate_run
from genprobe.tasks.integration.generators import attempt
from genprobe.tasks.integration.random_trees import INTEGRATION_OPERATORS, _counts
from genprobe.verification.verdict import Outcome


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
    with pytest.raises(ConfigError):
        generate(GeneratorConfig(), 0)


def test_attempts_depend_only_on_seed_and_index():
    config = GeneratorConfig(method="bwd", max_ops=6)
    assert attempt((config, {}), (5, 17)) == attempt((config, {}), (5, 17))


@pytest.mark.parametrize("method", ["fwd", "bwd"])
def test_generated_pairs_verify_and_do_not_depend_on_workers(method):
    config = GeneratorConfig(method=method, max_ops=6)
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
    config = GeneratorConfig(method=method, max_ops=6)
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
