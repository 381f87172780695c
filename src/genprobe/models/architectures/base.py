"""The contract of an architecture the seed study trains (the models' seam, as `tasks.task` is
the tasks').

An architecture is a frozen dataclass that subclasses `Architecture`: its fields are its
options (`--model-option name=value`), checked in `__post_init__`. It says what it is in words
(`describe`) and builds S seeds as one stacked model (`stacked`, `initialized`), whose member k
is seed k: the `StackedModel` contract below is all the trainer, the decoder and the member
checkpoints use. A new architecture is one file and one row of `architectures.ARCHITECTURES`;
the model check (`studies.seed_sensitivity.model_check`) then runs over it.

What a model's size depends on besides its options (the task's vocabularies and lengths) comes
as a `ModelShape`, so the same options fit any task.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:  # torch only where a model is built: the table's names check without it
    from torch import Tensor

    from genprobe.models.member_stack import MemberStack


def fit_positions(
    src_len: np.ndarray, out_len: np.ndarray, limit: int | None, joint: bool
) -> np.ndarray:
    """(n,) bool: whether input and output fit in `limit` positions (None: no table), taken
    together (`joint`: one sequence, decoder-only) or each on its side."""
    src_len, out_len = np.asarray(src_len), np.asarray(out_len)
    if not limit:
        return np.ones(len(src_len), dtype=bool)
    return (src_len + out_len if joint else np.maximum(src_len, out_len)) <= limit


@dataclass(frozen=True)
class ModelShape:
    """The task's side of a model's size. Ids are those of `genprobe.data.seq2seq`."""

    src_vocab: int  # input ids, 0 = padding
    tgt_vocab: int  # output ids: 0, 1, 2 = padding, begin and end of sequence, then the tokens
    src_len: int  # the longest training input, in tokens
    tgt_len: int  # the longest training output, with its end-of-sequence token
    # the longest input, BOS, output and EOS of anything the study decodes (position tables)
    max_positions: int

    @property
    def seq_vocab(self) -> int:
        """The joint vocabulary of a model that reads input and output as one sequence: input
        ids as they are, output id j > 0 as `src_vocab + j` (0 stays padding)."""
        return self.src_vocab + self.tgt_vocab


class Architecture(abc.ABC):
    """Options of one architecture; a frozen dataclass whose fields are the options."""

    # the `format` a member checkpoint of this architecture records
    member_format: ClassVar[str]
    # Options added after runs of this architecture existed, with their defaults: `options()`
    # leaves one out while it is at its default, so that an older run keeps its identity.
    added_options: ClassVar[Mapping[str, Any]] = {}

    @abc.abstractmethod
    def describe(self) -> str:
        """The model in words, for reports: "1-layer LSTM seq2seq with bilinear attention (…)"."""

    @abc.abstractmethod
    def model_class(self) -> type[MemberStack]:
        """The stacked model class it builds."""

    def stacked(self, shape: ModelShape, members: int) -> MemberStack:
        """`members` members whose weights are not drawn yet (to load states into)."""
        return self.model_class()(self, shape, members)

    def initialized(self, shape: ModelShape, seeds: Sequence[int]) -> MemberStack:
        """One member per seed, member k drawn from `seeds[k]` alone."""
        return self.model_class().initialized(self, shape, seeds)

    def from_members(self, shape: ModelShape, states: Sequence[dict[str, Tensor]]) -> MemberStack:
        """Single-member state dicts (as `member_state` gives them) stacked into one model."""
        return self.model_class().from_members(self, shape, states)

    def spec(self) -> str | None:
        """The name of an architecture outside the table (`py:…`, `hf:…`); None for a row."""
        return None

    def options(self) -> dict[str, Any]:
        """The options as a run's config records them (`added_options` at their default
        left out)."""
        options = dataclasses.asdict(self)  # type: ignore[call-overload]
        added = self.added_options
        return {k: v for k, v in options.items() if k not in added or v != added[k]}

    def takes(self, shape: ModelShape, src_len: np.ndarray, out_len: np.ndarray) -> np.ndarray:
        """(n,) bool: whether a model of `shape` can read an input of `src_len[i]` tokens and
        decode `out_len[i]` output steps for it (a table of positions bounds both; a fixed-length
        input, the input). Default: any."""
        return np.ones(len(src_len), dtype=bool)

    def decode_footprint(self, input_length: int) -> int:
        """About how many floats a member holds per example while it decodes an input of
        `input_length` tokens: the predict stage decodes fewer examples at once for long
        inputs."""
        return input_length * 256
