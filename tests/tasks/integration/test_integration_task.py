"""Symbolic integration as a token task: its data, its verdicts, its families, and integration
models seen as `SequenceModel`s that judge exactly as `integration evaluate` does."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import sympy as sp
import torch
from helpers import model_settings

from genprobe.errors import ConfigError
from genprobe.models.checkpoints import save_transformer
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig
from genprobe.options import as_pairs, parse_pairs
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.search import run_search
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.tasks import load_task, task_probes
from genprobe.tasks.integration import (
    X,
    from_prefix,
    from_sympy,
    problem_prefix,
    to_prefix,
    to_sympy,
)
from genprobe.tasks.integration.features import BOOLEAN, NUMERIC, tree_features
from genprobe.tasks.integration.reading import read_expression
from genprobe.tasks.integration.suites.validation import ADDED_SETS
from genprobe.tasks.probing import Tag, from_input_keys, token_edits
from genprobe.tasks.tokens import encode_inputs, encode_outputs, input_lines, output_lines
from genprobe.under_test.adapters.integration_model import Candidate, Model
from genprobe.under_test.adapters.integration_tokens import (
    IntegrationSequenceModel,
    as_sequence_model,
)
from genprobe.under_test.adapters.seq2seq import DecodingConfig
from genprobe.under_test.sequences import Ranked


@pytest.fixture(scope="module")
def task():
    return load_task("integration")


@pytest.fixture(scope="module")
def probes(task):
    return task_probes(task)


@pytest.fixture(scope="module")
def examples(task):
    return task.generate("test", 12, 5)


def lengths(tgt):
    return (tgt >= 0).sum(axis=1)


def ended(n):
    return np.ones(n, dtype=bool)


def written(task, exprs):
    """Target ids and lengths of SymPy expressions, in L&C's canonical shape."""
    return encode_outputs(task.target_vocab, [to_prefix(from_sympy(e)) for e in exprs])


def inputs(task, exprs):
    rows = [(i, to_prefix(from_sympy(e))) for i, e in enumerate(exprs)]
    return encode_inputs(task.source_vocab, rows, "test")


def references(task, examples):
    """SymPy's F of each generated pair."""
    lines = output_lines(task.target_vocab, examples.tgt)
    return [to_sympy(from_prefix(line.split())) for line in lines]


def test_generation_is_the_same_for_a_seed_and_its_first_rows_do_not_depend_on_n(task):
    first = task.generate("train", 30, 3)
    again, fewer = task.generate("train", 30, 3), task.generate("train", 7, 3)
    assert np.array_equal(first.src, again.src) and np.array_equal(first.tgt, again.tgt)
    assert (
        input_lines(task.source_vocab, fewer.src) == input_lines(task.source_vocab, first.src)[:7]
    )
    other = input_lines(task.source_vocab, task.generate("train", 30, 4).src)
    assert other != input_lines(task.source_vocab, first.src)


def test_the_engine_option_draws_lample_and_chartons_distribution(task):
    lc = load_task("integration", {"engine": "lc", "max_ops": 6})
    fast = load_task("integration", {"max_ops": 6})
    # the data of runs made before the option, and their config hashes
    assert task.settings()["engine"] == "fast" and "engine" not in task.options()
    assert lc.options()["engine"] == "lc"
    made = {
        t.engine: input_lines(t.source_vocab, t.generate("train", 40, 3).src) for t in (lc, fast)
    }
    same = sum(a == b for a, b in zip(made["lc"], made["fast"], strict=True))
    assert 0 < same < 40  # the same random expressions; their simplified derivatives differ
    with pytest.raises(ConfigError, match="engine"):
        load_task("integration", {"engine": "turbo"})


def test_held_out_problems_are_never_training_ones(task):
    train = set(input_lines(task.source_vocab, task.generate("train", 400, 0).src))
    for split in ("validation", "test"):
        held = input_lines(task.source_vocab, task.generate(split, 40, 0).src)
        assert len(set(held)) == 40 and not set(held) & train


