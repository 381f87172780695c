"""The word-problem task: generated problems verify and read back as what was drawn, answers are
exact (hand-computed ones below), inputs that are not the generator's are refused, and the
families (reinstantiate, noop, one_more_step) keep inputs valid with the gold recomputed."""

import numpy as np
import pytest

from genprobe.errors import ConfigError
from genprobe.tasks import load_task, task_probes
from genprobe.tasks.probing import token_edits
from genprobe.tasks.tokens import encode_inputs, encode_outputs, input_lines, output_lines
from genprobe.tasks.verdict import Outcome
from genprobe.tasks.word_problems import TEMPLATE_NAMES

TASK = load_task("word_problems")
PROBES = task_probes(TASK)
SPLITS = ("train", "validation", "test", "noop", "one_more_step")
GIFT = (
    "alice has 1 2 marbles . ben gives alice 5 more marbles . "
    "how many marbles does alice have now ?"
)
BAGS = (
    "kofi buys 3 bags of coins . each bag has 1 4 coins . kofi gives 9 coins to lena . "
    "how many coins does kofi have left ?"
)
# Hand-computed: each problem and its answer.
SOLVED = {
    GIFT: 17,  # 12 + 5
    BAGS: 33,  # 3 × 14 − 9
    "hiro had 2 0 cards . hiro lost 2 0 of them . how many cards does hiro have left ?": 0,
    "nora has 4 boxes . each box holds 3 2 books . how many books does nora have ?": 128,
    "ines has 2 1 shells . the shop is 1 8 minutes from home . kofi has 1 9 more shells than "
    "ines . lena has 3 5 fewer shells than kofi . how many shells does lena have ?": 5,  # NoOp
    "ben buys 7 packs of apples . each pack has 4 1 apples . ben gives 2 9 apples to ines . "
    "ben loses 4 8 apples . then lena gives ben 2 9 more apples . how many apples does ben "
    "have left ?": 239,  # 7 × 41 − 29 − 48 + 29, extended
    "omar puts cards in 9 rows of 8 . 5 0 of the cards are small . omar adds 5 0 more cards . "
    "how many cards are there now ?": 122,  # 9 × 8 + 50, NoOp
    "emma has 8 shelves with 5 0 stickers on each shelf . emma sells 4 stickers . emma is 7 "
    "years old . jamal gives emma 1 stickers . then emma gives 3 9 stickers to grace . how "
    "many stickers does emma have now ?": 358,  # 8 × 50 − 4 + 1 − 39: extended and a NoOp
}
NOT_PROBLEMS = [
    "alice had 5 apples . alice lost 7 of them . how many apples does alice have left ?",  # < 0
    GIFT.replace("1 2", "0 5"),  # a leading zero
    GIFT.replace("1 2", "5 1"),  # above max_number
    GIFT.replace("ben", "alice"),  # two people, one name
    GIFT.replace("more marbles", "more coins"),  # two things
    GIFT.replace("gives alice", "gives carla"),  # alice is given nothing
    "nora has 1 boxes . each box holds 3 2 books . how many books does nora have ?",  # factor 1
    "nora has 1 0 boxes . each box holds 3 2 books . how many books does nora have ?",  # > 9
    "the shop is 3 minutes from home . " + GIFT,  # a NoOp before the first statement
    GIFT.replace("now ?", "now . the shop is 3 minutes from home ?"),
    GIFT.replace(". how", ". 3 of the coins are small . how"),  # the NoOp's thing is another
    GIFT.replace(". how", ". carla is 8 years old . how"),  # the NoOp's person is not in it
    GIFT.replace(". how", ". alice is 8 years old . alice is 9 years old . how"),  # two NoOps
    GIFT.replace(". how", ". then alice loses 1 8 marbles . how"),  # 12 + 5 − 18 < 0
    GIFT.replace(" ?", ""),
    GIFT.replace("alice have", "ben have"),
    "alice has 1 2 marbles . how many marbles does alice have now ?",
    "how many marbles does alice have now ?",
]


def encoded(task, *texts):
    return encode_inputs(task.source_vocab, [(None, t.split()) for t in texts], "test")


def answers(task, src):
    """The gold answers of inputs, as numbers."""
    return [int(line.replace(" ", "")) for line in output_lines(task.target_vocab, task.solve(src))]


