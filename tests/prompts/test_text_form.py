"""A task's inputs and outputs as text, and answer text back to output ids, strictly."""

import numpy as np
import pytest

from genprobe.errors import ConfigError
from genprobe.prompts import EMPTY, TextForm, text_form
from genprobe.tasks import load_task
from genprobe.tasks.tokens import encode_inputs


@pytest.mark.parametrize("name", ["addition", "scan", "reverse_string", "rewriting"])
def test_inputs_and_outputs_read_back_as_the_same_ids(name):
    task = load_task(name)
    examples = task.generate(task.suites()[0], 20, seed=3)
    form = text_form(task)
    rows = [(None, line.split(" ")) for line in form.inputs(examples.src)]
    np.testing.assert_array_equal(encode_inputs(task.source_vocab, rows, "prompt"), examples.src)
    for text, gold in zip(form.outputs(examples.tgt), examples.tgt, strict=True):
        ids, problem = form.parse(text)
        assert problem == "" and ids == tuple(gold[gold >= 0])


def test_the_default_text_is_the_token_strings_joined_by_spaces():
    task = load_task("scan")
    form = text_form(task)
    src = encode_inputs(task.source_vocab, [(None, ["jump", "twice"])], "test")
    assert form.inputs(src) == ["jump twice"]
    jump = task.target_vocab.index("I_JUMP")
    assert form.outputs(np.array([[jump, jump, -1]])) == ["I_JUMP I_JUMP"]


def test_an_empty_output_has_a_text_of_its_own_and_reads_back_empty():
    form = text_form(load_task("stack_manipulation"))
    assert form.outputs(np.array([[-1, -1]])) == [EMPTY]
    assert form.parse(EMPTY) == ((), "")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("1 x 2", "unknown token 'x'"),
        ("1 12", "unknown token '12'"),  # not split into digits: tokens are space-separated
        ("", "empty answer"),
        ("   ", "empty answer"),
    ],
)
def test_an_answer_outside_the_target_vocabulary_is_unreadable_not_shortened(text, problem):
    assert text_form(load_task("addition", {"format": "plain"})).parse(text) == (None, problem)


def test_a_task_can_read_its_tokens_joined_through_the_hook(joined):
    task = joined
    form = text_form(task)
    src = encode_inputs(task.source_vocab, [(None, list("12+34"))], "test")
    assert form.inputs(src) == ["12+34"]
    assert form.outputs(task.solve(src)) == ["46"]
    assert form.parse("46") == ((4, 6), "")
    assert form.parse("4 6") == (None, "unknown token ' '")


def test_tokens_of_several_characters_cannot_be_joined():
    task = load_task("addition", {"train_digits": 20})  # 51 index hints: aa, ab, ... after z
    with pytest.raises(ConfigError, match="one character per token"):
        TextForm(task.source_vocab, task.target_vocab, separator="")
    with pytest.raises(ConfigError, match="separator"):
        TextForm(task.source_vocab, task.target_vocab, separator=",")