def test_the_known_antiderivative_is_correct_and_another_one_incorrect(task, examples):
    n = len(examples)
    right = task.outcomes(examples.src, examples.tgt, lengths(examples.tgt), ended(n))
    assert list(right) == ["correct"] * n
    wrong = np.roll(examples.tgt, 1, axis=0)  # the antiderivative of another problem
    assert set(task.outcomes(examples.src, wrong, lengths(wrong), ended(n))) == {"incorrect"}
    assert not task.verify(examples.src, wrong, lengths(wrong)).any()
    assert task.verify(examples.src, examples.tgt, lengths(examples.tgt)).all()


def test_ids_that_are_no_expression_are_unparseable(task, examples):
    src = examples.src[:4]
    add = task.target_vocab.index("add")
    garbage = np.array([[add, add, -1], [add, -1, -1], [-1, -1, -1], [0, 0, 0]])
    length = np.array([2, 2, 1, 0])
    assert set(task.outcomes(src, garbage, length, ended(4))) == {"unparseable"}
    gold = examples.tgt[:1]  # right, but cut at the length limit
    assert task.outcomes(src[:1], gold, lengths(gold), ~ended(1))[0] == "unparseable"


def test_a_candidate_the_verifier_cannot_finish_in_time_is_a_timeout(task):
    # numbers cannot decide a constant written with x (F' = 0 everywhere): SymPy must, slowly
    big_f = X / (X + X * sp.exp(sp.atan(4)))
    src = inputs(task, [sp.diff(big_f, X)])
    out, length = written(task, [big_f])
    assert task.outcomes(src, out, length, ended(1))[0] == "correct"
    hurried = replace(task, deadline=0.001)
    assert hurried.outcomes(src, out, length, ended(1))[0] == "timeout"


def test_families_move_problems_to_valid_ones_whose_known_answer_is_right(task, probes, examples):
    big_fs = references(task, examples)
    fs = [to_sympy(p) for p in task.problems(examples.src)]
    families = probes.families()
    assert {"coefficient", "divided", "add_exp", "add_ln"} <= set(families)
    for name, family in families.items():
        moved = family.perturb(examples.src, np.random.default_rng(1))
        assert len(moved) == len(examples) and probes.valid_inputs(moved.src).all(), name
        new_fs = [to_sympy(p) for p in task.problems(moved.src)]
        answers = []
        for new_f, i in zip(new_fs, moved.origin, strict=True):
            if name in ADDED_SETS:
                answers.append(big_fs[i] + ADDED_SETS[name][2])
            else:  # k f or f / k: the ratio is the coefficient
                ratio = sp.nsimplify(sp.simplify(new_f / fs[i]))
                assert ratio.is_Rational and ratio != 1, (name, ratio)
                answers.append(ratio * big_fs[i])
        out, length = written(task, answers)
        assert set(task.outcomes(moved.src, out, length, ended(len(out)))) == {"correct"}, name


def test_families_move_each_known_antiderivative_with_its_integrand(task, probes, examples):
    tgt = examples.tgt.copy()
    tgt[3] = -1  # no F known for this one
    for name, family in probes.families().items():
        alone = family.perturb(examples.src, np.random.default_rng(2))
        moved = family.with_reference(examples.src, tgt, np.random.default_rng(2))
        assert np.array_equal(moved.src, alone.src) and alone.tgt is None, name
        assert np.array_equal(moved.origin, alone.origin), name
        known = (moved.tgt >= 0).any(axis=1)
        assert list(known) == [i != 3 for i in moved.origin], name
        verdicts = task.outcomes(
            moved.src[known], moved.tgt[known], lengths(moved.tgt[known]), ended(known.sum())
        )
        assert set(verdicts) == {"correct"}, name


def test_sagga_tree_mutations_make_new_integrands_of_the_task(task, probes, examples):
    mutations = probes.mutations()
    assert {"tree_uniform", "tree_robustness", "tree_distance"} <= set(mutations)
    before = input_lines(task.source_vocab, examples.src)
    for name in ("tree_uniform", "tree_robustness", "tree_distance"):
        moved = mutations[name].perturb(examples.src, np.random.default_rng(3))
        assert len(moved) >= len(examples) // 2 and probes.valid_inputs(moved.src).all(), name
        after = input_lines(task.source_vocab, moved.src)
        changed = [new != before[i] for new, i in zip(after, moved.origin, strict=True)]
        assert sum(changed) >= len(moved) // 2, name


