"""Prompt formats, and families of equivalent ones drawn from a seed.

After FormatSpread (Sclar, Choi, Tsvetkov & Suhr 2023, "Quantifying Language Models'
Sensitivity to Spurious Features in Prompt Design"): formats that differ only in wording and
layout a reader would call the same (the labels of the fields, the separator after a label,
the spacing between fields and between examples, the casing of the labels, the instruction's
wording) say the same to the model, so how much accuracy moves across them is variance of the
prompt, not of the model's skill. A format's strings are stored as they render (cased), so two
formats are equal exactly when they render alike.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from genprobe.errors import ConfigError
from genprobe.options import is_integer

INSTRUCTIONS = (
    "Give the output for the last input, following the examples.",
    "Following the examples, write the output of the last input.",
    "Each input below is followed by its output. Complete the last one.",
)
LABELS = (("Input", "Output"), ("Question", "Answer"), ("Q", "A"), ("Problem", "Solution"))
CASINGS = (str.title, str.lower, str.upper)
SEPARATORS = (": ", " - ", ":\n")  # between a label and its text
FIELD_SPACERS = ("\n", " ", "\n\n")  # between an input field and its output field
SHOT_SPACERS = ("\n\n", "\n", "\n\n\n")  # between examples


@dataclass(frozen=True)
class PromptFormat:
    """How a prompt lays out its instruction, examples and question (see `render`)."""

    instruction: str = INSTRUCTIONS[0]  # "" for none
    input_label: str = "Input"
    output_label: str = "Output"
    separator: str = ": "
    field_spacer: str = "\n"
    shot_spacer: str = "\n\n"  # holds a newline: an answer ends at the first one

    def __post_init__(self) -> None:
        for name in ("input_label", "output_label"):
            label = getattr(self, name)
            if not label.strip() or "\n" in label:
                raise ConfigError(f"format {name}", "a non-empty one-line label", label)
        if "\n" not in self.shot_spacer or self.shot_spacer.strip():
            raise ConfigError(
                "format shot_spacer", "white space holding a newline", self.shot_spacer
            )

    @property
    def cue(self) -> str:
        """What a prompt ends with: the output label and its separator, without a trailing
        space (the model writes it, as the examples show; most tokenizers attach it to the next
        word)."""
        return self.output_label + self.separator.rstrip(" ")

    @property
    def lead(self) -> str:
        """What comes between the cue and an answer: the separator's trailing spaces (`cue`
        plus `lead` plus the answer is how an example reads)."""
        return self.separator[len(self.separator.rstrip(" ")) :]


DEFAULT = PromptFormat()


def grammar() -> tuple[PromptFormat, ...]:
    """Every distinct format of the grammar, the default first."""
    formats = (
        PromptFormat(instruction, case(source), case(target), separator, field, shot)
        for instruction, (source, target), case, separator, field, shot in itertools.product(
            INSTRUCTIONS, LABELS, CASINGS, SEPARATORS, FIELD_SPACERS, SHOT_SPACERS
        )
    )
    return tuple(dict.fromkeys((DEFAULT, *formats)))  # "Q".title() == "Q".upper()


def format_family(n: int, seed: int) -> tuple[PromptFormat, ...]:
    """n distinct equivalent formats: `DEFAULT`, then n - 1 others drawn from the grammar by
    `seed` (the first n of a seed do not depend on n).

    Raises:
        ConfigError: n < 1, or more than the grammar holds.
    """
    formats = grammar()
    if not is_integer(n) or not 1 <= n <= len(formats):
        raise ConfigError("formats", f"an integer in 1..{len(formats)}", n)
    order = np.random.default_rng(seed).permutation(len(formats) - 1) + 1
    return (formats[0], *(formats[i] for i in order[: n - 1]))
