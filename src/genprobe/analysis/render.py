"""Reports as blocks: a study says what its report holds, this module writes it as files.

A study builds a list of blocks once; `write_report` renders it twice, as `report.md` and as a
self-contained `report.html` (figures embedded as base64 PNG, no other file needed), so the two
always say the same thing. Both are written atomically into the run directory.

    Heading(text, level=2)          a section title (level 1 is the page title's)
    Text(text)                      a paragraph; `backticks` mark code, *stars* emphasis
    Table(frame, high=(), low=())   a pandas DataFrame whose cells are already strings (`code`
                                    in a cell as in a paragraph); `high`
                                    and `low` hold (row position, column name) cells to mark
                                    as a column's highest (bold; green in HTML) and lowest
                                    (italics; red in HTML)
    Figure(path, caption)           a PNG file, `path` relative to the run directory

    write_report(run, title, blocks) -> (run / "report.md", run / "report.html")

Example:
    frame = pd.DataFrame({"seed": ["1", "2"], "long": ["15.49", "3.20"]})
    table = Table(frame, high={(0, "long")}, low={(1, "long")})
    write_report(run, "Seed sensitivity", [Heading("Accuracy"), Text("Per suite."), table])

Nothing here knows a study: the numbers, their formatting and the figures are the study's.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from genprobe.runs.atomic import write_text

_CODE = re.compile(r"`([^`]+)`")
_CODE_HTML = r"<code>\1</code>"
# *words* in a paragraph's prose (not in a table's cells, where * may be an input's token)
_EMPHASIS = re.compile(r"(?<![\w*])\*([^*\s](?:[^*]*[^*\s])?)\*(?![\w*])")
_EMPHASIS_HTML = r"<em>\1</em>"


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True, eq=False)
class Table:
    frame: pd.DataFrame  # already formatted as strings
    # (row position, column) cells that hold their column's highest and lowest value
    high: Collection[tuple[int, str]] = frozenset()
    low: Collection[tuple[int, str]] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "high", frozenset(self.high))
        object.__setattr__(self, "low", frozenset(self.low))


@dataclass(frozen=True)
class Figure:
    path: str | Path  # a PNG, relative to the run directory
    caption: str


Block = Heading | Text | Table | Figure


def write_report(run: str | Path, title: str, blocks: Sequence[Block]) -> tuple[Path, Path]:
    """Write `report.md` and `report.html` into `run`; returns their paths."""
    run = Path(run)
    md, page = run / "report.md", run / "report.html"
    write_text(md, markdown(title, blocks))
    write_text(page, html_page(title, blocks, run))
    return md, page


def markdown(title: str, blocks: Sequence[Block]) -> str:
    """The report as Markdown; figures are linked by their run-relative paths."""
    out = [f"# {title}"]
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Text):
            out.append(block.text)
        elif isinstance(block, Table):
            out.append(_markdown_table(block))
        else:
            out.append(f"![{block.caption}]({Path(block.path).as_posix()})\n\n*{block.caption}*")
    return "\n\n".join(out) + "\n"


def interval(low: float, high: float, show: Callable[[float], str]) -> str:
    """`[low, high]`, each as `show` writes it, or "–" where the interval does not exist (too
    few seeds: NaN bounds)."""
    return "–" if math.isnan(low) or math.isnan(high) else f"[{show(low)}, {show(high)}]"


def clip(text: str, width: int) -> str:
    """`text` cut to at most `width` characters, ending in "…" where it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _inline_html(text: str) -> str:
    """Escaped text with `code` spans as <code>."""
    return _CODE.sub(_CODE_HTML, html.escape(text))


def html_page(title: str, blocks: Sequence[Block], run: Path) -> str:
    """The report as one HTML page; figures are read from `run` and embedded."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{_inline_html(block.text)}</h{block.level}>")
        elif isinstance(block, Text):
            body.append(f"<p>{_EMPHASIS.sub(_EMPHASIS_HTML, _inline_html(block.text))}</p>")
        elif isinstance(block, Table):
            body.append(_html_table(block))
        else:
            data = base64.b64encode((run / block.path).read_bytes()).decode()
            caption = html.escape(block.caption)
            body.append(
                f'<figure><img alt="{caption}" src="data:image/png;base64,{data}">'
                f"<figcaption>{caption}</figcaption></figure>"
            )
    return _PAGE.format(title=html.escape(title), body="\n".join(body))


HIGH, LOW = "high", "low"
# how a marked cell's text is wrapped: Markdown, then the HTML inside its <td class="…">
_MARKS = {HIGH: ("**{}**", "<b>{}</b>"), LOW: ("*{}*", "<i>{}</i>")}


def _cells(table: Table) -> Iterator[list[tuple[str, str | None]]]:
    """Each row as (text, mark) cells; mark is HIGH, LOW or None."""
    columns = list(table.frame.columns)
    for i, row in enumerate(table.frame.itertuples(index=False)):
        yield [
            (str(v), HIGH if (i, c) in table.high else LOW if (i, c) in table.low else None)
            for c, v in zip(columns, row, strict=True)
        ]


def _markdown_table(table: Table) -> str:
    columns = [_in_cell(str(c)) for c in table.frame.columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in _cells(table):
        cells = (_MARKS[mark][0].format(_in_cell(v)) if mark else _in_cell(v) for v, mark in row)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _in_cell(text: str) -> str:
    """A pipe in a cell (`largest |int|`) escaped, so that it does not end the cell."""
    return text.replace("|", "\\|")


def _html_table(table: Table) -> str:
    # a column of numbers aligns right, any other (expressions, names) left, header included
    text = [not all(_is_number(str(v)) for v in table.frame[c]) for c in table.frame.columns]
    head = "".join(
        _tag("th", html.escape(str(c)), left)
        for c, left in zip(table.frame.columns, text, strict=True)
    )
    rows = []
    for row in _cells(table):
        cells = "".join(
            _tag("td", _inline_html(v), left, mark)
            for (v, mark), left in zip(row, text, strict=True)
        )
        rows.append(f"<tr>{cells}</tr>")
    body = f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
    # wide tables scroll inside their box instead of running off the page
    return f'<div class="table"><table>{body}</table></div>'


def _tag(name: str, content: str, left: bool, mark: str | None = None) -> str:
    """A cell; its classes: `text` (aligned left) and its mark (which also wraps `content`)."""
    classes = " ".join(c for c in ("text" if left else None, mark) if c)
    opening = f'<{name} class="{classes}">' if classes else f"<{name}>"
    return f"{opening}{_MARKS[mark][1].format(content) if mark else content}</{name}>"


def _is_number(value: str) -> bool:
    try:
        float(value.replace(",", "").rstrip("%"))
    except ValueError:
        return value in ("–", "-", "")
    return True


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 80rem; margin: 2rem auto; padding: 0 1rem; }}
table {{ border-collapse: collapse; margin: 1rem 0; font-variant-numeric: tabular-nums; }}
th, td {{ border: 1px solid #ccc; padding: .25rem .6rem; text-align: right; }}
td.text, th.text {{ text-align: left; }} div.table {{ overflow-x: auto; }}
th {{ background: #f3f3f3; }}
td.high {{ background: #d8f0d8; }} td.low {{ background: #f8dada; }}
figure {{ margin: 1.5rem 0; }} img {{ max-width: 100%; }}
</style></head><body>
{body}
</body></html>
"""
