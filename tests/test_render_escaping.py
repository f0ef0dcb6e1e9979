"""GitHub text is inert in every format: no live mention, tag or link trick."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from adapters.registry import markup_of
from bot.config import RepoConfig
from bot.engine import build_digest
from bot.models import FileChange, PullRequest, ReviewThread, Snapshot, ThreadComment
from bot.render import render_digest, split_sections
from bot.render.markup import markup_for

HOSTILE = ("<!channel> <!here> @all <at user_id=\"all\">x</at> <script>alert(1)</script> "
           "[click](javascript:alert(1)) **bold** \u202eevil\u0007")


def _snapshot() -> Snapshot:
    pull = PullRequest(
        number=5, title=f"[ui] feat: {HOSTILE}", url="https://github.com/o/r/pull/5",
        state="merged", merged_at=datetime(2026, 7, 14, tzinfo=UTC),
        body=f"### What does this PR do?\n\n{HOSTILE}", additions=500, deletions=2,
        files=(FileChange(path="src/ui.py", additions=500, deletions=2),),
        review_threads=(ReviewThread(path="src/ui.py", resolved=False, comments=(
            ThreadComment(author="<!channel>", body=HOSTILE),)),),
    )
    return Snapshot(repository="o/r", pulls=(pull,))


@pytest.fixture(scope="module")
def digest_md() -> str:
    digest = build_digest(_snapshot(), "2026-W29", repo_config=RepoConfig(), lang="en")
    return render_digest(digest, "markdown")


def _outside_code(markdown: str) -> str:
    return re.sub(r"(`+).*?\1", "", markdown)


def test_markdown_has_no_raw_tags_or_links(digest_md: str) -> None:
    prose = _outside_code(digest_md)
    assert not re.search(r"(?<!\\)<", prose), "an unescaped < starts a tag"
    assert not re.search(r"(?<!\\)\]\(javascript:", prose)
    assert "\u202e" not in digest_md and "\u0007" not in digest_md


@pytest.mark.parametrize(
    ("fmt", "forbidden"),
    [
        ("slack", ["<!channel>", "<!here>"]),
        ("telegram", ["<script>", '<at user_id="all">']),
        ("feishu", ['<at user_id="all">', "<script>"]),
        ("html", ["<script>", "<at "]),
    ],
)
def test_every_markup_neutralises_hostile_text(fmt: str, forbidden: list[str]) -> None:
    m = markup_of(fmt)
    for rendered in (m.esc(HOSTILE), m.bold(HOSTILE), m.code(HOSTILE), m.link("u", HOSTILE)):
        for token in forbidden:
            assert token not in str(rendered), (fmt, token, rendered)


def test_markdown_escapes_every_tag_opener() -> None:
    m = markup_for("markdown")
    for rendered in (m.esc(HOSTILE), m.bold(HOSTILE), m.link("u", HOSTILE)):
        assert not re.search(r"(?<!\\)<", rendered)
        assert not re.search(r"(?<!\\)\[click", rendered)


def test_html_link_refuses_javascript_urls() -> None:
    assert 'href="#"' in str(markup_for("html").link("javascript:alert(1)", "x"))


def test_markdown_code_span_cannot_be_closed_from_inside() -> None:
    assert markup_for("markdown").code("a`b") == "``a`b``"


def test_split_keeps_sections_whole_and_within_limit() -> None:
    sections = ["a" * 30, "b" * 30, "c" * 30]
    assert split_sections(sections, 70) == ["a" * 30 + "\n\n" + "b" * 30, "c" * 30]
    long_lines = "\n".join(f"<b>line {i}</b>" for i in range(50))
    parts = split_sections([long_lines], 100)
    assert all(len(p) <= 100 for p in parts)
    assert all(re.fullmatch(r"(<b>line \d+</b>\n?)+", p) for p in parts)
    assert "\n".join(parts) == long_lines