def moved(family, src, seed=0, task=TASK):
    result = task_probes(task).families()[family].perturb(src, np.random.default_rng(seed))
    assert task_probes(task).valid_inputs(result.src).all()
    return result


@pytest.mark.parametrize("split", SPLITS)
def test_every_generated_problem_verifies_and_reads_back_as_written(split):
    examples = TASK.generate(split, 600, 3)
    length = (examples.tgt >= 0).sum(axis=1)
    assert TASK.verify(examples.src, examples.tgt, length).all()
    assert PROBES.valid_inputs(examples.src).all()
    problems = TASK.parse(examples.src)
    assert (TASK.encode(problems) == examples.src[:, : TASK.encode(problems).shape[1]]).all()
    assert [p.answer for p in problems] == answers(TASK, examples.src)
    features = PROBES.features(examples.src)
    assert (features["extended"] == (split == "one_more_step")).all()
    assert (features["noop"] == (split == "noop")).all()
    assert set(features["template"]) == set(range(len(TEMPLATE_NAMES)))
    assert (length <= TASK.max_output_length(examples.src.shape[1])).all()


def test_answers_are_the_hand_computed_ones():
    src = encoded(TASK, *SOLVED)
    assert PROBES.valid_inputs(src).all()
    assert answers(TASK, src) == list(SOLVED.values())
    features = PROBES.features(src)
    assert features["steps"].tolist() == [1, 2, 1, 1, 2, 4, 2, 4]
    assert features["answer digits"].tolist() == [2, 2, 1, 3, 1, 3, 3, 3]
    assert features["noop"].tolist() == [0, 0, 0, 0, 1, 0, 1, 1]
    names = [TEMPLATE_NAMES[i] for i in features["template"]]
    assert names == ["gift", "bags", "loss", "boxes", "more_than", "market", "rows", "shelves"]


def test_inputs_the_generator_never_writes_are_refused():
    src = encoded(TASK, *NOT_PROBLEMS)
    assert not PROBES.valid_inputs(src).any()
    assert (PROBES.features(src)["template"] == -1).all()
    assert not PROBES.valid_inputs(np.insert(encoded(TASK, GIFT), 3, 0, axis=1)).any()  # a gap


def test_token_edits_mostly_break_a_problem_and_what_they_keep_is_exact():
    src = TASK.generate("test", 300, 0).src
    for name, family in token_edits(len(TASK.source_vocab)).items():
        edited = family.perturb(src, np.random.default_rng(1)).src
        valid = PROBES.valid_inputs(edited)
        assert valid.mean() < 0.15, name  # what survives: a name, thing or digit swapped
        kept = edited[valid]
        gold = TASK.solve(kept)
        assert TASK.verify(kept, gold, (gold >= 0).sum(axis=1)).all()


def test_outcomes_tell_right_wrong_and_garbled_outputs_apart():
    src = encoded(TASK, GIFT, GIFT, GIFT, GIFT, GIFT, GIFT)
    outputs = ["1 7", "1 8", "7 1", "0 1 7", "1 x", "1 7"]  # the last one did not end
    out, length = encode_outputs(TASK.target_vocab, [o.split() for o in outputs])
    finished = np.array([True, True, True, True, True, False])
    outcomes = TASK.outcomes(src, out, length, finished)
    c, i, u = Outcome.CORRECT.value, Outcome.INCORRECT.value, Outcome.UNPARSEABLE.value
    assert outcomes.tolist() == [c, i, i, i, u, u]


def test_one_more_step_adds_the_templates_extension_and_the_gold_follows_it():
    src = encoded(TASK, GIFT, BAGS)
    result = moved("one_more_step", src)
    assert result.origin.tolist() == [0, 1]
    gift, bags = input_lines(TASK.source_vocab, result.src)
    added = [gift.split(" . ")[2].split(), bags.split(" . ")[3].split()]
    assert added[0][:3] == ["then", "alice", "loses"] and added[1][:3] == ["then", "kofi", "finds"]
    z, w = (int("".join(t for t in words if t.isdigit())) for words in added)
    assert answers(TASK, result.src) == [12 + 5 - z, 3 * 14 - 9 + w]
    assert 1 <= z <= 17 and 1 <= w <= 50
    again = moved("one_more_step", result.src)
    assert len(again) == 0  # an extended problem has no second extension


