"""Every registered task renders prompts in several formats and reads its own gold outputs back
as right answers, and damaged ones as unparseable."""

import pytest

from genprobe.prompts import (
    draw_shots,
    format_family,
    judge,
    parse_answers,
    render_batch,
    text_form,
)
from genprobe.tasks import load_task
from genprobe.tasks.registry import TASKS
from genprobe.tasks.verdict import Outcome


@pytest.mark.parametrize("name", list(TASKS))
def test_every_task_renders_prompts_and_reads_its_gold_outputs_back(name):
    task = load_task(name)
    examples = task.generate(task.suites()[0], 4, seed=0)
    form = text_form(task)
    inputs, gold = form.inputs(examples.src), form.outputs(examples.tgt)
    shots = draw_shots(task, 2, 0, 0, examples.src)
    for fmt in format_family(3, seed=0):
        prompts = render_batch(task, fmt, shots, examples.src)
        for prompt, text in zip(prompts, inputs, strict=True):
            question = fmt.input_label + fmt.separator + text + fmt.field_spacer + fmt.cue
            assert prompt.endswith(question)
            assert prompt.removesuffix(question).count(fmt.output_label + fmt.separator) == 2
        next_shot = fmt.shot_spacer + fmt.input_label + fmt.separator + inputs[0]
        answers = parse_answers(task, examples.src, [g + next_shot for g in gold])
        assert [a.extracted for a in answers] == gold
        assert set(judge(task, examples.src, answers)) == {Outcome.CORRECT.value}
        damaged = parse_answers(task, examples.src, [g + " ???" for g in gold])
        assert set(judge(task, examples.src, damaged)) == {Outcome.UNPARSEABLE.value}