def test_a_token_edits_mutant_is_the_integrand_sympy_evaluates_it_to(task, probes, examples):
    """`-3 + 5` becomes `2`, `00` becomes `0`: the search asks what its report prints."""
    raw, evaluated = token_edits(len(task.source_vocab)), probes.mutations()
    changed = 0
    for name in ("substitute", "insert", "delete", "swap"):
        edits = raw[name].perturb(examples.src, np.random.default_rng(5))
        moved = evaluated[name].perturb(examples.src, np.random.default_rng(5))
        assert moved.src.dtype == np.int64 and len(set(edits.origin)) == len(edits)
        edit_of = {int(origin): row for origin, row in zip(edits.origin, edits.src, strict=True)}
        for row, origin in zip(moved.src, moved.origin, strict=True):
            edit = edit_of[int(origin)]
            problem = task.problems(edit[None])[0]
            if problem is None:  # left as it was, for `valid_inputs` to refuse
                assert np.array_equal(row[row > 0], edit[edit > 0]), name
                continue
            form = to_prefix(from_sympy(to_sympy(problem)))
            assert input_lines(task.source_vocab, row[None])[0] == " ".join(form), name
            changed += form != to_prefix(problem)
    assert changed > 0  # some edits spelled an integrand SymPy writes otherwise


def test_the_features_are_sagga_tree_features_and_zero_for_no_integrand(task, probes):
    exprs = [5 * X**4 / 3, sp.exp(X) + 77, sp.sin(X) ** 2 + X]
    given = inputs(task, exprs)
    src = np.vstack([given, np.zeros((1, given.shape[1]), dtype=given.dtype)])  # no integrand
    features = probes.features(src)
    table = tree_features([from_sympy(e) for e in exprs])
    assert set(features) == {"length", *BOOLEAN, *NUMERIC}
    for name in (*BOOLEAN, *NUMERIC):
        assert list(features[name]) == [*table[name], 0], name
        assert features[name].dtype == (bool if name in BOOLEAN else np.int64), name
    assert list(features["largest |int|"]) == [5, 77, 2, 0]
    assert list(features["exp"]) == [False, True, False, False]
    assert list(features["terms"]) == [1, 2, 2, 0]


def test_a_failure_is_tagged_an_exploit_where_no_elementary_antiderivative_exists(task, probes):
    given = inputs(task, [X * sp.exp(X), sp.exp(X**2)])
    src = np.vstack([given, np.zeros((1, given.shape[1]), dtype=given.dtype)])  # no integrand
    elementary, exploit, none = probes.tag_failures(src, workers=1)
    assert elementary.kind == "robustness" and "elementary antiderivative" in elementary.detail
    assert exploit == Tag("exploit", "needs erfi") and none == Tag("unknown", "not an integrand")


def test_invalid_inputs_are_refused(task, probes, examples):
    add = task.source_vocab.index("add") + 1
    broken = np.array([[add, 0], [add, add]])
    assert list(probes.valid_inputs(broken)) == [False, False]
    assert probes.valid_inputs(examples.src).all()


def evaluated(spec, task, src, k, **settings):
    """First correct rank per problem (0: none within k) by the token task's verdicts: what
    `integration evaluate` (a preset of the probe) counts."""
    model = as_sequence_model(spec, task, **settings)
    ranked = model.candidates(src, k)
    n, width = len(src), ranked.out.shape[-1]
    outcomes = task.outcomes(
        np.repeat(src, k, axis=0),
        ranked.out.reshape(-1, width),
        ranked.length.reshape(-1),
        ranked.finished.reshape(-1),
    ).reshape(n, k)
    ours = [
        int(np.argmax(row == "correct")) + 1 if (row == "correct").any() else 0 for row in outcomes
    ]
    return model, ranked, outcomes, ours


def test_sympy_as_a_token_model_fails_where_integration_evaluate_says(task):
    fs = [2 * X, sp.cos(X), 3 * X**2 * sp.exp(X**3), sp.exp(X**2), X * sp.sin(X)]
    src = inputs(task, fs)
    model, ranked, outcomes, ours = evaluated("sympy", task, src, 1, deadline=2.0)
    assert model.members == ("sympy",) and not model.can_score
    assert ranked.out.shape[:3] == (1, 5, 1) and ranked.score.shape == (1, 5, 1)
    assert ours[:3] == [1, 1, 1] and ours[3] == 0  # exp(x^2) has no F
    assert outcomes[3, 0] == "unparseable"  # SymPy's erf is no token of the task
    with pytest.raises(ConfigError, match="one member"):
        model.subset([1])