def test_one_more_step_names_a_new_person_where_the_extension_needs_one():
    loss = "hiro had 2 0 cards . hiro lost 2 0 of them . how many cards does hiro have left ?"
    result = moved("one_more_step", encoded(TASK, loss))
    words = input_lines(TASK.source_vocab, result.src)[0].split(" . ")[2].split()
    assert words[0] == "then" and words[1] != "hiro" and words[2:4] == ["gives", "hiro"]
    assert answers(TASK, result.src) == [int("".join(words[4:-1]))]  # 20 − 20 + z


def test_noop_adds_one_irrelevant_sentence_and_keeps_the_answer():
    src = TASK.generate("test", 300, 0).src
    result = moved("noop", src)
    assert len(result) == 300
    assert answers(TASK, result.src) == answers(TASK, src[result.origin])
    features = PROBES.features(result.src)
    assert (
        features["noop"].all() and (features["template"] == PROBES.features(src)["template"]).all()
    )
    for before, after in zip(input_lines(TASK.source_vocab, src),
                             input_lines(TASK.source_vocab, result.src), strict=True):  # fmt: skip
        old, new = before.split(" . "), after.split(" . ")
        assert len(new) == len(old) + 1 and new[0] == old[0]
        at = next(k for k in range(len(old)) if old[k] != new[k])
        assert new[:at] + new[at + 1 :] == old
    assert len(moved("noop", result.src)) == 0  # one NoOp at most


def test_reinstantiate_keeps_the_structure_and_recomputes_the_answer():
    src = TASK.generate("noop", 300, 0).src
    result = moved("reinstantiate", src)
    assert result.origin.tolist() == list(range(300))
    before, after = TASK.parse(src), TASK.parse(result.src)
    for old, new in zip(before, after, strict=True):
        assert new.template == old.template and new.extended == old.extended
        assert (new.noop.kind, new.noop.position) == (old.noop.kind, old.noop.position)
        assert new.answer == new.values[-1]
    assert sum(old.numbers != new.numbers for old, new in zip(before, after, strict=True)) > 290
    assert answers(TASK, result.src) == [p.answer for p in after]
    assert answers(TASK, result.src) != answers(TASK, src)


def test_rename_keeps_the_numbers_and_the_answer():
    src = TASK.generate("one_more_step", 200, 0).src
    partner = PROBES.relations()["rename"].partner(src, np.random.default_rng(0))
    assert len(partner) == 200
    before, after = TASK.parse(src[partner.origin]), TASK.parse(partner.src)
    assert all(a.numbers == b.numbers for a, b in zip(before, after, strict=True))
    assert sum(a.people != b.people for a, b in zip(before, after, strict=True)) > 190
    assert answers(TASK, partner.src) == answers(TASK, src[partner.origin])


def test_the_same_seed_gives_the_same_problems_and_perturbations():
    first, again = TASK.generate("train", 300, 5), TASK.generate("train", 300, 5)
    assert (first.src == again.src).all() and (first.tgt == again.tgt).all()
    assert not np.array_equal(first.src[:50], TASK.generate("train", 50, 6).src[:50])
    for family in PROBES.families():
        a, b = (moved(family, first.src, seed=9) for _ in range(2))
        assert np.array_equal(a.src, b.src) and np.array_equal(a.origin, b.origin)


def test_options_choose_templates_and_number_ranges():
    task = load_task("word_problems", {"templates": "gift,boxes", "max_number": "9"})
    examples = task.generate("train", 500, 0)
    features = task_probes(task).features(examples.src)
    chosen = {TEMPLATE_NAMES.index("gift"), TEMPLATE_NAMES.index("boxes")}
    assert set(features["template"]) == chosen
    assert all(v <= 9 for p in task.parse(examples.src) for v in p.numbers.values())
    assert "shelves" not in task.source_vocab and "shelves" in TASK.source_vocab
    boxes = "alice has 2 boxes . each box holds 3 apples . how many apples does alice have ?"
    assert task_probes(task).valid_inputs(encoded(task, boxes)).all()
    assert not task_probes(task).valid_inputs(encoded(task, boxes.replace("3", "1 2"))).any()  # > 9


@pytest.mark.parametrize(
    "options, message",
    [
        ({"templates": "gift,box"}, "did you mean boxes"),
        ({"max_number": 0}, "max_number must be an integer in 1"),
        ({"max_factor": 1}, "max_factor must be an integer in 2"),
    ],
)
def test_bad_options_are_one_clear_error(options, message):
    with pytest.raises(ConfigError, match=message):
        load_task("word_problems", options)
