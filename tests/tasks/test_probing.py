"""The tasks' probe declarations do what they say: each family moves inputs to valid ones in
the documented way, each relation's partner is valid and the task's own outputs keep it, the
features read right, and inputs that are not a task's are refused."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from genprobe.errors import TaskContractError
from genprobe.tasks import Probes, load_task
from genprobe.tasks.addition import carries
from genprobe.tasks.probing import token_edits
from genprobe.tasks.registry import TASKS, task_probes
from genprobe.tasks.tokens import encode_inputs

SCAN = load_task("scan")
SCAN_PROBES = task_probes(SCAN)
SCAN_WORDS = ("", *SCAN.source_vocab)
RNG = 0


def words(task, src):
    names = ("", *task.source_vocab)
    return [tuple(names[i] for i in row if i > 0) for row in src]


def encoded(task, *texts):
    return encode_inputs(task.source_vocab, [(None, text.split()) for text in texts], "test")


def gold(task, src):
    out = task.solve(src)
    return out, (out >= 0).sum(axis=1)


def moved(task, family, src, seed=RNG):
    probes = task_probes(task)
    result = probes.families()[family].perturb(src, np.random.default_rng(seed))
    assert probes.valid_inputs(result.src).all()
    assert len(result.origin) == len(result.src) and result.origin.dtype.kind == "i"
    return result


@pytest.fixture(scope="module")
def scan_src():
    return SCAN.generate("all", 20_910, 0).src[:600]


def test_swap_primitive_replaces_one_primitive_everywhere(scan_src):
    result = moved(SCAN, "swap_primitive", scan_src)
    assert len(result) > 500
    pairs = zip(words(SCAN, scan_src[result.origin]), words(SCAN, result.src), strict=True)
    for before, after in pairs:
        changed = {(a, b) for a, b in zip(before, after, strict=True) if a != b}
        assert len(changed) == 1  # one primitive, one replacement, wherever it occurs
        ((old, new),) = changed
        assert {old, new} <= {"walk", "look", "run", "jump"} and old not in after


def test_scan_families_leave_out_rows_they_cannot_move():
    src = encoded(SCAN, "turn left", "walk twice and jump thrice", "walk and jump")
    assert moved(SCAN, "swap_primitive", src).origin.tolist() == [1, 2]
    assert moved(SCAN, "add_modifier", src).origin.tolist() == [0, 2]
    assert moved(SCAN, "lengthen_conjunction", src).origin.tolist() == [0]


def test_add_modifier_gives_a_bare_sentence_twice_or_thrice(scan_src):
    result = moved(SCAN, "add_modifier", scan_src)
    pairs = zip(words(SCAN, scan_src[result.origin]), words(SCAN, result.src), strict=True)
    for before, after in pairs:
        assert len(after) == len(before) + 1
        added = [w for w in after if w in ("twice", "thrice")]
        assert len(added) == len([w for w in before if w in ("twice", "thrice")]) + 1


def test_lengthen_conjunction_appends_a_sentence_of_the_grammar():
    src = encoded(SCAN, "jump left", "walk twice", "run around right thrice")
    result = moved(SCAN, "lengthen_conjunction", src)
    assert result.origin.tolist() == [0, 1, 2]
    for before, after in zip(words(SCAN, src), words(SCAN, result.src), strict=True):
        assert after[: len(before)] == before and after[len(before)] in ("and", "after")
    draws = {words(SCAN, moved(SCAN, "lengthen_conjunction", src, s).src)[0] for s in range(8)}
    assert len(draws) > 1  # S is drawn


def test_twice_is_and_pairs_x_twice_with_x_and_x_and_the_gold_outputs_agree():
    src = encoded(SCAN, "jump left twice", "walk thrice", "run twice and look", "look twice")
    relation = SCAN_PROBES.relations()["twice_is_and"]
    partner = relation.partner(src, np.random.default_rng(RNG))
    assert partner.origin.tolist() == [0, 3]
    assert words(SCAN, partner.src) == [("jump", "left", "and", "jump", "left"),
                                        ("look", "and", "look")]  # fmt: skip
    assert SCAN_PROBES.valid_inputs(partner.src).all()
    assert relation.agree(*gold(SCAN, src[partner.origin]), *gold(SCAN, partner.src)).all()
    wrong, length = gold(SCAN, partner.src)
    wrong[0, 0] = 1 - wrong[0, 0]  # one model's output differs: the relation is broken
    assert not relation.agree(*gold(SCAN, src[partner.origin]), wrong, length)[0]


def test_scan_features_count_words_sentences_and_modifiers():
    features = SCAN_PROBES.features(encoded(SCAN, "jump left twice after walk thrice", "look"))
    assert features["words"].tolist() == [6, 1] and features["sentences"].tolist() == [2, 1]
    assert features["modifiers"].tolist() == [2, 0] and features["length"].tolist() == [7, 1]


FORMATS = ("plain", "reversed", "index_hints")


def addition(fmt):
    return load_task("addition", {"format": fmt, "train_digits": 6, "test_lengths": "7-9"})


def operands(task, src):
    a, b, count, _, ok = task.read(src)
    assert ok.all()
    value = [[int("".join(map(str, x[i, : c[i]][::-1]))) for i in range(len(x))]
             for x, c in ((a, count[0]), (b, count[1]))]  # fmt: skip
    return np.array(value, dtype=object), count


@pytest.mark.parametrize("fmt", FORMATS)
def test_operand_swap_and_commutativity_swap_the_operands(fmt):
    task = addition(fmt)
    src = task.generate("length_9", 300, 0).src
    partner = task_probes(task).relations()["commutativity"].partner(src, np.random.default_rng(0))
    for result in (moved(task, "operand_swap", src), partner):
        assert task_probes(task).valid_inputs(result.src).all() and len(result) == 300
        (a, b), _ = operands(task, src[result.origin])
        (a2, b2), _ = operands(task, result.src)
        assert (a2 == b).all() and (b2 == a).all()
        both = gold(task, src[result.origin]), gold(task, result.src)
        assert task_probes(task).relations()["commutativity"].agree(*both[0], *both[1]).all()


@pytest.mark.parametrize("fmt", FORMATS)
def test_carry_chain_makes_every_column_carry(fmt):
    task = addition(fmt)
    src = task.generate("train", 300, 0).src
    result = moved(task, "carry_chain", src)
    assert len(result) == 300
    a, b, count, _, _ = task.read(result.src)
    assert (task.read(src[result.origin])[2] == count).all()  # the same digits each
    chain = task_probes(task).features(result.src)["carry chain"]
    assert (chain == count.max(axis=0)).all() and (chain >= 1).all()
    assert (carries(a, b).sum(axis=1) == count.max(axis=0)).all()


@pytest.mark.parametrize("fmt", FORMATS)
def test_leading_zeros_keep_the_sum_and_one_more_digit_lengthens_both(fmt):
    task = addition(fmt)
    src = task.generate("train", 300, 0).src
    zero = moved(task, "leading_zeros", src)
    assert len(zero) == 300
    (a, b), count = operands(task, src[zero.origin])
    (a2, b2), count2 = operands(task, zero.src)
    assert (
        (a2 == a).all() and (b2 == b).all() and (count2.sum(axis=0) == count.sum(axis=0) + 1).all()
    )
    longer = moved(task, "one_more_digit", src)
    (a3, _b3), count3 = operands(task, longer.src)
    _, count = operands(task, src[longer.origin])
    assert (count3 == count + 1).all()
    assert all(len(str(v)) == c for v, c in zip(a3, count3[0], strict=True))  # no leading zero


def test_with_hints_the_run_moves_down_where_the_longer_sum_would_not_fit():
    task = load_task("addition", {"train_digits": 2, "test_lengths": "3"})  # hints a..d
    src = encoded(task, "b 9 c 9 + b 9 c 9")  # 99 + 99 = 198: hints b, c, d
    result = moved(task, "one_more_digit", src)
    assert words(task, result.src)[0][::2][:4] == ("a", "b", "c", "+")


def test_addition_features_read_digits_and_carries():
    task = addition("plain")
    features = task_probes(task).features(encoded(task, "9 9 5 + 5", "1 2 + 3"))
    assert features["a digits"].tolist() == [3, 2] and features["b digits"].tolist() == [1, 1]
    assert features["carries"].tolist() == [3, 0] and features["carry chain"].tolist() == [3, 0]


REWRITING = load_task("rewriting")
REWRITING_PROBES = task_probes(REWRITING)


@pytest.fixture(scope="module")
def rewriting_src():
    return REWRITING.generate("standard", 300, 0).src


def test_rewriting_families_repeat_drop_and_add_a_symbol(rewriting_src):
    length = (rewriting_src > 0).sum(axis=1)
    repeat = moved(REWRITING, "repeat_symbol", rewriting_src)
    features = REWRITING_PROBES.features(repeat.src)
    assert (features["longest run"] == 2).all() and len(repeat) == 300
    assert ((repeat.src > 0).sum(axis=1) == length + 1).all()
    short = moved(REWRITING, "shorten", rewriting_src)
    assert ((short.src > 0).sum(axis=1) == length[short.origin] - 1).all()
    for before, after in zip(rewriting_src[short.origin], short.src, strict=True):
        assert set(after[after > 0]) < set(before[before > 0])
    long = moved(REWRITING, "lengthen", rewriting_src)
    features = REWRITING_PROBES.features(long.src)
    assert (features["distinct"] == length + 1).all()


def test_rewriting_refuses_what_is_not_a_string_of_its_symbols():
    src = np.array([[1, 2, 0], [0, 0, 0], [1, 0, 2], [41, 1, 0], [40, 40, 40]])
    assert REWRITING_PROBES.valid_inputs(src).tolist() == [True, False, False, False, True]
    one = np.array([[5, 0]])
    assert len(moved(REWRITING, "shorten", one)) == 0


@pytest.mark.parametrize("name", ["reverse_string", "modular_arithmetic", "solve_equation"])
def test_longer_by_s_draws_fresh_inputs_at_least_s_longer(name):
    task = load_task(name)
    src = task.generate("train", 200, 0).src
    length = (src > 0).sum(axis=1)
    for step in (1, 5, 20):
        result = moved(task, f"longer_by_{step}", src)
        assert result.origin.tolist() == list(range(200))
        grown = (result.src > 0).sum(axis=1) - length
        assert (grown >= step).all() and (grown <= step + 1).all()


def test_binary_operation_commutativity_only_where_the_operation_commutes():
    task = load_task("binary_operation", {"operation": "x*y"})
    src = task.generate("train", 300, 0).src
    partner = task_probes(task).relations()["commutativity"].partner(src, np.random.default_rng(0))
    assert (partner.src[:, [1, 0, 2]] == src[partner.origin]).all()
    assert (src[partner.origin, 0] != src[partner.origin, 1]).all()
    assert (task.solve(partner.src) == task.solve(src[partner.origin])).all()
    assert task_probes(load_task("binary_operation", {"operation": "x-y"})).relations() == {}


# Inputs that are not the task's, per task: each must be refused (valid_inputs False).
NOT_THE_TASKS = {
    "stack_manipulation": ["POP 0 1", "0 1 POP 1", "0 1"],
    "binary_addition": ["+", "0 +", "+ 1 0", "0 + 1 0", "1 + 1 + 1"],
    "binary_multiplication": ["* 1 0", "1 0 * 0"],
    "compute_sqrt": ["0 0 0"],
    "missing_duplicate_string": ["0", "0 1 _ 0", "0 1 _ 0 .", "0 1 1 0 _ 1 0 1", "0 . 0 _"],
    "modular_arithmetic_brackets": ["1 + 2", "( ( 1 ) )", "( 1 + 2 + 3 )", "- - 1"],
    "solve_equation": ["( x + 3 ) = 1 2", "( x + x ) = 1", "x + 1 = 2"],
    "modular_arithmetic": ["1 +", "+ 1"],
    "scan": ["walk and", "twice walk", "turn"],
    "addition": ["1 2", "+ 1", "1 + + 2"],
    "binary_operation": ["1 2", "1 2 = 3", "= 1 2", "1 = 2"],
    "sparse_parity": ["0 1 1", " ".join("1" * 41)],
}


@pytest.mark.parametrize("name", list(NOT_THE_TASKS))
def test_inputs_that_are_not_the_tasks_are_refused(name):
    task = load_task(name)
    src = encoded(task, *NOT_THE_TASKS[name])
    assert not task_probes(task).valid_inputs(src).any()
    empty = np.zeros((1, 0), dtype=np.int64)
    assert not task_probes(task).valid_inputs(empty).any()


@pytest.mark.parametrize("name", ["stack_manipulation", "binary_addition", "compute_sqrt",
                                  "missing_duplicate_string", "modular_arithmetic_brackets",
                                  "solve_equation"])  # fmt: skip
def test_the_inputs_each_task_draws_stay_valid(name):
    task = load_task(name)
    assert task_probes(task).valid_inputs(task.generate("train", 500, 1).src).all()


@pytest.mark.parametrize("fmt", FORMATS)
def test_token_edits_never_crash_addition_and_what_they_break_is_refused(fmt):
    task = addition(fmt)
    src = task.generate("train", 200, 0).src
    for family in token_edits(len(task.source_vocab)).values():
        edited = family.perturb(src, np.random.default_rng(0)).src
        valid = task_probes(task).valid_inputs(edited)
        _a, _b, _count, _, ok = task.read(edited)
        assert (valid <= ok).all()


def test_and_is_after_turns_two_sentence_commands_and_the_gold_outputs_agree(scan_src):
    src = encoded(SCAN, "jump left twice and walk", "look after run around right", "walk")
    relation = SCAN_PROBES.relations()["and_is_after"]
    partner = relation.partner(src, np.random.default_rng(RNG))
    assert partner.origin.tolist() == [0, 1]
    assert words(SCAN, partner.src) == [("walk", "after", "jump", "left", "twice"),
                                        ("run", "around", "right", "and", "look")]  # fmt: skip
    partner = relation.partner(scan_src, np.random.default_rng(RNG))
    assert len(partner) > 590 and SCAN_PROBES.valid_inputs(partner.src).all()
    assert relation.agree(*gold(SCAN, scan_src[partner.origin]), *gold(SCAN, partner.src)).all()


@pytest.mark.parametrize("name", list(TASKS))
def test_no_task_takes_an_empty_input_or_one_with_a_gap(name):
    task = load_task(name)
    src = task.generate(task.train_split, 64, 0).src
    src = src[(src > 0).sum(axis=1) >= 2]
    gapped = np.insert(src, 1, 0, axis=1)  # padding after the first token, then the rest
    empty = np.zeros((2, gapped.shape[1]), dtype=np.int64)
    assert not task_probes(task).valid_inputs(np.concatenate([gapped, empty])).any()


def test_scan_compositions_join_one_sentence_commands_and_their_actions_follow():
    first = encoded(SCAN, "jump left", "walk twice and look", "run around right thrice")
    second = encoded(SCAN, "look twice", "jump", "walk")
    for name, order in (("and", (0, 1)), ("after", (1, 0))):
        composition = SCAN_PROBES.compositions()[name]
        assert composition.arity == 2
        assert composition.takes(first).tolist() == [True, False, True]
        joined = composition.join([first, second])
        assert joined.origin.tolist() == [0, 2]  # the second command has two sentences
        assert words(SCAN, joined.src)[0] == ("jump", "left", name, "look", "twice")
        assert SCAN_PROBES.valid_inputs(joined.src).all()
        out, length = gold(SCAN, joined.src)
        parts = [gold(SCAN, part[joined.origin]) for part in (first, second)]
        for row in range(len(joined)):
            actions = [list(parts[i][0][row, : parts[i][1][row]]) for i in order]
            assert list(out[row, : length[row]]) == actions[0] + actions[1]


def test_integration_sums_are_sympys_sums_and_their_references_verify():
    import sympy as sp

    from genprobe.tasks.integration.expression import to_sympy

    task = load_task("integration")
    drawn = task.generate(task.validation_split, 9, 0)
    parts = [drawn.src[i::3] for i in range(3)]
    outputs = [drawn.tgt[i::3] for i in range(3)]
    composition = task_probes(task).compositions()["sum_3"]
    joined = composition.with_reference(parts, outputs)
    assert joined.origin.tolist() == [0, 1, 2]
    assert (composition.join(parts).src == joined.src).all()
    length = (joined.tgt >= 0).sum(axis=1)
    assert task.verify(joined.src, joined.tgt, length).all()
    rows = zip(*(task.problems(part) for part in parts), task.problems(joined.src), strict=True)
    for *f, total in rows:  # like terms combined, as SymPy adds
        assert sp.simplify(to_sympy(total) - sp.Add(*map(to_sympy, f))) == 0


ROOT = Path(__file__).parents[2]
OWN_PROBES = re.compile(r"```python\n(# in copy_task\.py, after the task\n.*?)```", re.S)


@pytest.fixture
def own_task(tmp_path, monkeypatch):
    """A module `own_copy` of the example task, with the probes docs/tasks.md gives it."""
    (probes,) = OWN_PROBES.findall((ROOT / "docs" / "tasks.md").read_text())
    source = (ROOT / "examples" / "copy_task.py").read_text()
    (tmp_path / "own_copy.py").write_text(f"{source}\n\n{probes}")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path / "own_copy.py"
    sys.modules.pop("own_copy", None)


def test_a_py_tasks_probes_are_its_modules_class_named_after_it(own_task):
    task = load_task("py:own_copy:Copy")
    probes = task_probes(task)
    assert type(probes).__name__ == "CopyProbes" and probes.task is task
    src = encoded(task, "a b c", "d")
    moved = probes.families()["double_last"].perturb(src, np.random.default_rng(0))
    assert words(task, moved.src) == [("d", "d")] and moved.origin.tolist() == [1]  # no room in 0
    assert probes.valid_inputs(moved.src).all() and "double_last" in probes.mutations()


def test_a_py_task_without_probes_gets_the_defaults_and_a_wrong_one_is_one_line(own_task):
    own_task.write_text(own_task.read_text().replace("class CopyProbes(Probes)", "class Other"))
    probes = task_probes(load_task("py:own_copy:Copy"))
    assert type(probes) is Probes and probes.families() == {}
    sys.modules.pop("own_copy")
    own_task.write_text(f"{own_task.read_text()}\nCopyProbes = 3\n")
    with pytest.raises(
        TaskContractError, match=r"CopyProbes must be a subclass of .*Probes, got 3"
    ):
        task_probes(load_task("py:own_copy:Copy"))


def test_a_task_without_solve_must_say_which_inputs_are_valid():
    probes = task_probes(load_task("rewriting"))
    with pytest.raises(TaskContractError, match=r"RewritingTask does not say which inputs"):
        Probes.valid_inputs(probes, np.ones((1, 3), np.int64))
