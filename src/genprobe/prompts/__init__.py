"""Prompts from tasks, for language models under test: a task's inputs and outputs as text
(`text`), families of equivalent prompt formats (`formats`), few-shot examples drawn from the
training split (`shots`), the prompt itself (`render`), and strict reading of a model's answer
(`answers`)."""

from genprobe.prompts.answers import Answer, judge, parse_answer, parse_answers
from genprobe.prompts.formats import DEFAULT, PromptFormat, format_family
from genprobe.prompts.render import render, render_batch
from genprobe.prompts.shots import check_shots, draw_shots
from genprobe.prompts.text import EMPTY, TextForm, text_form

__all__ = [
    "DEFAULT",
    "EMPTY",
    "Answer",
    "PromptFormat",
    "TextForm",
    "check_shots",
    "draw_shots",
    "format_family",
    "judge",
    "parse_answer",
    "parse_answers",
    "render",
    "render_batch",
    "text_form",
]
