"""SAGGA's pieces one by one: mutations, the mutant filter, seeds, fitness, selection (the
model's memory of its answers: tests/models/adapters/test_integration_tokens.py)."""

import numpy as np
import pytest
import sympy as sp

from genprobe.errors import ConfigError, DataFormatError
from genprobe.runs.pool import DeadlinePool
from genprobe.studies.search.embedding import make_embedder
from genprobe.studies.search.fitness import make_fitness
from genprobe.studies.search.sagga.mutants import (
    SimplifyMemo,
    judge,
    mutate_generation,
    simplify_in_worker,
)
from genprobe.studies.search.sagga.seeds import BASES, TARGETS, named_basis, read_problem_file
from genprobe.studies.search.selection import select_fitness, select_kmeans
from genprobe.tasks.integration import X, from_sympy, to_sympy
from genprobe.tasks.integration.expression import Expr, fold
from genprobe.tasks.integration.mutations import MUTATION_PARAMS, is_leaf, mutate, random_path
from genprobe.tasks.integration.prefix import from_prefix, to_prefix


def _ints(expr: Expr) -> list[int]:
    return fold(
        expr,
        lambda node, kids: [node.value] * (node.op == "int") + [v for kid in kids for v in kid],
    )


def test_the_robustness_preset_only_changes_constants():
    seed = from_sympy(17 * sp.cos(83 * X))
    rng = np.random.default_rng(0)
    shapes = set()
    for _ in range(200):
        mutant = mutate(seed, rng, MUTATION_PARAMS["robustness"])
        # x stays, cos stays; only integers change, leaves within [-100, 100), subtrees [0, 1000)
        assert all(-100 <= v < 1000 for v in _ints(mutant))
        shapes.add(str(to_sympy(mutant)))
    assert len(shapes) > 10
    assert any("cos" in s and "x" in s for s in shapes)


def test_uniform_mutations_stay_well_formed_and_reach_every_rewrite():
    seed = from_sympy(2 * X**2 + 2 / X + 1 + sp.exp(3 * X))
    rng = np.random.default_rng(1)
    mutants = [mutate(seed, rng, MUTATION_PARAMS["uniform"]) for _ in range(500)]
    texts = {str(to_sympy(m)) for m in mutants}
    assert len(texts) > 100
    # every node keeps its arity (Expr checks), and the op shapes c*x**e, c**(x**e) appear
    assert any("**(x" in t for t in texts)


def test_the_walk_never_picks_the_root_of_a_deeper_tree_and_rationals_are_leaves():
    seed = from_sympy(X / 2 + 1)
    rng = np.random.default_rng(2)
    assert all(random_path(seed, rng) for _ in range(100))
    half = from_sympy(sp.Rational(1, 2))
    assert is_leaf(half) and random_path(half, rng) == ()


def test_trig_nodes_are_left_alone():
    seed = from_sympy(2 * sp.sin(X))
    rng = np.random.default_rng(3)
    results = [str(to_sympy(mutate(seed, rng, MUTATION_PARAMS["robustness"]))) for _ in range(60)]
    # a walk stopping at sin returns the seed unchanged; the others change a constant
    assert "2*sin(x)" in results
    assert not any(h in r for r in results for h in ("+", "**", "cos"))  # no head swapped
    assert any(r.endswith("*sin(x)") and r != "2*sin(x)" for r in results)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [(sp.zoo * X, "outside"), (X + 10**7, "large integer"), (sum(X**i for i in range(30)), "long")],
)
def test_the_filter_rejects_what_sagga_rejects(expression, reason):
    assert judge(expression) == (None, reason)


def test_the_filter_keeps_a_valid_mutant_in_canonical_form():
    tree, text = judge(sp.simplify(2 * X + X))
    assert text == "3*x" and tree == from_sympy(3 * X)


def test_mutants_do_not_depend_on_the_number_of_workers():
    seeds = named_basis("polynomial_robustness")[:3]

    def run(workers):
        with DeadlinePool(workers) as pool:
            report = mutate_generation(
                pool, seeds, 8, MUTATION_PARAMS["uniform"], run_seed=43, generation=1, deadline=5
            )
        return [(m.seed_index, m.key) for m in report.mutants], report

    one, report = run(1)
    two, _ = run(2)
    assert one == two
    assert report.attempts == 24
    assert len(one) + report.duplicates + sum(report.rejected.values()) == 24