def test_a_checkpoint_as_a_token_model_judges_as_integration_evaluate(task, examples, checkpoint):
    decoding = DecodingConfig(method="beam", beam_size=3, max_len=16, batch_size=4)
    spec = f"ckpt:{checkpoint}"
    src = examples.src[:6]
    model, ranked, outcomes, _ = evaluated(spec, task, src, 3, decoding=decoding)
    assert model.can_score and ranked.out.shape[:3] == (1, 6, 3)
    assert set(np.unique(outcomes)) <= {"correct", "incorrect", "unparseable", "timeout"}
    # teacher-forced scores of what it decoded are the log-probabilities it decoded them with
    top = model.score(src, ranked.out[:, :, 0], ranked.length[:, :, 0])
    parsed = outcomes[:, 0] != "unparseable"
    assert top.shape == (1, 6) and np.isnan(top[0, ~parsed]).all()
    np.testing.assert_allclose(top[0, parsed], ranked.logprob[0, parsed, 0], atol=1e-4)


def test_a_checkpoint_takes_the_problems_its_positions_hold_and_answers_only_those(
    task, examples, tmp_path
):
    torch.manual_seed(0)
    config = TransformerConfig(dim=16, n_enc_layers=1, n_dec_layers=1, n_heads=2, max_positions=9)
    save_transformer(tmp_path / "model.pt", Seq2SeqTransformer(config), {})
    decoding = DecodingConfig(method="beam", beam_size=2, max_len=8, batch_size=4)
    model = as_sequence_model(f"ckpt:{tmp_path / 'model.pt'}", task, decoding=decoding)
    not_one = np.zeros((1, examples.src.shape[1]), dtype=np.int64)  # no integrand: no tokens
    src = np.concatenate([examples.src[:8], not_one])
    # the problem as L&C's model reads it, between two separators: within the 9 positions
    prefix = [len(problem_prefix(p)) if p is not None else 0 for p in task.problems(src)]
    expected = [n + 2 <= 9 for n in prefix[:-1]] + [True]
    readable = model.readable(src)
    assert readable.tolist() == expected and not all(expected)
    ranked = model.candidates(src[:-1], 2)
    assert not ranked.finished[0, ~readable[:-1]].any()
    assert (ranked.length[0, ~readable[:-1]] == 0).all()


def test_an_integration_model_answers_only_the_integration_task():
    with pytest.raises(ConfigError, match="integration for the integration model sympy"):
        as_sequence_model("sympy", load_task("scan"))


@pytest.fixture(scope="module")
def sweep(tiny_sweep, tmp_path_factory, task):
    """Two seeds of the integration task, trained for seconds."""
    config = replace(tiny_sweep(seeds=(1, 2), task=task), train_size=50, validation_size=10)
    return run_sweep(config, tmp_path_factory.mktemp("sweep") / "run")


@pytest.mark.slow
def test_a_sweep_on_the_integration_task_is_a_token_model_of_it(sweep, task):
    model = as_sequence_model(f"run:{sweep}")
    assert model.members == ("seed=1", "seed=2") and model.task == task
    src = task.generate("validation", 3, 0).src
    ranked = model.candidates(src, 1)
    assert ranked.out.shape[:3] == (2, 3, 1)
    outcomes = task.outcomes(
        np.tile(src, (2, 1)), ranked.out[:, :, 0].reshape(6, -1), ranked.length.reshape(-1),
        ranked.finished.reshape(-1),
    )  # fmt: skip
    assert set(outcomes) <= {"correct", "incorrect", "unparseable", "timeout"}


@pytest.mark.slow
def test_the_failure_search_mutates_a_sweeps_integrands_as_sagga_does(
    sweep, task, probes, tmp_path
):
    # tag_limit 0: SymPy would integrate 24 failures to tag them, which this test does not read
    config = SearchConfig(
        model_settings(f"run:{sweep}"),
        generations=2,
        population=8,
        mutants=3,
        base_size=8,
        tag_limit=0,
    )
    run = run_search(config, tmp_path / "search")
    stats = json.loads((run / "search.json").read_text())["stats"]
    trees = [name for name in probes.mutations() if name.startswith("tree_")]
    made = {name: 0 for name in trees}
    for generation in stats[1:]:
        for name in trees:
            counts = generation["operators"][name]
            made[name] += counts["asked"] - counts["not applicable"] - counts["invalid"]
            assert counts["invalid"] == 0, name  # a tree's mutant is an integrand
    assert all(made.values()), made
    evaluated = pd.concat(pd.read_parquet(p) for p in (run / "generations").glob("*.parquet"))
    assert probes.valid_inputs(from_input_keys(list(evaluated["input"]))).all()
    assert evaluated["operator"].isin(trees).any()


