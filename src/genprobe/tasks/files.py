"""Example files of any task: JSON lines `{"input": "a b c", "output": "x y"}`, tokens separated
by spaces. Written atomically; read with errors that name the file, the line and the field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from genprobe.errors import DataFormatError
from genprobe.runs.atomic import write_text
from genprobe.tasks.lines import json_lines, some_rows
from genprobe.tasks.task import Examples, Task
from genprobe.tasks.tokens import (
    check_padded,
    encode_inputs,
    encode_outputs,
    input_lines,
    output_lines,
)

# the name of a suite of a user's inputs (`genprobe evaluate --name`, a probe's `--input` file)
SUITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def examples_text(task: Task, examples: Examples) -> str:
    """One JSON object per example, in order: an example file's contents."""
    inputs = input_lines(task.source_vocab, examples.src)
    outputs = output_lines(task.target_vocab, examples.tgt)
    lines = (json.dumps({"input": i, "output": o}) for i, o in zip(inputs, outputs, strict=True))
    return "".join(f"{line}\n" for line in lines)


def write_examples(path: str | Path, task: Task, examples: Examples) -> Path:
    """An example file of `examples` (`examples_text`), written atomically."""
    write_text(path, examples_text(task, examples))
    return Path(path)


class ExampleArrays(NamedTuple):
    src: np.ndarray  # (n, L) input ids
    out: np.ndarray  # (n, M) output ids, -1 for tokens outside the vocabulary
    length: np.ndarray  # (n,) output lengths
    lines: np.ndarray  # (n,) each example's line in its file, from 1 (blank lines are skipped)


def read_examples(
    path: str | Path, task: Task, outputs: bool = True, longest: int | None = None
) -> ExampleArrays:
    """Inputs (known tokens only) and outputs (any tokens) of an example file, with the line
    each example is on; with `outputs=False` the `output` field may be absent and `out` and
    `length` are empty. `longest`: the most input tokens the model they are for can take.

    Raises:
        DataFormatError: unreadable, not JSON objects, no examples, a missing or non-string
            field, an empty input, an unknown input token, an input longer than `longest`, or
            inputs or outputs one padded array cannot hold (`check_padded`), before encoding.
    """
    rows = some_rows(path, json_lines(path, objects=True))
    fields = ("input", "output") if outputs else ("input",)
    for number, row in rows:
        for name in fields:
            if not isinstance(row.get(name), str):
                raise DataFormatError(path, number, f"field {name!r} must be a string of tokens")
    tokens = [(number, row["input"].split()) for number, row in rows]
    if longest is not None:
        for number, given in tokens:
            if len(given) > longest:
                raise DataFormatError(
                    path,
                    number,
                    f"input of {len(given):,} tokens, longer than the {longest:,} the model "
                    "can take",
                )
    src = encode_inputs(task.source_vocab, tokens, path)
    lines = np.array([number for number, _ in rows])
    if not outputs:
        empty = np.zeros((len(rows), 0), dtype=np.int64)
        return ExampleArrays(src, empty, np.zeros(len(rows), dtype=np.int64), lines)
    outputs = [(number, row["output"].split()) for number, row in rows]
    check_padded(outputs, path, "output")
    out, length = encode_outputs(task.target_vocab, [tokens for _, tokens in outputs])
    return ExampleArrays(src, out, length, lines)
