"""The exact text of rendered prompts."""

import pytest

from genprobe.prompts import DEFAULT, PromptFormat, draw_shots, render, render_batch
from genprobe.tasks import load_task
from genprobe.tasks.task import Examples
from genprobe.tasks.tokens import encode_inputs


def additions(task, *lines):
    src = encode_inputs(task.source_vocab, [(None, list(line)) for line in lines], "test")
    return Examples(src, task.solve(src))


@pytest.fixture(scope="module")
def plain():
    return load_task("addition", {"format": "plain"})


def test_a_two_shot_prompt_in_the_default_format(plain):
    shots = additions(plain, "12+34", "5+5")
    question = additions(plain, "7+8").src[0]
    assert render(plain, DEFAULT, shots, question) == (
        "Give the output for the last input, following the examples.\n\n"
        "Input: 1 2 + 3 4\nOutput: 4 6\n\n"
        "Input: 5 + 5\nOutput: 1 0\n\n"
        "Input: 7 + 8\nOutput:"
    )


def test_a_prompt_in_another_format(plain):
    fmt = PromptFormat("", "q", "a", ":\n", " ", "\n")
    shots = additions(plain, "12+34")
    assert render(plain, fmt, shots, additions(plain, "7+8").src[0]) == (
        "q:\n1 2 + 3 4 a:\n4 6\nq:\n7 + 8 a:\n"
    )


def test_a_zero_shot_prompt_and_a_task_with_its_own_text_form(joined):
    task = joined
    shots = additions(task, "12+34")
    none = Examples(shots.src[:0], shots.tgt[:0])
    assert render(task, DEFAULT, none, additions(task, "99+1").src[0]) == (
        "Give the output for the last input, following the examples.\n\nInput: 99+1\nOutput:"
    )
    fmt = PromptFormat("", separator=" - ", field_spacer=" ")
    assert render(task, fmt, shots, additions(task, "7+8").src[0]) == (
        "Input - 12+34 Output - 46\n\nInput - 7+8 Output -"
    )


def test_a_batch_renders_each_input_with_the_shots_of_its_draw(plain):
    src = plain.generate("test", 4, seed=0).src
    prompts = render_batch(plain, DEFAULT, draw_shots(plain, 3, 1, 0, src), src)
    texts = [" ".join(str(i - 1) if i <= 10 else "+" for i in row[row > 0]) for row in src]
    for prompt, text in zip(prompts, texts, strict=True):
        assert prompt.endswith(f"Input: {text}\nOutput:")
        assert prompt.count("Output:") == 4
    blocks = {tuple(prompt.split("\n\n")[1:4]) for prompt in prompts}
    assert len(blocks) == 1  # the same three shots (none of them is a test input here)
    assert render_batch(plain, DEFAULT, draw_shots(plain, 3, 2, 0, src), src)[0] != prompts[0]
    assert all(p.startswith(DEFAULT.instruction) for p in prompts)
