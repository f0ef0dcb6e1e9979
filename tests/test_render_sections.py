"""Every digest format follows the one section registry (`bot.render.sections`).

The registry is reordered and cut here, and each format must follow: Markdown, plain
text, Telegram, Slack, Feishu and the HTML report page. A format that listed its
sections itself would keep its own order and fail.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest

from adapters.feishu.render import digest_cards
from adapters.slack.render import render_digest_messages as slack_messages
from adapters.telegram.render import render_digest_messages as telegram_messages
from bot.i18n import translations
from bot.models import Digest, LoginCount, People
from bot.render import render_digest, sections, templating
from bot.render.html import PageLinks, render_report_page
from bot.render.sections import DIGEST_SECTIONS, Section
from bot.resources import template_dir

GOLDEN_INPUT = (Path(__file__).resolve().parent / "golden" / "telegram" / "example-digest-en"
                / "input.json")
# Shown in the header, and only there, by each format: the digest's title as the format
# heads it (not the page's <title>), or on a Feishu card (whose own header holds the
# title) the header's first fact.
TITLE = "acme/lumen weekly report, 2026 week 29"
# A chat message opens with its title wherever its header is: the header is its facts.
HEADER_MARKS = {"markdown": f"# {TITLE}", "text": TITLE, "telegram": "Repository: ",
                "slack": "*Repository*", "feishu": "**Repository**",
                "html": f"<h1>{TITLE}"}


def _digest() -> Digest:
    case = json.loads(GOLDEN_INPUT.read_text(encoding="utf-8"))
    digest = msgspec.convert(case["digest"], Digest)
    return msgspec.structs.replace(digest, lang="en", notes=("A note about the data.",),
                                   report_url="https://reports.example/verl/2026-W29",
                                   people=People(authors=2, top_authors=(
                                       LoginCount(login="alice", count=2),)))


# Each format's whole output as one string, and how a section heading opens (a chat
# form's may go on: "Risk observations (1 of 3)").
FORMATS: dict[str, tuple[Callable[[Digest], str], Callable[[str], str]]] = {
    "markdown": (lambda d: render_digest(d, "markdown"), lambda h: f"## {h}\n"),
    # (a line break first: a heading opens a line, the first one too)
    "text": (lambda d: "\n" + render_digest(d, "text"), lambda h: f"\n{h}"),
    "telegram": (lambda d: "\n".join(m.text for m in telegram_messages(d)),
                 lambda h: f"<b>{h}"),
    "slack": (lambda d: json.dumps([m.blocks for m in slack_messages(d)], ensure_ascii=False),
              lambda h: json.dumps(f"*{h}", ensure_ascii=False)[:-1]),
    "feishu": (lambda d: json.dumps(digest_cards(d), ensure_ascii=False),
               lambda h: json.dumps(f"**{h}", ensure_ascii=False)[:-1]),
    "html": (lambda d: render_report_page(d, PageLinks()), lambda h: f"<h2>{h}</h2>"),
}


# Formats posted to a chat leave out the sections only the full report has.
CHAT = {"text", "telegram", "slack", "feishu"}


def _positions(fmt: str, order: tuple[Section, ...]) -> list[int]:
    """Where each section of `order` starts in the format's output (-1: missing)."""
    render, heading = FORMATS[fmt]
    order = tuple(s for s in order if s.in_chat or fmt not in CHAT)
    output = render(_digest())
    header = output.find(HEADER_MARKS[fmt])
    return [header if s.heading is None else output.find(heading(s.heading)) for s in order]


def test_the_registry_names_each_section_once_with_a_translated_heading() -> None:
    ids = [s.id for s in DIGEST_SECTIONS]
    assert len(ids) == len(set(ids))
    assert [s for s in DIGEST_SECTIONS if s.heading is None] == [sections.HEADER]
    zh = translations("zh")
    for section in DIGEST_SECTIONS:
        if section.heading is not None:
            assert zh.gettext(section.heading) != section.heading


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_shows_the_registry_in_order(fmt: str) -> None:
    positions = _positions(fmt, DIGEST_SECTIONS)
    assert -1 not in positions
    assert positions == sorted(positions)


REORDERED = {
    "reversed": tuple(reversed(DIGEST_SECTIONS)),
    "rotated": DIGEST_SECTIONS[3:] + DIGEST_SECTIONS[:3],
}


@pytest.mark.parametrize("order", sorted(REORDERED))
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_follows_a_reordered_registry(
        fmt: str, order: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reordered = REORDERED[order]
    monkeypatch.setattr(sections, "DIGEST_SECTIONS", reordered)
    positions = _positions(fmt, reordered)
    assert -1 not in positions
    assert positions == sorted(positions), f"{fmt} keeps its own order"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_section_left_out_of_the_registry_leaves_every_format(
        fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    risks = next(s for s in DIGEST_SECTIONS if s.id == "risks")
    monkeypatch.setattr(sections, "DIGEST_SECTIONS",
                        tuple(s for s in DIGEST_SECTIONS if s != risks))
    assert _positions(fmt, (risks,)) == [-1]
    assert -1 not in _positions(fmt, tuple(s for s in DIGEST_SECTIONS if s != risks))


# A contributor's new section: its registry entry, and its body in common/sections.j2.
NEW_SECTION = Section("release_watch", "Release watch")
NEW_MARK = "RELEASE-WATCH-MARK"
NEW_BODY = f"""
{{% macro release_watch(v, m, bullet) %}}
{{{{ bullet }}}}{{{{ m.bold("{NEW_MARK}") }}}} {{{{ v.d.counts.merged }}}}
{{% endmacro %}}
"""


@pytest.fixture
def with_a_new_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry with `NEW_SECTION` after the summary and its macro added to a copy
    of the templates: the two edits adding a section takes."""
    copied = tmp_path / "templates"
    shutil.copytree(template_dir(), copied)
    shared = copied / "common" / "sections.j2"
    shared.write_text(shared.read_text(encoding="utf-8") + NEW_BODY, encoding="utf-8")
    at = [s.id for s in DIGEST_SECTIONS].index("summary") + 1
    monkeypatch.setattr(sections, "DIGEST_SECTIONS",
                        (*DIGEST_SECTIONS[:at], NEW_SECTION, *DIGEST_SECTIONS[at:]))
    monkeypatch.setattr(templating, "template_dir", lambda: copied)
    templating.environment.cache_clear()
    yield
    templating.environment.cache_clear()


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_section_added_to_the_registry_is_rendered_by_every_format(
        fmt: str, with_a_new_section: None) -> None:
    render, _ = FORMATS[fmt]
    output = render(_digest())
    assert NEW_MARK in output
    positions = _positions(fmt, sections.DIGEST_SECTIONS)
    assert -1 not in positions and positions == sorted(positions)
    # Its body follows its own heading, before the next section's.
    new = [s.id for s in sections.DIGEST_SECTIONS].index(NEW_SECTION.id)
    assert positions[new] < output.find(NEW_MARK) < positions[new + 1]


def test_every_section_has_a_body_macro_named_by_its_id() -> None:
    shared = templating.environment("en").get_template("common/sections.j2").module
    for section in DIGEST_SECTIONS:
        if section.heading is not None:
            body = getattr(shared, section.id)
            assert body.arguments == ("v", "m", "bullet"), section.id
