"""Reports as blocks: a study says what its report holds, this module writes it as files.

A study builds a list of blocks once; `write_report` renders it twice, as `report.md` and as a
self-contained `report.html` (figures embedded as base64 PNG, no other file needed), so the two
always say the same thing. Both are written atomically into the run directory.

    Heading(text, level=2)          a section title (level 1 is the page title's)
    Text(text)                      a paragraph; `backticks` mark code
    Table(frame, bold=frozenset())  a pandas DataFrame whose cells are already strings; `bold`
                                    holds (row position, column name) cells to emphasize
    Figure(path, caption)           a PNG file, `path` relative to the run directory

    write_report(run, title, blocks) -> (run / "report.md", run / "report.html")

Example:
    table = Table(pd.DataFrame({"suite": ["long"], "accuracy": ["15.49"]}), {(0, "accuracy")})
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
    bold: Collection[tuple[int, str]] = frozenset()  # (row position, column) cells to emphasize

    def __post_init__(self) -> None:
        object.__setattr__(self, "bold", frozenset(self.bold))


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
            body.append(f"<p>{_inline_html(block.text)}</p>")
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


def _cells(table: Table) -> Iterator[list[tuple[str, bool]]]:
    """Each row as (text, bold) cells."""
    columns = list(table.frame.columns)
    for i, row in enumerate(table.frame.itertuples(index=False)):
        yield [(str(v), (i, c) in table.bold) for c, v in zip(columns, row, strict=True)]


def _markdown_table(table: Table) -> str:
    columns = [str(c) for c in table.frame.columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in _cells(table):
        lines.append("| " + " | ".join(f"**{v}**" if bold else v for v, bold in row) + " |")
    return "\n".join(lines)


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
            _tag("td", f"<b>{html.escape(v)}</b>" if bold else html.escape(v), left)
            for (v, bold), left in zip(row, text, strict=True)
        )
        rows.append(f"<tr>{cells}</tr>")
    body = f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
    # wide tables scroll inside their box instead of running off the page
    return f'<div class="table"><table>{body}</table></div>'


def _tag(name: str, content: str, left: bool) -> str:
    return f'<{name} class="text">{content}</{name}>' if left else f"<{name}>{content}</{name}>"


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
figure {{ margin: 1.5rem 0; }} img {{ max-width: 100%; }}
</style></head><body>
{body}
</body></html>
"""
