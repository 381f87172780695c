"""A model's completion read strictly as the task's output, and judged by the task's verifier.

The completion starts right after the answer cue. The answer is its first line (every
format's shot spacer holds a newline, so a model that goes on with another example has ended
its answer), without the spaces around it. It is unparseable, never wrong by accident, when it
is empty, holds a token outside the target vocabulary, is longer than any right output of the
input (as a decoder cut at the length limit: `Task.outcomes`' "did not end"), or the
completion stopped at the model's token limit before the line ended.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from genprobe.prompts.text import text_form
from genprobe.tasks.probing import padded
from genprobe.tasks.task import Task


@dataclass(frozen=True)
class Answer:
    """What was read from one completion."""

    extracted: str  # the text taken as the answer
    ids: tuple[int, ...] | None  # its output ids; None: unparseable
    problem: str = ""  # why it is unparseable ("" when read)


def parse_answer(task: Task, src: np.ndarray, completion: str, cut: bool = False) -> Answer:
    """The answer of `completion` to the input `src` ((L,) input ids); `cut`: the completion
    stopped at the model's token limit rather than ending by itself."""
    line, newline, _ = completion.lstrip(" \t").partition("\n")
    extracted = line.rstrip()
    if cut and not newline:
        return Answer(extracted, None, "cut off at the token limit before the answer ended")
    ids, problem = text_form(task).parse(extracted)
    if ids is None:
        return Answer(extracted, None, problem)
    length = int((np.asarray(src) > 0).sum())
    longest = task.max_output_length(length)
    if len(ids) > longest:
        problem = f"too long: {len(ids)} tokens, a right output of {length} has at most {longest}"
        return Answer(extracted, None, problem)
    return Answer(extracted, ids)


def parse_answers(
    task: Task, src: np.ndarray, completions: Sequence[str], cut: Sequence[bool] | None = None
) -> list[Answer]:
    """`parse_answer` for each of the (n, L) inputs and its completion."""
    cut = [False] * len(completions) if cut is None else cut
    return [
        parse_answer(task, row, text, stopped)
        for row, text, stopped in zip(np.asarray(src), completions, cut, strict=True)
    ]


def judge(task: Task, src: np.ndarray, answers: Sequence[Answer]) -> np.ndarray:
    """(n,) the `Outcome` value of each answer to the (n, L) inputs: unparseable where it could
    not be read, else correct or incorrect as the task's verifier says (`Task.outcomes`)."""
    read = np.array([a.ids is not None for a in answers], dtype=bool)
    out = padded([np.array(a.ids or (), dtype=np.int64) for a in answers], fill=-1)
    out_len = np.array([len(a.ids or ()) for a in answers], dtype=np.int64)
    return task.outcomes(np.asarray(src), out, out_len, read)
