"""Families of distinct, equivalent prompt formats, drawn from a seed."""

import pytest

from genprobe.errors import ConfigError
from genprobe.prompts import DEFAULT, PromptFormat, format_family, render
from genprobe.prompts.formats import INSTRUCTIONS, grammar
from genprobe.tasks import load_task
from genprobe.tasks.task import Examples
from genprobe.tasks.tokens import encode_inputs


def test_format_zero_is_the_plain_default_and_the_rest_are_distinct():
    family = format_family(40, seed=0)
    assert family[0] == DEFAULT
    assert (DEFAULT.input_label, DEFAULT.output_label, DEFAULT.separator) == (
        "Input",
        "Output",
        ": ",
    )
    assert len(set(family)) == 40


def test_a_family_is_the_same_for_a_seed_and_its_first_formats_do_not_depend_on_n():
    assert format_family(12, seed=5) == format_family(12, seed=5)
    assert format_family(12, seed=5)[:7] == format_family(7, seed=5)
    assert format_family(12, seed=5) != format_family(12, seed=6)


def test_the_grammar_counts_formats_that_render_alike_once():
    formats = grammar()
    assert len(formats) == len(set(formats))
    labels = {(f.input_label, f.output_label) for f in formats}
    assert ("Q", "A") in labels and ("q", "a") in labels  # "Q".title() == "Q".upper(): once
    assert len(labels) == 4 * 3 - 1
    assert len(format_family(len(formats), seed=0)) == len(formats)


@pytest.mark.parametrize("n", [0, -1, 2.5, True, len(grammar()) + 1])
def test_more_formats_than_the_grammar_holds_is_a_clear_error(n):
    with pytest.raises(ConfigError, match=rf"formats must be an integer in 1\.\.{len(grammar())}"):
        format_family(n, seed=0)


def content(fmt: PromptFormat, prompt: str) -> str:
    """The words of a prompt with its instruction and its format's markup replaced by marks."""
    assert prompt.startswith(fmt.instruction) and prompt.endswith(fmt.cue)
    body = prompt[len(fmt.instruction) : -len(fmt.cue)] + " <out>"
    body = body.replace(fmt.input_label + fmt.separator, " <in> ")
    return " ".join(body.replace(fmt.output_label + fmt.separator, " <out> ").split())


def test_every_format_of_a_family_says_the_same_in_a_different_layout():
    task = load_task("addition", {"format": "plain"})
    lines = [list("12+34"), list("5+5"), list("7+8")]
    src = encode_inputs(task.source_vocab, [(None, line) for line in lines], "test")
    shots = Examples(src[:2], task.solve(src[:2]))
    family = format_family(30, seed=1)
    prompts = [render(task, fmt, shots, src[2]) for fmt in family]
    expected = "<in> 1 2 + 3 4 <out> 4 6 <in> 5 + 5 <out> 1 0 <in> 7 + 8 <out>"
    for fmt, prompt in zip(family, prompts, strict=True):
        assert fmt.instruction in INSTRUCTIONS
        assert content(fmt, prompt) == expected
    assert len(set(prompts)) == len(family)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"input_label": ""}, "input_label must be a non-empty one-line label"),
        ({"output_label": "A\nB"}, "output_label must be a non-empty one-line label"),
        ({"shot_spacer": "  "}, "shot_spacer must be white space holding a newline"),
        ({"shot_spacer": "\n---\n"}, "shot_spacer must be white space holding a newline"),
    ],
)
def test_a_format_that_could_not_be_read_back_is_refused(change, message):
    with pytest.raises(ConfigError, match=message):
        PromptFormat(**change)


def test_the_cue_ends_with_the_separator_without_its_trailing_space():
    assert DEFAULT.cue == "Output:"
    assert PromptFormat(output_label="A", separator=" - ").cue == "A -"
    assert PromptFormat(output_label="A", separator=":\n").cue == "A:\n"


def test_cue_and_lead_read_as_an_example_answer_does():
    task = load_task("addition", {"format": "plain"})
    src = encode_inputs(task.source_vocab, [(None, list("12+34")), (None, list("5+5"))], "test")
    shots = Examples(src[:1], task.solve(src[:1]))
    assert [fmt.lead for fmt in (DEFAULT, PromptFormat(separator=":\n"))] == [" ", ""]
    for fmt in format_family(30, seed=2):
        example_answer = fmt.output_label + fmt.separator + "4 6"
        assert example_answer in render(task, fmt, shots, src[1])
        assert fmt.cue + fmt.lead + "4 6" == example_answer
