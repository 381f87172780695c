"""How a task's inputs and outputs read as text, and an answer's text back to output ids.

By default a sequence reads as its token strings joined by spaces (as in example files, via
`genprobe.tasks.tokens`). A task may read otherwise by defining a method `text_form()` that
returns a `TextForm`, e.g. `TextForm(self.source_vocab, self.target_vocab, separator="")`
for additions written `12+34` (joined tokens must each be one character, so that the text
splits back one way only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from genprobe.errors import ConfigError
from genprobe.tasks.task import Task
from genprobe.tasks.tokens import encode_outputs, input_lines, output_lines

EMPTY = "(empty)"  # the text of an empty output (a right answer of some tasks)


@dataclass(frozen=True)
class TextForm:
    """Token strings joined by `separator`: " " (the default) or "" (one-character tokens)."""

    source_vocab: tuple[str, ...]
    target_vocab: tuple[str, ...]
    separator: str = " "

    def __post_init__(self) -> None:
        if self.separator not in (" ", ""):
            raise ConfigError("text form separator", '" " or ""', self.separator)
        if not self.separator:
            long = [t for t in (*self.source_vocab, *self.target_vocab) if len(t) != 1]
            if long:
                expected = "one character per token to join tokens without spaces"
                raise ConfigError("text form tokens", expected, long[0])
        if EMPTY in self.target_vocab:
            raise ConfigError("text form tokens", f"free of {EMPTY!r}", EMPTY)

    def inputs(self, src: np.ndarray) -> list[str]:
        """(n, L) input ids (1-based, 0 = padding) → one text per row."""
        return [self._joined(line) for line in input_lines(self.source_vocab, src)]

    def outputs(self, out: np.ndarray) -> list[str]:
        """(n, M) output ids (0-based, negative = padding) → one text per row."""
        return [self._joined(line) or EMPTY for line in output_lines(self.target_vocab, out)]

    def parse(self, text: str) -> tuple[tuple[int, ...] | None, str]:
        """An answer's text → (its output ids, "") or (None, why it cannot be read): every
        token must be one of the target vocabulary's; `EMPTY` is the empty output."""
        if text == EMPTY:
            return (), ""
        tokens = text.split() if self.separator else list(text)
        if not tokens:
            return None, "empty answer"
        ids = encode_outputs(self.target_vocab, [tokens])[0][0]
        unknown = [token for token, i in zip(tokens, ids, strict=True) if i < 0]
        if unknown:
            return None, f"unknown token {unknown[0]!r}"
        return tuple(int(i) for i in ids), ""

    def _joined(self, line: str) -> str:
        return line.replace(" ", self.separator)  # tokens hold no spaces


def text_form(task: Task) -> TextForm:
    """The task's own `text_form()` if it defines one, else its tokens joined by spaces."""
    own = getattr(task, "text_form", None)
    if callable(own):
        return own()
    return TextForm(tuple(task.source_vocab), tuple(task.target_vocab))
