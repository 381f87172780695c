"""The authors' file formats.

* parallel text: `PREFIX.src` and `PREFIX.tgt`, one example per line, tokens separated by spaces;
* the machine-tasks TSV: `input .<TAB>output<TAB>alignment`, where the alignment gives, for each
  output token, the input position it comes from, plus the position of `.` for the output EOS.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from genprobe.errors import DataFormatError
from genprobe.runs.atomic import write_text
from genprobe.tasks import tokens
from genprobe.tasks.lines import some_rows, text_lines
from genprobe.tasks.rewriting.grammar import Grammar
from genprobe.tasks.task import Examples

INPUT_EOS = "."


def input_lines(grammar: Grammar, src: np.ndarray) -> list[str]:
    return tokens.input_lines(grammar.symbols, src)


def output_lines(grammar: Grammar, out: np.ndarray) -> list[str]:
    return tokens.output_lines(grammar.output_tokens, out)


def write_srctgt(prefix: str | Path, grammar: Grammar, examples: Examples) -> list[Path]:
    paths = [Path(f"{prefix}.src"), Path(f"{prefix}.tgt")]
    write_text(paths[0], _joined(input_lines(grammar, examples.src)))
    write_text(paths[1], _joined(output_lines(grammar, examples.tgt)))
    return paths


def write_tsv(path: str | Path, grammar: Grammar, examples: Examples) -> Path:
    k = grammar.group_size
    rows = []
    for source, target in zip(
        input_lines(grammar, examples.src), output_lines(grammar, examples.tgt), strict=True
    ):
        n = len(source.split())
        alignment = [str(i // k) for i in range(k * n)] + [str(n)]
        rows.append(f"{source} {INPUT_EOS}\t{target}\t{' '.join(alignment)}")
    write_text(path, _joined(rows))
    return Path(path)


def read_inputs(path: str | Path, grammar: Grammar) -> np.ndarray:
    """Read a `.src` file (or the input column of a TSV) as (n, L) symbol ids."""
    path = Path(path)
    lines = text_lines(path, blank=True)
    if path.suffix == ".tsv":
        return _encode_inputs(grammar, [_tsv_fields(path, i, line)[0] for i, line in lines], path)
    return _encode_inputs(grammar, [(i, line.split()) for i, line in lines], path)


def read_pairs(
    src_path: str | Path, tgt_path: str | Path, grammar: Grammar
) -> tuple[np.ndarray, list[list[str]]]:
    """Read parallel files: inputs must be valid symbols; outputs are kept as given (any token)."""
    sources, targets = text_lines(src_path, blank=True), text_lines(tgt_path, blank=True)
    if len(sources) != len(targets):
        raise DataFormatError(
            tgt_path, None, f"has {len(targets)} lines but {src_path} has {len(sources)}"
        )
    src = _encode_inputs(grammar, [(i, line.split()) for i, line in sources], Path(src_path))
    return src, [line.split() for _, line in targets]


def read_tsv(path: str | Path, grammar: Grammar) -> tuple[np.ndarray, list[list[str]]]:
    path = Path(path)
    fields = [(i, _tsv_fields(path, i, line)) for i, line in text_lines(path, blank=True)]
    src = _encode_inputs(grammar, [(i, f[0][1]) for i, f in fields], path)
    return src, [f[1] for _, f in fields]


def _tsv_fields(path: Path, number: int, line: str) -> tuple[tuple[int, list[str]], list[str]]:
    columns = line.split("\t")
    if len(columns) not in (2, 3):
        raise DataFormatError(
            path, number, f"expected 2 or 3 tab-separated columns, got {len(columns)}"
        )
    words = columns[0].split()
    if words and words[-1] == INPUT_EOS:
        words = words[:-1]
    return (number, words), columns[1].split()


def _encode_inputs(grammar: Grammar, rows: list[tuple[int, list[str]]], path: Path) -> np.ndarray:
    return tokens.encode_inputs(grammar.symbols, some_rows(path, rows), path)


def _joined(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)
