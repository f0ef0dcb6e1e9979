"""Digest and Reply to Telegram messages: HTML parse mode text plus inline URL buttons.

The words come from `adapters/telegram/templates/telegram/`; this module only cuts them
into messages Telegram accepts. Telegram counts a message's length after parsing its HTML (tags
don't count, an entity counts as one character), at most 4096; we count UTF-16 code
units, which is never less than what Telegram counts. Sections are separated by a
blank line and split with the shared `split_sections`; a tag never spans a line, so a
cut at a line end never lands inside one.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from adapters.telegram import TEMPLATES
from adapters.telegram.markup import TelegramMarkup
from bot.i18n import translator
from bot.models import Digest, Lang, Reply
from bot.render import render_reply, render_template, split_sections
from bot.render.chat import chat_view
from bot.render.memo import reply_memo

MAX_MESSAGE_CHARS = 4096
BUTTONS_PER_ROW = 3
DIGEST_TEMPLATE = "telegram/digest.telegram.j2"

_TAG = re.compile(r"<[^>]*>")
_TAG_PARTS = re.compile(r"(<[^>]*>)")
_OPENING_TAG = re.compile(r"<([a-z][a-z0-9-]*)(?:\s[^>]*)?>")
_CLOSING_TAG = re.compile(r"</([a-z][a-z0-9-]*)\s*>")
# Pieces of text that are never cut: an entity, a run of spaces, a word, one character.
_TEXT_ATOM = re.compile(r"&#?[0-9A-Za-z]+;|[ \t]+|[^\s&]+|.", re.S)
_HTTP_URL = re.compile(r"https?://\S+", re.I)
# A line that is only a bold heading, as the templates write section titles.
_HEADING = re.compile(r"<b>[^<>\n]*</b>")


@dataclass(frozen=True, slots=True)
class LinkButton:
    """An inline keyboard button that opens a URL."""

    label: str
    url: str


@dataclass(frozen=True, slots=True)
class TelegramMessage:
    """One `sendMessage`: HTML text and rows of URL buttons under it."""

    text: str
    buttons: tuple[tuple[LinkButton, ...], ...] = ()


def visible_length(text: str) -> int:
    """What Telegram counts against its limit: the text without tags, entities decoded,
    in UTF-16 code units (an emoji outside the BMP counts two)."""
    plain = html.unescape(_TAG.sub("", text))
    return len(plain.encode("utf-16-le")) // 2


def split_html(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """HTML cut into messages of at most `limit` visible characters, at section
    boundaries (blank lines) first, then at line ends; never inside a tag or entity."""
    sections = [s.strip("\n") for s in re.split(r"\n\s*\n", text.strip()) if s.strip()]
    fitted = ["\n".join(_fit_line(line, limit) for line in s.split("\n")) for s in sections]
    return _headings_with_their_text(split_sections(fitted, limit, visible_length), limit)


def _headings_with_their_text(messages: list[str], limit: int) -> list[str]:
    """A message never ends on a section heading: it moves to the next message, where
    its text is, when it fits there."""
    result = list(messages)
    for index in range(len(result) - 1):
        head, _, last = result[index].rpartition("\n")
        if not head or not _HEADING.fullmatch(last.strip()):
            continue
        moved = f"{last}\n{result[index + 1]}"
        if visible_length(moved) <= limit:
            result[index] = head.rstrip("\n")
            result[index + 1] = moved
    return result


def _fit_line(line: str, limit: int) -> str:
    """A line too long for one message, as several lines; tags open at a cut are closed
    before it and opened again after it, so every line is well formed on its own."""
    if visible_length(line) <= limit:
        return line
    chunks: list[str] = []
    current = ""
    used = 0
    open_tags: list[tuple[str, str]] = []  # (name, opening tag as written)

    def cut() -> None:
        nonlocal current, used
        closing = "".join(f"</{name}>" for name, _ in reversed(open_tags))
        chunks.append(current + closing)
        current = "".join(tag for _, tag in open_tags)
        used = 0

    for part in _TAG_PARTS.split(line):
        if not part:
            continue
        if part.startswith("<"):
            if closing_match := _CLOSING_TAG.fullmatch(part):
                if open_tags and open_tags[-1][0] == closing_match[1]:
                    open_tags.pop()
            elif opening_match := _OPENING_TAG.fullmatch(part):
                open_tags.append((opening_match[1], part))
            current += part
            continue
        for atom in _TEXT_ATOM.findall(part):
            for piece in [atom] if visible_length(atom) <= limit else list(atom):
                size = visible_length(piece)
                if used + size > limit and used:
                    cut()
                current += piece
                used += size
    if current:
        chunks.append(current)
    return "\n".join(chunks)


def _button_rows(buttons: list[LinkButton]) -> tuple[tuple[LinkButton, ...], ...]:
    return tuple(
        tuple(buttons[i : i + BUTTONS_PER_ROW]) for i in range(0, len(buttons), BUTTONS_PER_ROW)
    )


def _safe_button(label: str, url: str) -> LinkButton | None:
    """Only http(s) URLs become buttons; anything else would be refused or unsafe."""
    target = url.strip()
    return LinkButton(label=label, url=target) if _HTTP_URL.fullmatch(target) else None


def _messages(
    text: str, buttons: list[LinkButton | None], limit: int
) -> list[TelegramMessage]:
    """The text's messages, the buttons under the last one (where the reader ends)."""
    parts = split_html(text, limit)
    rows = _button_rows([b for b in buttons if b is not None])
    messages = [TelegramMessage(text=part) for part in parts]
    if messages and rows:
        messages[-1] = TelegramMessage(text=messages[-1].text, buttons=rows)
    return messages


def render_digest_html(digest: Digest) -> str:
    """The whole chat digest as one HTML text, before splitting."""
    view = chat_view(digest)
    return render_template(DIGEST_TEMPLATE, digest.lang, v=view, d=digest,
                           m=TelegramMarkup(), roots=(TEMPLATES,))


def render_digest_messages(
    digest: Digest, *, limit: int = MAX_MESSAGE_CHARS
) -> list[TelegramMessage]:
    """The weekly digest as Telegram messages; the key PRs of the quick view (and the
    full report, when there is one) as buttons under the last message."""
    view = chat_view(digest)
    buttons = [_safe_button(label, url) for label, url in view.pull_buttons]
    t = translator(digest.lang, (TEMPLATES,))
    if digest.report_url and not view.parts:
        buttons.append(_safe_button(t("Full report"), digest.report_url))
    buttons += [_safe_button(t("Full report (%(repository)s)", repository=name), url)
                for name, url in view.report_links if name]
    return _messages(render_digest_html(digest), buttons, limit)


def _render_reply_messages(
    reply: Reply, *, limit: int = MAX_MESSAGE_CHARS
) -> list[TelegramMessage]:
    """A chat reply as Telegram messages; a PR answer gets a button to the PR."""
    if reply.kind == "digest":
        if reply.digest is None:
            raise ValueError("a digest reply without a digest")
        return render_digest_messages(reply.digest, limit=limit)
    buttons: list[LinkButton | None] = []
    if reply.kind == "pull" and reply.pull is not None:
        label = _open_label(reply.lang, reply.pull.number)
        buttons.append(_safe_button(label, reply.pull.url))
    text = render_reply(reply, "telegram", markup=TelegramMarkup(), roots=(TEMPLATES,))
    return _messages(text, buttons, limit)


render_reply_messages = reply_memo(_render_reply_messages)


def _open_label(lang: Lang, number: int) -> str:
    return translator(lang, (TEMPLATES,))("Open #%(number)s on GitHub", number=number)
