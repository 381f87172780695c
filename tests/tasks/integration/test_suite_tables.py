"""Test-suite builders: paper counts, sampling rules, references, files, derived suites."""

import json
from collections import Counter

import pandas as pd
import pytest
import sympy as sp

from genprobe.errors import ConfigError, DataFormatError
from genprobe.tasks.integration import X, from_prefix, from_sympy, to_prefix, to_sympy
from genprobe.tasks.integration.generation_config import GeneratorConfig
from genprobe.tasks.integration.generators import attempt
from genprobe.tasks.integration.suites import (
    COLUMNS,
    Primitive,
    SuiteRequest,
    build_suite,
    compositionality,
    dataset_primitives,
    in_distribution,
    integer_extrapolation,
    operator_extrapolation,
    read_suite,
    robustness_simple,
    robustness_validation,
    simple_draws,
    solved_primitives,
    validation_candidates,
    write_suite,
)
from genprobe.tasks.integration.suites.operators import group_configs, paper_rows
from genprobe.tasks.integration.suites.sampling import random_tuples, set_rng
from genprobe.tasks.integration.suites.templates import TEMPLATES
from genprobe.tasks.integration.vocab import OPERATOR_TOKENS


def _sympy(prefix):
    return to_sympy(from_prefix(prefix.split()))


def _differentiates(frame):
    """Every row's reference differentiates to its problem."""
    for problem, reference in zip(frame["problem"], frame["reference"], strict=True):
        difference = sp.diff(_sympy(reference), X) - _sympy(problem)
        assert sp.simplify(difference) == 0, (problem, reference)
    return True


def _primitive(f, big_f, row):
    return Primitive(from_sympy(f), from_sympy(big_f), row)


# ---------------------------------------------------------------- robustness-simple


def test_paper_counts_at_n_500():
    counts = Counter(draw.set for draw in simple_draws(500, 43))
    assert counts == {
        "simple_coeff1": 2698,
        "simple_coeff1_range": 21000,
        "simple_coeff2": 512,
        "simple_expincr": 2000,
        "simple_expdecr": 2000,
    }
    assert sum(counts.values()) == 28210


def test_counts_scale_with_n():
    counts = Counter(draw.set for draw in simple_draws(50, 43))
    # 5 pair templates * 50 + 2 single-coefficient templates * 50; 7 ranges * 50 pairs * 6;
    # the fixed sets in proportion: round(512 / 10), 2000 / 10
    assert counts == {
        "simple_coeff1": 350,
        "simple_coeff1_range": 2100,
        "simple_coeff2": 51,
        "simple_expincr": 200,
        "simple_expdecr": 200,
    }


def test_coefficients_follow_saggas_sampling():
    draws = simple_draws(500, 43)
    by_cell = {}
    for draw in draws:
        by_cell.setdefault((draw.set, draw.template, draw.coeff_range), []).append(draw)
    for (name, template, values), cell in by_cell.items():
        pairs = [(d.k1, d.k2) for d in cell]
        if (name, template) != ("simple_coeff1_range", "k1*x"):  # k1*x repeats, as in SAGGA
            assert len(set(pairs)) == len(pairs), (name, template)  # distinct pairs or values
        if name == "simple_coeff2":  # 32*cos(k2*x)
            assert all(d.k1 == 32 and d.k2 in values for d in cell)
            continue
        assert all(d.k1 in values for d in cell)
        if TEMPLATES[template].uses_k2:
            assert all(d.k2 in values for d in cell)
    single = by_cell["simple_coeff1", "k1*x**42", range(1, 101)]
    assert len(single) == 99 and all(d.k2 is None for d in single)
    # each range's 500 pairs go into all six templates, k1*x with the pair's k1
    cell = [d for d in draws if d.set == "simple_coeff1_range" and d.coeff_range.start == 1000]
    assert len(cell) == 3000
    rows = [cell[i : i + 6] for i in range(0, 3000, 6)]
    assert all(len({d.k1 for d in row}) == 1 for row in rows)
    assert [d.template for d in rows[0]][-1] == "k1*x"
    coeff2 = sorted(d.k2 for d in draws if d.set == "simple_coeff2")
    assert coeff2 == list(range(512, 1024))
    exponents = sorted(d.k1 for d in draws if d.set == "simple_expdecr")
    assert exponents == [*range(1, 1001), *range(10000, 11000)]


