"""The generic report renderer: blocks in, report.md and a self-contained report.html out."""

import base64

import matplotlib.pyplot as plt
import pandas as pd

from genprobe.analysis.render import Figure, Heading, Table, Text, clip, write_report


def test_blocks_render_as_markdown_and_self_contained_html(tmp_path):
    (tmp_path / "figures").mkdir()
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    fig.savefig(tmp_path / "figures" / "line.png", format="png")
    plt.close(fig)
    frame = pd.DataFrame({"suite": ["long", "a<b", "c"], "accuracy": ["15.49", "99.00", "1.00"]})
    blocks = [
        Heading("Results"),
        Heading("Beside `ref`", level=3),
        Text("Config hash `abc`; x < y."),
        Table(frame, high={(1, "accuracy")}, low={(2, "accuracy")}),
        Figure("figures/line.png", "A line."),
    ]
    md, page = write_report(tmp_path, "A study & its title", blocks)
    assert (md, page) == (tmp_path / "report.md", tmp_path / "report.html")

    text = md.read_text()
    assert text.startswith(
        "# A study & its title\n\n## Results\n\n### Beside `ref`\n\nConfig hash `abc`; x < y."
    )
    # the highest and the lowest value marked apart: bold and italics
    assert "|---|---|\n| long | 15.49 |\n| a<b | **99.00** |\n| c | *1.00* |" in text
    assert "![A line.](figures/line.png)" in text

    html = page.read_text()
    assert "<title>A study &amp; its title</title>" in html and "<h2>Results</h2>" in html
    assert "<p>Config hash <code>abc</code>; x &lt; y.</p>" in html
    assert "<h3>Beside <code>ref</code></h3>" in html
    # numbers right-aligned (the default), text cells marked to align left; tables scroll
    assert '<td class="high"><b>99.00</b></td>' in html
    assert '<td class="low"><i>1.00</i></td>' in html
    assert "td.high {" in html and "td.low {" in html  # each with its own colour
    assert "<td>15.49</td>" in html and '<td class="text">a&lt;b</td>' in html
    assert '<div class="table"><table>' in html
    png = base64.b64encode((tmp_path / "figures" / "line.png").read_bytes()).decode()
    assert f"data:image/png;base64,{png}" in html and "figures/line.png" not in html
    assert not list(tmp_path.glob("*.tmp"))


def test_a_column_aligns_as_a_whole_text_left_numbers_right(tmp_path):
    frame = pd.DataFrame({"problem": ["2*x", "sin(x)", "1"], "n": ["3", "1,024", "–"]})
    _, page = write_report(tmp_path, "t", [Table(frame)])
    html = page.read_text()
    # "2*x" and "1" are in a column of expressions: all its cells, and its header, align left
    assert '<th class="text">problem</th><th>n</th>' in html
    assert '<td class="text">1</td><td>–</td>' in html


def test_a_pipe_in_a_cell_does_not_end_it_in_markdown(tmp_path):
    frame = pd.DataFrame({"slice": ["100 ≤ largest |int| ≤ 999"], "|x|": ["88%"]})
    md, page = write_report(tmp_path, "t", [Table(frame, high={(0, "|x|")})])
    rows = md.read_text().splitlines()[-3:]
    assert rows == [
        "| slice | \\|x\\| |",
        "|---|---|",
        "| 100 ≤ largest \\|int\\| ≤ 999 | **88%** |",
    ]
    assert '<td class="text">100 ≤ largest |int| ≤ 999</td>' in page.read_text()


def test_clip_marks_where_it_cut():
    assert clip("x**2", 4) == "x**2"
    assert clip("x**2 + 1", 4) == "x**…" and len(clip("x" * 500, 120)) == 120


def test_stars_in_prose_are_emphasis_in_html_and_stay_as_they_are_in_a_table(tmp_path):
    frame = pd.DataFrame({"input": ["3 * 4 *", "x*y + x*z"]})
    blocks = [Text("A *memorized* example; x*y and 2 * 3 are not emphasis."), Table(frame)]
    md, page = write_report(tmp_path, "Stars", blocks)
    html = page.read_text()
    assert "A <em>memorized</em> example; x*y and 2 * 3 are not emphasis." in html
    assert "<em>" not in html[html.index("<table") :]
    assert "A *memorized* example" in md.read_text()  # markdown keeps its own stars
