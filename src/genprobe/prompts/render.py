"""A prompt: the instruction, the few-shot examples, then the test input and the answer cue.

    {instruction}{shot}{input}{sep}{x1}{field}{output}{sep}{y1}{shot}...{input}{sep}{x}{field}{cue}

where {shot}, {field} and {sep} are the format's shot spacer, field spacer and separator, and
the cue is the output label and separator without a trailing space.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genprobe.prompts.formats import PromptFormat
from genprobe.prompts.text import text_form
from genprobe.tasks.task import Examples, Task


def render(task: Task, fmt: PromptFormat, shots: Examples, src: np.ndarray) -> str:
    """The prompt for one test input `src` ((L,) input ids) with `shots` as its examples."""
    form = text_form(task)

    def field(label: str, text: str) -> str:
        return f"{label}{fmt.separator}{text}"

    examples = [
        field(fmt.input_label, x) + fmt.field_spacer + field(fmt.output_label, y)
        for x, y in zip(form.inputs(shots.src), form.outputs(shots.tgt), strict=True)
    ]
    question = field(fmt.input_label, form.inputs(np.asarray(src)[None])[0])
    parts = [fmt.instruction] if fmt.instruction else []
    return fmt.shot_spacer.join([*parts, *examples, question + fmt.field_spacer + fmt.cue])


def render_batch(
    task: Task, fmt: PromptFormat, shots: Sequence[Examples], src: np.ndarray
) -> list[str]:
    """The prompt of each of the (n, L) test inputs with its shots (as `draw_shots` gives
    them: one draw serves every format)."""
    return [render(task, fmt, s, row) for s, row in zip(shots, np.asarray(src), strict=True)]