def test_the_simplify_memo_changes_no_mutant_and_skips_what_it_has_seen():
    seeds = named_basis("polynomial_robustness")[:3]
    common = {"run_seed": 43, "deadline": 5}
    memo = SimplifyMemo()

    def outcome(report):
        return [(m.seed_index, m.key, m.text) for m in report.mutants], report.rejected

    with DeadlinePool(1) as pool:
        alone = [
            mutate_generation(
                pool, seeds, 12, MUTATION_PARAMS["robustness"], generation=g, **common
            )
            for g in (1, 2)
        ]
        first, second, again = (
            mutate_generation(
                pool, seeds, 12, MUTATION_PARAMS["robustness"], generation=g, memo=memo, **common
            )
            for g in (1, 2, 2)
        )
    assert outcome(first) == outcome(alone[0]) and outcome(second) == outcome(alone[1])
    assert second.simplified < alone[1].simplified  # generation 1 met some of its raw mutants
    assert again.simplified == 0 and again.deadlines.items == 0 and again.seconds == 0
    assert outcome(again) == outcome(second) and again.duplicates == second.duplicates


def test_automatic_mutants_skip_simplify_and_are_judged_as_they_evaluate():
    raw = to_prefix(from_sympy(sp.Mul(X, X + 1, evaluate=False) - X**2))
    assert simplify_in_worker("simplified", raw) == ("ok", ["x"], "x")
    status, prefix, text = simplify_in_worker("automatic", raw)
    assert (
        status == "ok"
        and text == "-x**2 + x*(x + 1)"
        and from_prefix(prefix) == from_sympy(-(X**2) + X * (X + 1))
    )
    long = to_prefix(from_sympy(sum(X**i for i in range(30))))
    assert simplify_in_worker("automatic", long) == ("rejected", "long", "")


def test_the_simplify_memo_forgets_its_oldest_past_the_limit():
    memo = SimplifyMemo(limit=2)
    for key in ("a", "b", "c"):
        memo.put(key, ("rejected", "long", ""))
    assert memo.get("a") is None and memo.get("b") == memo.get("c") == ("rejected", "long", "")


def test_named_bases_are_the_originals_and_a_bad_name_gets_a_suggestion():
    assert [str(p) for p in named_basis("polynomial")] == ["1", "x", "x + 1", "x**2 + x + 1"]
    assert len(named_basis("target")) == len(TARGETS) == 10
    assert len(named_basis("trig_robustness")) == len(BASES["trig_robustness"]) == 9
    with pytest.raises(ConfigError, match="did you mean polynomial_robustness"):
        named_basis("polynomial_robust")


def test_a_basis_file_reads_infix_and_prefix_and_names_a_bad_line(tmp_path):
    good = tmp_path / "basis.txt"
    good.write_text("# seeds\n2*x + 1\n\nmul INT+ 3 x\n")
    assert [str(p) for p in read_problem_file(good)] == ["2*x + 1", "3*x"]
    bad = tmp_path / "bad.txt"
    bad.write_text("x\nimport os\n")
    with pytest.raises(DataFormatError, match=r"bad.txt:2: not a problem"):
        read_problem_file(bad)


def test_fitness_functions_are_zero_on_successes():
    texts = ["2*x", "sin(x) + 1", "x**2 + 3*x + 7"]
    failed = np.array([True, True, False])
    assert make_fitness("length_penalty")(texts, failed) == pytest.approx([1 / 3, 1 / 10, 0])
    assert make_fitness("trig_length_penalty")(texts, failed) == pytest.approx([0, 1 / 10, 0])
    assert make_fitness("target_length", length=3)(texts, failed) == pytest.approx([1, 1 / 8, 0])
    assert list(make_fitness("any_failure")(texts, failed)) == [1, 1, 0]
    targets = make_fitness("target_problems", targets=TARGETS)
    near_target = targets(["4*x**5", "sin(x)"], np.array([True, True]))
    assert near_target[0] == pytest.approx(1.0) and near_target[1] < 0.9
    with pytest.raises(ConfigError, match="did you mean length_penalty"):
        make_fitness("length_penalt")


def test_selection_by_fitness_and_by_cluster():
    fitness = np.array([0.1, 0.5, 0.3, 0.5])
    assert select_fitness(fitness, 2) == [1, 3]
    texts = ["sin(x)", "sin(2*x)", "sin(3*x)", "x**2", "x**3", "x**4"]
    chosen = select_kmeans(texts, np.arange(6.0), make_embedder("char"), size=2, clusters=2, seed=0)
    # one per cluster: the fittest sine and the fittest power
    assert chosen == [2, 5]
    assert select_kmeans([], np.zeros(0), make_embedder("char"), size=2, clusters=2, seed=0) == []


def test_an_answer_too_long_to_print_is_kept_as_prefix():
    from genprobe.tasks.integration.printing import infix_text, shown_answer

    # 10**5000 is built exactly, but Python refuses to print an integer of 5,001 digits
    huge = Expr.apply("pow", Expr.integer(10), Expr.integer(5000))
    assert infix_text(huge) is None
    assert shown_answer(huge) == "pow INT+ 1 0 INT+ 5 0 0 0"
