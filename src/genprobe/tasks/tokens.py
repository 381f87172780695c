"""Token strings to id arrays and back, for any vocabulary (vectorized where it counts).

Inputs are 1-based ids with 0 as padding and must be known tokens; outputs are 0-based ids
with -1 for padding and for any token outside the vocabulary, since an output is judged, never
refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from genprobe.errors import DataFormatError

Rows = Sequence[tuple[int | None, Sequence[str]]]  # (line number or None, tokens)

# The most ids one padded (n, L) array may hold: 2 GiB of int64. Past it, one sequence is far
# longer than the rest (every one is padded to the longest): refused before allocating.
MAX_PADDED_IDS = 1 << 28


def input_lines(vocab: Sequence[str], src: np.ndarray) -> list[str]:
    """(n, L) input ids → one space-separated line per row."""
    names = np.array(("", *vocab), dtype=object)
    return [" ".join(names[row[row > 0]]) for row in np.asarray(src)]


def output_lines(vocab: Sequence[str], out: np.ndarray) -> list[str]:
    """(n, M) output ids → one space-separated line per row (negative ids are dropped)."""
    names = np.array(vocab, dtype=object)
    return [" ".join(names[row[row >= 0]]) for row in np.asarray(out)]


def encode_inputs(vocab: Sequence[str], rows: Rows, path: str | Path) -> np.ndarray:
    """Token lists → (n, L) input ids.

    Raises:
        DataFormatError: an empty input, a token outside `vocab`, or too many ids once padded
            (`check_padded`), naming file and line.
    """
    ids = {name: i for i, name in enumerate(vocab, start=1)}
    width = check_padded(rows, path, "input")
    src = np.zeros((len(rows), width), dtype=np.int64)
    for row, (number, tokens) in enumerate(rows):
        if not tokens:
            raise DataFormatError(path, number, "empty input")
        unknown = [token for token in tokens if token not in ids]
        if unknown:
            raise DataFormatError(path, number, f"unknown input token {unknown[0]!r}")
        src[row, : len(tokens)] = [ids[token] for token in tokens]
    return src


def check_padded(rows: Rows, path: str | Path, what: str) -> int:
    """The length of the longest of `rows`' token lists: what each is padded to.

    Raises:
        DataFormatError: padded to it, they would hold more than `MAX_PADDED_IDS` ids (naming
            the longest's line).
    """
    lengths = np.array([len(tokens) for _, tokens in rows], dtype=np.int64)
    if not len(lengths):
        return 0
    longest = int(lengths.argmax())
    width = int(lengths[longest])
    if len(rows) * width > MAX_PADDED_IDS:
        raise DataFormatError(
            path,
            rows[longest][0],
            f"{what} of {width:,} tokens: the file's {len(rows):,} {what}s padded to it would "
            f"hold {len(rows) * width:,} ids, more than the {MAX_PADDED_IDS:,} genprobe holds "
            "at once (shorten it, or split the file)",
        )
    return width


def encode_outputs(
    vocab: Sequence[str], outputs: Sequence[Sequence[str]]
) -> tuple[np.ndarray, np.ndarray]:
    """Token lists → ((n, M) output ids, -1 for unknown tokens and padding; (n,) lengths)."""
    index = {token: i for i, token in enumerate(vocab)}
    lengths = np.array([len(tokens) for tokens in outputs], dtype=np.int64)
    out = np.full((len(outputs), max(lengths, default=0)), -1, dtype=np.int64)
    for row, tokens in enumerate(outputs):
        out[row, : len(tokens)] = [index.get(token, -1) for token in tokens]
    return out, lengths
