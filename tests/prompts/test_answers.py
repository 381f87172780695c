"""A completion read strictly: the first answer after the cue, recorded as extracted, and
unparseable (never incorrect by accident) when it cannot be read."""

import numpy as np
import pytest

from genprobe.prompts import Answer, judge, parse_answer, parse_answers
from genprobe.tasks import load_task
from genprobe.tasks.tokens import encode_inputs
from genprobe.tasks.verdict import Outcome


@pytest.fixture(scope="module")
def plain():
    return load_task("addition", {"format": "plain"})


@pytest.fixture(scope="module")
def question(plain):
    return encode_inputs(plain.source_vocab, [(None, list("12+34"))], "test")[0]  # 46


@pytest.mark.parametrize(
    ("completion", "extracted", "outcome"),
    [
        ("4 6", "4 6", Outcome.CORRECT),
        (" 4 6 \nbecause 12 + 34 = 46", "4 6", Outcome.CORRECT),
        ("4 6\n\nInput: 5 + 5\nOutput: 1 0", "4 6", Outcome.CORRECT),  # goes on with a shot
        ("4 6\r\n", "4 6", Outcome.CORRECT),
        ("4 7\nInput: 4 6", "4 7", Outcome.INCORRECT),
        ("(empty)", "(empty)", Outcome.INCORRECT),  # read: the empty output, which is wrong
        ("4 6 because", "4 6 because", Outcome.UNPARSEABLE),
        ("46", "46", Outcome.UNPARSEABLE),
        ("", "", Outcome.UNPARSEABLE),
        ("\n4 6", "", Outcome.UNPARSEABLE),  # the answer line is empty
        ("1 1 1 1 1", "1 1 1 1 1", Outcome.UNPARSEABLE),  # longer than any sum of 5 tokens
    ],
)
def test_what_is_extracted_and_how_it_is_judged(plain, question, completion, extracted, outcome):
    answer = parse_answer(plain, question, completion)
    assert answer.extracted == extracted
    assert (answer.ids is None) == (outcome is Outcome.UNPARSEABLE)
    assert judge(plain, question[None], [answer]).tolist() == [outcome.value]


@pytest.mark.parametrize(
    ("completion", "problem"),
    [
        ("4 6 because", "unknown token 'because'"),
        ("4 x", "unknown token 'x'"),
        ("  ", "empty answer"),
        ("1 1 1 1 1", "too long: 5 tokens, a right output of 5 has at most 4"),
    ],
)
def test_an_unparseable_answer_says_why(plain, question, completion, problem):
    assert parse_answer(plain, question, completion).problem == problem


def test_a_completion_cut_at_the_token_limit_counts_only_if_its_answer_ended(plain, question):
    cut = parse_answer(plain, question, "4 6", cut=True)
    assert cut == Answer("4 6", None, "cut off at the token limit before the answer ended")
    assert parse_answer(plain, question, "4 6\nInput: 1", cut=True) == Answer("4 6", (4, 6))


def test_an_empty_output_is_a_right_answer_where_the_task_says_so():
    task = load_task("stack_manipulation")
    examples = task.generate("test", 200, seed=0)
    empty = np.flatnonzero((examples.tgt < 0).all(axis=1))
    assert len(empty), "stack manipulation has inputs whose right output is empty"
    src = examples.src[empty[:1]]
    answers = parse_answers(task, src, ["(empty)\n"])
    assert answers == [Answer("(empty)", ())]
    assert judge(task, src, answers).tolist() == [Outcome.CORRECT.value]


def test_a_batch_is_judged_by_the_tasks_verifier(plain):
    examples = plain.generate("test", 3, seed=0)
    gold = [" ".join(map(str, row[row >= 0])) for row in examples.tgt]
    completions = [gold[0] + "\n", "9 " + gold[1], gold[2] + " x"]
    answers = parse_answers(plain, examples.src, completions, cut=[False, False, True])
    assert judge(plain, examples.src, answers).tolist() == [
        Outcome.CORRECT.value,
        Outcome.INCORRECT.value,
        Outcome.UNPARSEABLE.value,
    ]