def test_a_pair_may_repeat_a_value_but_pairs_are_distinct():
    tuples = random_tuples(set_rng(0, "t"), 3, 2, 9)  # all 9 ordered pairs of 3 values
    assert sorted(tuples) == [(a, b) for a in range(3) for b in range(3)]
    with pytest.raises(ConfigError, match="at most 9"):
        random_tuples(set_rng(0, "t"), 3, 2, 10)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_closed_form_references_differentiate_to_their_templates(name):
    template = TEMPLATES[name]
    for k1, k2 in [(1, 1), (7, 3), (42, 10999)]:
        f, big_f = template.problem(k1, k2), template.reference(k1, k2)
        assert sp.simplify(sp.diff(big_f, X) - f) == 0


def test_built_suite_has_the_schema_and_correct_references():
    frame = robustness_simple(n=2)
    assert list(frame.columns) == list(COLUMNS)
    assert set(frame["suite"]) == {"robustness-simple"}
    row = frame[frame["template"] == "k1*exp(k2*x)"].iloc[0]
    k1, k2 = int(row["k1"]), int(row["k2"])
    # canonical prefix of the SymPy expression, no `sub Y'` head
    assert row["problem"] == " ".join(to_prefix(from_sympy(k1 * sp.exp(k2 * X))))
    assert row["problem_infix"] == str(k1 * sp.exp(k2 * X))
    assert frame["source_rows"].map(len).eq(0).all()
    assert frame["k"].isna().all() and frame["method"].isna().all()
    assert _differentiates(frame.groupby("template").head(2))


def test_suites_are_deterministic_per_seed():
    one, again, other = robustness_simple(n=2), robustness_simple(n=2), robustness_simple(2, 44)
    pd.testing.assert_frame_equal(one, again)
    assert not one["problem"].equals(other["problem"])


def test_integer_extrapolation_is_robustness_simples_range_set():
    simple = robustness_simple(n=3)
    ranged = simple[simple["set"] == "simple_coeff1_range"].reset_index(drop=True)
    extrapolation = integer_extrapolation(n=3)
    assert set(extrapolation["suite"]) == {"integer-extrapolation"}
    assert set(extrapolation["coeff_range"]) == {
        "1-100", "100-200", "200-300", "300-400", "400-500", "1000-2000", "10000-11000",
    }  # fmt: skip
    pd.testing.assert_frame_equal(extrapolation.drop(columns="suite"), ranged.drop(columns="suite"))


def test_sets_draw_independently():
    # a set's draws do not depend on the size of the others
    small = [d for d in simple_draws(2, 43) if d.set == "simple_coeff1_range"]
    assert small == [d for d in simple_draws(2, 43) if d.set == "simple_coeff1_range"]
    coeff2 = [d for d in simple_draws(400, 43) if d.set == "simple_coeff2"]
    assert coeff2 != [d for d in simple_draws(400, 44) if d.set == "simple_coeff2"]


# ---------------------------------------------------------------- files


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_suites_round_trip_through_files(tmp_path, suffix):
    frame = robustness_simple(n=1)
    path = tmp_path / f"suite{suffix}"
    write_suite(frame, path)
    pd.testing.assert_frame_equal(read_suite(path), frame)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left behind


def test_malformed_suite_files_name_the_line_and_column(tmp_path):
    path = tmp_path / "suite.jsonl"
    good = {"suite": "s", "set": "a", "problem": "mul INT+ 2 x", "reference": "pow x INT+ 2"}
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, "problem": "mul INT+ 2"}))
    with pytest.raises(DataFormatError, match=r"suite\.jsonl:3: column 'problem'"):
        read_suite(path)
    path.write_text(json.dumps({"suite": "s", "set": "a"}) + "\n")
    with pytest.raises(DataFormatError, match=r"missing column.*'problem'"):
        read_suite(path)
    path.write_text(json.dumps(good) + "\nnot json\n")
    with pytest.raises(DataFormatError, match=r"suite\.jsonl:2: not JSON"):
        read_suite(path)
    read = read_suite(_write(tmp_path / "minimal.jsonl", [good]))  # metadata columns are optional
    assert read["k1"].isna().all() and read["source_rows"][0] == []
    with pytest.raises(ConfigError):
        write_suite(read, tmp_path / "suite.csv")


