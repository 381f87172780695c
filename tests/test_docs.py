"""The documentation links only inside the repository, to files and headings that exist, and its
command reference is the command line's own."""

import re
from functools import cache
from pathlib import Path

import pytest

from genprobe.cli import reference

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"\]\(([^)\s]*)\)")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def links(page):
    """(file, fragment) of each link of the page; file "" for the page itself."""
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        path, _, fragment = target.partition("#")
        yield path, fragment


def slug(heading):
    """GitHub's anchor of a heading: its text without markup, lower case, punctuation dropped
    (letters, digits, `_` and `-` kept), spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(page):
    """The anchors GitHub gives the page's headings (a repeated one gets -1, -2, …), and its
    HTML anchors."""
    found, seen, fenced = set(), {}, False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        found.update(HTML_ANCHOR.findall(line))
        if heading := HEADING.match(line):
            anchor = slug(heading.group(1))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            found.add(anchor if count == 0 else f"{anchor}-{count}")
    return frozenset(found)


def test_slugs_are_githubs():
    assert slug("Speed: one single-threaded stacked model per core") == (
        "speed-one-single-threaded-stacked-model-per-core"
    )
    assert slug("Nanda et al.'s transformer on a GPU, 40 seeds, 16,000 steps") == (
        "nanda-et-als-transformer-on-a-gpu-40-seeds-16000-steps"
    )
    assert slug("`genprobe integration sagga-report`") == "genprobe-integration-sagga-report"
    assert slug("The model: S seeds in one set of tensors") == (
        "the-model-s-seeds-in-one-set-of-tensors"
    )
    assert slug("A language model (`hf:`, `openai:`)") == "a-language-model-hf-openai"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_stay_inside_the_repository_and_exist(page):
    for target, _ in links(page):
        if not target or re.match(r"[a-z]+:", target):  # the page itself; https:, mailto:
            continue
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{target} leaves the repository"
        assert resolved.exists(), f"{target} does not exist"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_anchors_name_a_heading_of_their_page(page):
    for target, fragment in links(page):
        if not fragment or re.match(r"[a-z]+:", target):
            continue
        linked = (page.parent / target).resolve() if target else page
        if linked.suffix != ".md":
            continue
        assert fragment in anchors(linked), (
            f"{target}#{fragment}: no heading of {linked.relative_to(ROOT)} has that anchor"
        )


def test_the_command_reference_is_the_command_lines_own():
    committed = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    assert committed == reference.reference(), (
        f"docs/commands.md differs from the command line: run `{reference.REGENERATE}`"
    )


def test_the_command_reference_documents_every_command_and_option():
    page = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    for heading in ("genprobe sweep", "genprobe integration sagga-report", "genprobe task check"):
        assert f"## `{heading}`" in page
    assert "| `--seeds` | `int` | `50` |" in page
    assert "| `--backend` | `local\\|ray` | `local` |" in page
    assert "[`genprobe probe`](#genprobe-probe)" in page
