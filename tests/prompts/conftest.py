"""A task that reads its own way, through the text-form hook."""

from dataclasses import dataclass

import pytest

from genprobe.prompts import TextForm
from genprobe.tasks.addition import Addition


@dataclass(frozen=True)
class JoinedAddition(Addition):
    """Plain addition that reads `12+34`."""

    format: str = "plain"

    def text_form(self) -> TextForm:
        return TextForm(self.source_vocab, self.target_vocab, separator="")


@pytest.fixture
def joined():
    return JoinedAddition()