def _write(path, records):
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


# ---------------------------------------------------------------- validation primitives

VALIDATION_LINES = [
    "3|sub Y' mul INT+ 2 x\tpow x INT+ 2",
    "2|sub Y' cos x\tsin x",
    "1|sub Y' asin x\tadd mul x asin x sqrt add INT+ 1 mul INT- 1 pow x INT+ 2",
    "1|sub Y' mul I x\tmul div INT+ 1 INT+ 2 mul I pow x INT+ 2",
    "1|sub Y' exp x\texp x",
    "1|sub Y' tanh x\tln cosh x",
]


def test_validation_candidates_apply_the_notebook_filters(tmp_path):
    path = tmp_path / "prim_fwd.valid"
    path.write_text("\n".join(VALIDATION_LINES) + "\n")
    candidates, skipped = validation_candidates(path)
    assert [c.row for c in candidates] == [1, 2, 5]
    assert candidates[0].problem == from_prefix(["mul", "INT+", "2", "x"])  # `sub Y'` stripped
    assert candidates[1].reference == from_prefix(["sin", "x"])
    assert [row for row, _ in skipped] == [3, 4, 6]
    path.write_text(VALIDATION_LINES[0] + "\n2|sub Y' cos\tsin x\n")
    with pytest.raises(DataFormatError, match=r"prim_fwd\.valid:2: column 'problem'"):
        validation_candidates(path)


def test_robustness_validation_sets_and_references():
    primitives = [_primitive(sp.cos(X), sp.sin(X), 7), _primitive(X**3, X**4 / 4, 9)]
    frame = robustness_validation(primitives, n=6, seed=1)
    assert frame.groupby("set").size().to_dict() == {
        "coeff_k*f": 6, "coeff_f/k": 6, "add_exp": 2, "add_ln": 2,
    }  # fmt: skip
    scaled = frame[frame["set"] == "coeff_k*f"]
    # one draw of 3 distinct coefficients from 2..99, shared by both primitives
    assert list(scaled["k1"][:3]) == list(scaled["k1"][3:])
    assert len(set(scaled["k1"])) == 3 and all(2 <= k <= 99 for k in scaled["k1"])
    assert list(scaled["source_rows"]) == [[7]] * 3 + [[9]] * 3
    assert frame[frame["set"] == "add_ln"]["problem_infix"].tolist() == [
        str(sp.cos(X) + sp.log(X)),
        str(X**3 + sp.log(X)),
    ]
    assert _differentiates(frame)
    with pytest.raises(ConfigError):
        robustness_validation(primitives[:1], n=99)  # 99 coefficients: 2..99 holds 98
    every = robustness_validation(primitives[:1], n=99, exact=False)
    assert (every["set"] == "coeff_k*f").sum() == 98  # every coefficient once
    with pytest.raises(ConfigError):
        robustness_validation([], n=10)


# ---------------------------------------------------------------- compositionality


