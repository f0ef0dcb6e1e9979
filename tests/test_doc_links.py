"""Every relative link in README.md and docs/*.md points to a file that exists and, with
an anchor, to a heading that file has (as GitHub names headings); every page under docs/
is reachable from the README."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it import MarkdownIt  # rich's Markdown parser, locked with the runtime
from markdown_it.token import Token

from testkit import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_PARSER = MarkdownIt("commonmark").enable("table")


def _inline(text: str) -> Iterator[Token]:
    for token in _PARSER.parse(text):
        if token.type == "inline":
            yield token


def links(text: str) -> list[str]:
    """The targets of the text's links (none from code spans or code blocks)."""
    return [str(child.attrs["href"]) for token in _inline(text)
            for child in token.children or () if child.type == "link_open"]


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the text's headings: the words lower-cased, punctuation
    left out, spaces as hyphens; a repeated heading gets -1, -2, ..."""
    tokens = _PARSER.parse(text)
    repeats: dict[str, int] = {}
    found: set[str] = set()
    for opening, inline in itertools.pairwise(tokens):
        if opening.type != "heading_open":
            continue
        words = "".join(child.content for child in inline.children or ()
                        if child.type in ("text", "code_inline"))
        slug = re.sub(r"[^\w\- ]", "", words.strip().lower()).replace(" ", "-")
        count = repeats.get(slug, 0)
        repeats[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(page: Path, text: str) -> list[str]:
    """The page's relative links whose file or heading does not exist."""
    broken = []
    for href in links(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", href):  # https:, mailto: - not ours to check
            continue
        path, _, anchor = href.partition("#")
        target = (page.parent / path).resolve() if path else page
        missing = not target.is_file() or ROOT not in target.parents
        if missing or (anchor and anchor not in anchors(target.read_text())):
            broken.append(href)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_relative_link_points_to_a_file_and_heading(page: Path) -> None:
    assert broken_links(page, page.read_text()) == []


def test_every_page_is_linked_from_the_readme() -> None:
    readme = ROOT / "README.md"
    linked = {(readme.parent / href.partition("#")[0]).resolve()
              for href in links(readme.read_text())}
    assert [p.name for p in PAGES[1:] if p not in linked] == []


def test_the_check_finds_a_missing_file_and_a_missing_heading() -> None:
    """The links are parsed, not skipped: a wrong file or anchor is reported, a link in
    code is not a link, and headings are named as GitHub names them."""
    page = ROOT / "docs" / "commands.md"
    text = ("[a](configuration.md#llm) [b](nowhere.md) [c](deployment.md#no-such-part)\n"
            "[d](#errors) `[e](nowhere-either.md)`\n\n## Errors\n")
    assert broken_links(page, text) == ["nowhere.md", "deployment.md#no-such-part"]
    assert {"running-the-service-prdigest-serve", "githubs-points-and-github-apps",
            "reposownername", "platformsslack-platformstelegram-platformsfeishu"} <= \
        anchors((ROOT / "docs" / "deployment.md").read_text()
                + (ROOT / "docs" / "configuration.md").read_text())
