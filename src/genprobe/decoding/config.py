"""How a seq2seq model under test decodes: the settings a run records (no torch import)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from genprobe.errors import ConfigError
from genprobe.runs.config import Recorded


@dataclass(frozen=True)
class DecodingConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`, inside `ModelSettings`."""

    method: Literal["beam", "greedy", "sample"] = "beam"
    beam_size: int = 10  # raised to k when fewer than the k candidates asked for
    length_penalty: float = 1.0  # L&C's value: rank by mean log-probability per token
    early_stopping: bool = True
    max_len: int = 200  # generated tokens, EOS included (L&C's notebook and SAGGA: 200)
    temperature: float = 1.0  # sampling only
    samples: int | None = None  # sampling: draws per problem [default: k]; duplicates merge
    seed: int = 0  # sampling only
    batch_size: int = 64  # problems per model call

    def validated(self) -> DecodingConfig:
        if self.method not in ("beam", "greedy", "sample"):
            raise ConfigError("decoding method", "beam, greedy or sample", self.method)
        if self.batch_size < 1:
            raise ConfigError("batch size", "at least 1", self.batch_size)
        return self