def test_compositionality_sums_distinct_tuples_of_primitives():
    coeff = [_primitive(k * X, sp.Rational(k, 2) * X**2, k) for k in (2, 3, 5)]
    frame = compositionality({"comp_coeff": coeff}, n=8, seed=0)
    assert frame.groupby("k").size().to_dict() == {2: 8, 3: 8, 4: 8}
    assert all(len(rows) == k for rows, k in zip(frame["source_rows"], frame["k"], strict=True))
    for k, group in frame.groupby("k"):
        assert len(set(map(tuple, group["source_rows"]))) == 8
        assert group["template"].iloc[0] == "+".join(f"f{i}" for i in range(1, k + 1))
    # like terms combine, as SAGGA's sympify did: 2*x + 3*x is 5*x
    row = frame.iloc[0]
    assert _sympy(row["problem"]) == sum(row["source_rows"]) * X
    assert _differentiates(frame)
    with pytest.raises(ConfigError, match="at most 9"):
        compositionality({"comp_coeff": coeff}, n=10, ks=(2,))
    # a run with few solved primitives takes every distinct sum instead
    fewer = compositionality({"comp_coeff": coeff}, n=10, ks=(2, 3), exact=False)
    assert fewer.groupby("k").size().to_dict() == {2: 9, 3: 10}


def test_comp_valid_keeps_primitives_of_at_most_20_tokens():
    short = _primitive(sp.cos(X), sp.sin(X), 1)
    long = _primitive(X**1234567890123456789, X**1234567890123456790 / 1234567890123456790, 2)
    assert len(to_prefix(long.problem)) > 20
    frame = compositionality({"comp_valid": [short, long]}, n=1, ks=(2,))
    assert frame["source_rows"].tolist() == [[1, 1]]
    with pytest.raises(ConfigError):
        compositionality({"comp_valid": [long]}, n=1)


# ---------------------------------------------------------------- results and datasets


def test_solved_primitives_are_top1_rows_of_a_results_file(tmp_path):
    base = {"problem": "mul INT+ 2 x", "reference": "pow x INT+ 2"}
    records = [
        {**base, "set": "simple_coeff1", "first_correct_rank": 1},
        {**base, "set": "simple_coeff1", "first_correct_rank": 3},
        {**base, "set": "simple_coeff1", "first_correct_rank": None},
        {**base, "set": "simple_expincr", "first_correct_rank": 1},
    ]
    path = _write(tmp_path / "results.jsonl", records)
    assert [p.row for p in solved_primitives(path)] == [1, 4]
    assert [p.row for p in solved_primitives(path, {"simple_coeff1"})] == [1]
    _write(path, [{**records[0], "first_correct_rank": "first"}])
    with pytest.raises(DataFormatError, match=r"results\.jsonl:1: column 'first_correct_rank'"):
        solved_primitives(path)
    _write(path, [base])
    with pytest.raises(DataFormatError, match="'set', 'first_correct_rank'"):
        solved_primitives(path)


def test_solved_by_code_counts_as_the_authors_code(tmp_path):
    """A timeout passes; a simple primitive counts at rank 1, a validation problem at any."""
    base = {"problem": "mul INT+ 2 x", "reference": "pow x INT+ 2"}
    simple, valid = {**base, "set": "simple_coeff1"}, {**base, "set": "valid_primitive"}
    records = [
        {**simple, "first_correct_rank": 1, "first_generous_rank": 1},
        {**simple, "first_correct_rank": None, "first_generous_rank": 1},  # a timeout at 1
        {**simple, "first_correct_rank": 3, "first_generous_rank": 3},
        {**valid, "first_correct_rank": None, "first_generous_rank": 2},
        {**valid, "first_correct_rank": None, "first_generous_rank": None},
    ]
    path = _write(tmp_path / "results.jsonl", records)
    assert [p.row for p in solved_primitives(path, criterion="paper")] == [1]
    assert [p.row for p in solved_primitives(path, criterion="code")] == [1, 2, 4]
    with pytest.raises(ConfigError, match="solved criterion"):
        solved_primitives(path, criterion="top-5")
    _write(path, [{k: v for k, v in records[0].items() if k != "first_generous_rank"}])
    with pytest.raises(DataFormatError, match="'first_generous_rank'"):
        solved_primitives(path, criterion="code")