def test_an_input_sympy_makes_no_real_function_of_is_refused(task, probes):
    """1/(cos(acos(5)) - 5) is 1/0 to SymPy; ln(-2) holds I: neither is an integrand (SAGGA's
    filter refuses them too), so the failure search never scores such a mutant."""
    texts = [
        "mul INT- 2 pow add INT- 5 cos acos INT+ 5 INT- 1", "ln INT- 2", "add x INT+ 1",
        "pow INT- 4 div INT+ 1 INT+ 2",
    ]  # fmt: skip
    src = encode_inputs(task.source_vocab, [(None, text.split()) for text in texts], "test")
    assert probes.valid_inputs(src).tolist() == [False, False, True, False]


def test_an_integrand_reads_as_sympy_prints_it(task, probes):
    """As SAGGA shows and embeds its problems; an input that is no integrand keeps its tokens."""
    texts = ["add x INT+ 1", "mul INT+ 2 pow x INT+ 3", "ln INT- 2"]
    src = encode_inputs(task.source_vocab, [(None, text.split()) for text in texts], "test")
    assert probes.input_text(src) == ["x + 1", "2*x**3", "ln INT- 2"]
    answers = ["mul div INT+ 1 INT+ 2 pow x INT+ 2", "add x"]  # x**2/2; no expression
    out, _ = encode_outputs(task.target_vocab, [text.split() for text in answers])
    assert probes.output_text(out) == ["x**2/2", "add x"]


def test_the_options_a_report_shows_are_the_flags_that_rebuild_the_task():
    task = load_task("integration", {"negative_ints": True, "max_ops": 6})
    shown = as_pairs(task.options())
    assert "negative_ints=true" in shown and "max_ops=6" in shown
    rebuilt = load_task("integration", parse_pairs(shown, "--task-option"))
    assert rebuilt.options() == task.options()


class _Answering(Model):
    """Answers each integrand (by its SymPy form) with fixed candidates."""

    def __init__(self, answers):
        self.answers = answers

    def candidates(self, problems, k):
        return [[Candidate(a, 0.0) for a in self.answers[to_sympy(p)][:k]] for p in problems]


def test_an_integration_models_answers_are_judged_as_it_gave_them(task):
    """-cot(x) is right for 1/sin(x)**2, but `cot` is no target token: the ids cannot hold
    it, the answer can (the brittleness study's verdict of it, as its runs judged before it
    became a preset of the probe)."""
    f, g = 1 / sp.sin(X) ** 2, 2 * X
    cot = read_expression("-cot(x)")
    answers = {f: [cot], g: ["x^^2", from_sympy(X**2)]}
    model = IntegrationSequenceModel(_Answering(answers), task, "fixed")
    src = inputs(task, [f, g])
    ranked = model.candidates(src, 2)
    assert (ranked.out[0, 0, 0] == -1).any()  # cot has no id
    outcomes = ranked.outcomes(task, src)
    assert outcomes[0].tolist() == [["correct", None], ["unparseable", "correct"]]
    as_ids = Ranked(ranked.out, ranked.length, ranked.finished, ranked.score, ranked.logprob)
    assert as_ids.outcomes(task, src)[0, 0, 0] == "unparseable"


def test_local_structures_are_each_operator_with_each_child(task):
    # x * sin(x^2) + 3: integers are `int` whatever their digits
    tokens = ["add", "mul", "x", "sin", "pow", "x", "INT+", "2", "INT+", "3"]
    assert sorted(task.local_structures(tokens)) == sorted(
        ["add mul", "add int", "mul x", "mul sin", "sin pow", "pow x", "pow int"]
    )
    assert task.local_structures(["add", "x"]) == ()  # not an expression
    assert task.local_structures(["x"]) == ()