def test_in_distribution_samples_rows_of_a_dataset(tmp_path):
    records = [
        {"split": "test" if i % 2 else "train", "count": 1,
         "input": f"sub Y' mul INT+ {' '.join(str(i))} x", "output": "pow x INT+ 2"}
        for i in range(1, 21)
    ]  # fmt: skip
    path = _write(tmp_path / "data.jsonl", records)
    primitives, skipped = dataset_primitives(path, split="test")
    assert len(primitives) == 10 and not skipped
    frame = in_distribution(primitives, n=4, seed=5, set_name=path.name)
    assert len(frame) == 4 and set(frame["set"]) == {"data.jsonl"}
    rows = [rows[0] for rows in frame["source_rows"]]
    assert rows == sorted(rows) and all(row % 2 for row in rows)  # test rows, in file order
    assert frame["problem"][0] == records[rows[0] - 1]["input"].removeprefix("sub Y' ")
    pd.testing.assert_frame_equal(
        frame, in_distribution(primitives, n=4, seed=5, set_name=path.name)
    )
    assert len(in_distribution(primitives)) == 10
    text = tmp_path / "prim.test"
    text.write_text("\n".join(VALIDATION_LINES) + "\n")
    primitives, skipped = dataset_primitives(text)
    assert [p.row for p in primitives] == [1, 2, 3, 5, 6] and [row for row, _ in skipped] == [4]
    with pytest.raises(ConfigError):
        dataset_primitives(text, split="test")


# ---------------------------------------------------------------- operator extrapolation

OPERATORS = frozenset(OPERATOR_TOKENS)


def test_min_ops_gives_an_exact_operator_count():
    config = GeneratorConfig(method="bwd", min_ops=5, max_ops=5, small_probability=0)
    results = [attempt((config, {}), (3, index)) for index in range(6)]
    done = [result for result in results if result.status == "ok"]
    assert done and all(result.n_ops == 5 for result in done)
    # BWD's filter counts operators of F: at least half of those drawn survive SymPy
    assert all(sum(t in OPERATORS for t in r.output.split()) >= 2.5 for r in done)
    with pytest.raises(ConfigError):
        GeneratorConfig(min_ops=16, max_ops=15).validated()


@pytest.mark.slow
def test_operator_extrapolation_generates_each_group_from_the_models_training_max_ops():
    # one worker: rounds of 2 attempts, not 4
    frame = operator_extrapolation(n=2, seed=1, workers=1, max_ops=6, offsets=(5, 10))
    assert frame.groupby("set", sort=False).size().to_dict() == {
        "ops_1-6": 2, "ops_11": 2, "ops_16": 2,
    }  # fmt: skip
    assert set(frame["method"]) == {"bwd"}
    assert frame[frame["set"] == "ops_1-6"]["n_ops"].between(0, 6).all()
    for ops in (11, 16):
        exact = frame[frame["set"] == f"ops_{ops}"]
        assert exact["n_ops"].tolist() == [ops, ops]
        # the operators of F: the tree drawn had `ops`, SymPy's canonical form keeps at least
        # half
        assert all(sum(t in OPERATORS for t in f.split()) >= ops / 2 for f in exact["reference"])
    assert not frame["problem"].str.startswith("sub").any()


def test_sets_map_to_the_papers_rows_by_their_offset_from_the_training_max_ops():
    assert paper_rows(8) == {
        "ops_1-8": "ops_1-15", "ops_13": "ops_20", "ops_18": "ops_25", "ops_23": "ops_30",
        "ops_28": "ops_35",
    }  # fmt: skip
    assert list(paper_rows(15)) == list(paper_rows(15).values()) == list(group_configs("bwd"))
    assert group_configs("fwd", 8)["ops_1-8"].max_ops == 8
    with pytest.raises(ConfigError, match="--train-max-ops"):
        group_configs("bwd", 0)


# ---------------------------------------------------------------- registry


def test_registry_names_errors_helpfully():
    with pytest.raises(ConfigError, match="did you mean robustness-simple"):
        build_suite("robustness-simpel", SuiteRequest())
    with pytest.raises(ConfigError, match="--solved"):
        build_suite("compositionality", SuiteRequest())
    with pytest.raises(ConfigError, match="--validation"):
        build_suite("in-distribution", SuiteRequest())
    built = build_suite("robustness-simple", SuiteRequest(n=1, seed=3))
    pd.testing.assert_frame_equal(built.frame, robustness_simple(1, 3))
