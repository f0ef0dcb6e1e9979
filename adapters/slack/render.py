"""Digest and Reply -> Slack Block Kit messages.

Layout lives here, wording in `adapters/slack/templates/slack/*.j2`, escaping in
`SlackMarkup` (`adapters.slack.markup`). Blocks
are built with `slack_sdk.models.blocks`, whose `to_dict()` enforces the per-field
limits (section text 3000, header 150, button text 75, ...), so an oversized block
fails here rather than at Slack. What the models do not check - 50 blocks per message
and the undocumented cumulative size behind `msg_blocks_too_long` - is kept by the
packing below. Long text is cut with the shared `split_sections`, at line ends first,
and never inside a `<url|label>` link or an `&amp;` entity.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from adapters.slack import TEMPLATES
from adapters.slack.markup import SlackMarkup
from bot.models import Digest, Lang, Reply
from bot.render import environment, split_sections
from bot.render.chat import chat_view
from bot.render.markup import is_web_url, markup_for
from bot.render.memo import reply_memo
from bot.render.sections import Section
from bot.render.typeset import typeset
from bot.render.view import DigestView

MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_FIELD_CHARS = 2000
MAX_HEADER_CHARS = 150
MAX_BUTTON_CHARS = 75
MAX_ACTIONS = 25
# Slack rejects messages whose block text adds up to roughly 12,000 characters with
# `msg_blocks_too_long`, below every documented limit (bolt-js issues #2509, #2867);
# keep well clear of it.
MAX_MESSAGE_CHARS = 8000
# The notification text that accompanies blocks; Slack advises at most 4,000.
MAX_FALLBACK_CHARS = 3000

ACTION_PREFIX = "prdigest."

_MRKDWN = SlackMarkup()
_PLAIN = markup_for("text")
# An opening `<` or `&` without its closing `>` or `;` at the end of a piece of text.
_OPEN_ENTITY = re.compile(r"<[^>]*$|&[#a-zA-Z0-9]*$")

ResponseType = Literal["in_channel", "ephemeral"]


@dataclass(frozen=True)
class SlackMessage:
    """One Slack message: the notification text and its blocks (as sent, dicts)."""

    text: str
    blocks: tuple[dict[str, Any], ...]
    response_type: ResponseType = "in_channel"

    def as_post(self) -> dict[str, Any]:
        """The `chat.postMessage` / `response_url` fields of this message."""
        return {"text": self.text, "blocks": list(self.blocks)}


def slack_length(text: str) -> int:
    """Characters as Slack counts them (UTF-16 code units, so an emoji counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def slack_measure(text: str) -> int:
    """`slack_length`, or more than any limit for text ending inside a link or an
    entity: the shared splitter then never cuts there."""
    if _OPEN_ENTITY.search(text):
        return 10**9
    return slack_length(text)


def split_text(pieces: Iterable[str], limit: int = MAX_SECTION_CHARS, *,
               joiner: str = "\n") -> list[str]:
    """Whole pieces packed into texts of at most `limit`; a piece too long on its own is
    cut at line ends, then spaces, never inside markup."""
    return split_sections([p for p in pieces if p.strip()], limit, slack_measure,
                          joiner=joiner)


def _section(text: str, accessory: ButtonElement | None = None) -> SectionBlock:
    # verbatim: Slack must not turn `@channel`, `#name` or bare URLs from GitHub text
    # into mentions or links; the links the templates write are explicit `<url|label>`.
    return SectionBlock(text=MarkdownTextObject(text=text, verbatim=True), accessory=accessory)


def _context(texts: Sequence[str]) -> list[ContextBlock]:
    """Small print, packed like sections: one element of at most 3000 per block, so a
    block never carries more than a section does."""
    return [ContextBlock(elements=[MarkdownTextObject(text=t, verbatim=True)])
            for t in split_text(texts, MAX_SECTION_CHARS)]


def _button(label: str, url: str, action: str) -> ButtonElement | None:
    """A link button, or None for an address that is not http(s)."""
    if not is_web_url(url):
        return None
    return ButtonElement(text=PlainTextObject(text=_fit_plain(label, MAX_BUTTON_CHARS)),
                         url=url, action_id=f"{ACTION_PREFIX}{action}")


def _fit_plain(text: str, limit: int) -> str:
    """Plain text (header, button label) shortened at a word with an ellipsis; plain
    text holds no markup, so shortening cannot break any."""
    text = text.strip()
    if slack_length(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "…"


def _block_chars(block: dict[str, Any]) -> int:
    """The text a block carries, the measure behind `msg_blocks_too_long`."""
    total = 0
    for key, value in block.items():
        if key in ("text", "url") and isinstance(value, str):
            total += slack_length(value)
        elif isinstance(value, dict):
            total += _block_chars(value)
        elif isinstance(value, list):
            total += sum(_block_chars(v) for v in value if isinstance(v, dict))
    return total


@dataclass
class _Layout:
    """Blocks grouped into units that stay together in one message (a heading and its
    first item, say), then packed into messages under Slack's limits."""

    units: list[list[dict[str, Any]]] = field(default_factory=list)

    def add(self, *blocks: Block) -> None:
        self.units.append([b.to_dict() for b in blocks])

    def pack(self, *, max_blocks: int, max_chars: int) -> list[list[dict[str, Any]]]:
        messages: list[list[dict[str, Any]]] = []
        current: list[dict[str, Any]] = []
        chars = 0
        for unit in self.units:
            size = sum(_block_chars(b) for b in unit)
            if current and (len(current) + len(unit) > max_blocks or chars + size > max_chars):
                messages.append(current)
                current, chars = [], 0
            if len(unit) > max_blocks or size > max_chars:
                # A unit bigger than a message on its own goes block by block.
                for block in unit:
                    block_size = _block_chars(block)
                    if current and (len(current) + 1 > max_blocks
                                    or chars + block_size > max_chars):
                        messages.append(current)
                        current, chars = [], 0
                    current.append(block)
                    chars += block_size
                continue
            current.extend(unit)
            chars += size
        if current:
            messages.append(current)
        while messages and messages[-1] and messages[-1][-1].get("type") == "divider":
            messages[-1].pop()
        return [m for m in messages if m]


class _Words:
    """The macros of one Slack template, bound to its context, called by name:
    `w("risk", r)` is the text of macro `risk(r)`, stripped."""

    def __init__(self, name: str, lang: Lang, **context: Any) -> None:
        template = environment(lang, (TEMPLATES,)).get_template(name)
        self._lang = lang
        self._module = template.make_module({"m": _MRKDWN, "plain": _PLAIN, **context})

    def __call__(self, macro: str, *args: Any) -> str:
        return typeset(str(getattr(self._module, macro)(*args)).strip(), self._lang)


# --- digest -------------------------------------------------------------------------


def render_digest_messages(digest: Digest, *, max_blocks: int = MAX_BLOCKS,
                           max_chars: int = MAX_MESSAGE_CHARS) -> list[SlackMessage]:
    """The weekly digest as one or more Block Kit messages, in reading order.

    Every part of the digest is present: what does not fit one message continues in
    the next, which starts with a "part n of m" line.
    """
    view = chat_view(digest)
    w = _Words("slack/digest.j2", digest.lang, v=view, d=digest)
    layout = _Layout()
    if view.compact:
        _compact_parts(layout, w, view)
    else:
        _full_parts(layout, w, view)

    # Room for the "part n of m" line that opens each continuation.
    packed = layout.pack(max_blocks=max_blocks - 1, max_chars=max_chars - MAX_HEADER_CHARS * 2)
    notification = _fit_mrkdwn(w("notification"))
    messages: list[SlackMessage] = []
    for index, blocks in enumerate(packed, 1):
        text = notification
        if len(packed) > 1 and index > 1:
            text = _fit_mrkdwn(w("continued", index, len(packed)))
            blocks = [b.to_dict() for b in _context([text])] + blocks
        messages.append(SlackMessage(text=text, blocks=tuple(blocks)))
    return messages


def _full_parts(layout: _Layout, w: _Words, view: DigestView) -> None:
    """The full chat form: the header's facts, each section under a divider, key PRs
    with a button each, the report button last."""
    for section in view.sections:
        if section.heading is None:
            layout.add(*_head(w, view.d))
        elif section.id == "key_prs":
            _key_prs_part(layout, w, section, view)
        else:
            _text_part(layout, w("heading", section), _section_texts(section, w, view))
        if section.id == "summary":
            layout.add(*_caveats(w, view.d))
    layout.add(*_report_buttons(w, view))


def _compact_parts(layout: _Layout, w: _Words, view: DigestView) -> None:
    """The compact form: the title, the report button first, then each section as one
    text, its heading first (the note line after the summary); no dividers, no buttons
    beside PRs."""
    digest = view.d
    head = [_title(w)]
    head.extend(_report_buttons(w, view))
    layout.add(*head)
    for section in view.sections:
        if section.heading is not None:
            for text in split_text([w("compact_section", section)]):
                layout.add(_section(text))
        if section.id == "summary":
            layout.add(*_caveats(w, digest))


def _report_buttons(w: _Words, view: DigestView) -> list[ActionsBlock]:
    """The report's button (a digest of several repositories: one per repository), or
    nothing where no address is http(s)."""
    reports = ([("", view.d.report_url)] if view.d.report_url and not view.parts
               else view.report_links)
    buttons = [_button(w("report_button", name), url,
                       "open-report" if not name else f"open-report-{index}")
               for index, (name, url) in enumerate(reports)]
    shown = [b for b in buttons if b is not None][:MAX_ACTIONS]
    return [ActionsBlock(elements=shown)] if shown else []


def _title(w: _Words) -> Block:
    """The digest's title as a header block, or as bold text when too long for one."""
    title = w("title")
    if slack_length(title) <= MAX_HEADER_CHARS:
        return HeaderBlock(text=PlainTextObject(text=title))
    return _section("*" + w("notification") + "*")


def _head(w: _Words, digest: Digest) -> list[Block]:
    """The header: the title, the facts side by side, then how it was made in small
    print; one unit, so they open the same message."""
    head: list[Block] = [_title(w)]
    head.append(SectionBlock(fields=[
        MarkdownTextObject(text=w(fact), verbatim=True)
        for fact in ("fact_repository", "fact_period", "fact_source", "fact_key")
    ]))
    head.extend(_context([w("generated")]))
    return head


def _caveats(w: _Words, digest: Digest) -> list[ContextBlock]:
    """What the data leaves unknown, in small print after the summary: before it, a
    phone shows the caveats instead of the week."""
    return _context([w("caveats")]) if digest.notes else []


def _section_texts(section: Section, w: _Words, view: DigestView) -> list[str]:
    """A section's texts: the sections that list items, one text per item (Slack then
    packs and splits them between items), or what they say when they have none; any
    other section one text, its shared body (`common/sections.j2`, the macro named by
    its id). A digest of several repositories lists a per-repository section's items
    under each one's name."""
    if view.per_repository(section):
        return [text for part in view.parts
                for text in (w("repository_heading", part), *_section_texts(section, w, part))]
    if view.in_compact_lines(section):
        return [w("compact_lines", section, view)]
    told = view.narrated(section.id)
    if told is not None:  # the narrator's sentences (bot.narrate) replace the section's
        return ([w("narrated", " ".join(told) if view.d.lang == "en" else "".join(told), view)]
                if view.narrated_as_paragraph(section.id)
                else [w("narrated", f"• {t}", view) for t in told])
    if section.id == "changes":
        more = [w("more_themes", view)] if view.more_themes else []
        return [w("theme", tv, view) for tv in view.themes] + more or [w("no_changes")]
    if section.id == "risks":
        return [w("risk", r, view) for r in view.risks] or [w("no_risks")]
    if section.id == "suggestions":
        return ([w("suggestion", i, s, view) for i, s in enumerate(view.suggestions, 1)]
                or [w("no_suggestions")])
    return [w("section_body", section, view)]


def _text_part(layout: _Layout, heading: str, items: list[str]) -> None:
    """A divider, then the heading (where there is one) and items packed into as few
    sections as fit."""
    texts = split_text([text for text in (heading, *items) if text])
    layout.add(DividerBlock(), _section(texts[0]))
    for text in texts[1:]:
        layout.add(_section(text))


def _key_prs_part(layout: _Layout, w: _Words, section: Section, view: DigestView) -> None:
    """Key PRs one section each, with a button to the PR beside it; the heading stays
    with the first of them (a digest of several repositories: each repository's name
    with its first)."""
    heading = w("heading", section)
    groups = ([(w("repository_heading", part), part) for part in view.parts]
              if view.per_repository(section) else [("", view)])
    if not any(part.quick for _, part in groups):
        _text_part(layout, heading, [w("no_key_prs")])
        return
    opened = False
    for name, part in groups:
        for index, k in enumerate(part.quick):
            texts = split_text([w("key_pr", k, part)])
            button = _button(w("pull_button", k.number), k.url or "",
                             f"open-pull-{part.scope}#{k.number}" if part.scope
                             else f"open-pull-{k.number}")
            blocks: list[Block] = [_section(texts[0], accessory=button),
                                   *(_section(t) for t in texts[1:])]
            if index == 0 and name:
                blocks = [_section(name), *blocks]
            if not opened:
                blocks = [DividerBlock(), _section(heading), *blocks]
                opened = True
            layout.add(*blocks)


def _fit_mrkdwn(text: str) -> str:
    """Notification text under its limit, cut only between whole pieces of markup."""
    return split_text([text], MAX_FALLBACK_CHARS)[0] if text else text


# --- replies ------------------------------------------------------------------------


def _render_reply_messages(reply: Reply) -> list[SlackMessage]:
    """A chat reply as Block Kit messages. Help and errors are for the asker only
    (`ephemeral` where Slack allows it); answers are for the whole channel."""
    if reply.kind == "digest":
        if reply.digest is None:
            raise ValueError("a digest reply without a digest")
        return render_digest_messages(reply.digest)
    w = _Words("slack/reply.j2", reply.lang, reply=reply, params=dict(reply.params))
    button: ButtonElement | None = None
    if reply.kind == "pull":
        if reply.pull is None:
            raise ValueError("a pull reply without a pull answer")
        text = w("pull")
        notification = w("pull_notification")
        button = _button(w("pull_button", reply.pull.number), reply.pull.url or "",
                         f"open-pull-{reply.pull.number}")
    elif reply.kind == "notices":
        text = w("notices")
        notification = w("notices_notification")
    elif reply.kind in ("topics", "subscribed", "unsubscribed", "error", "settings"):
        text = w(reply.kind)
        notification = w("error_notification") if reply.kind == "error" else text
    elif reply.kind == "answer":
        if reply.answer is None:
            raise ValueError("an answer reply without an answer")
        text = w("answer")
        if reply.answer.question == "hello":
            text += "\n\n" + w("answer_help") + "\n\n" + w("help_slack")
        notification = text
    elif reply.kind == "help":
        text = w("help") + "\n\n" + w("help_slack")
        notification = text
    else:
        raise ValueError(f"Slack cannot send a {reply.kind!r} reply")
    layout = _Layout()
    paragraphs = [p.strip() for p in text.split("\n\n")]
    for index, section in enumerate(split_text(paragraphs, joiner="\n\n")):
        layout.add(_section(section, accessory=button if index == 0 else None))
    response_type: ResponseType = "ephemeral" if reply.kind in ("help", "error") else "in_channel"
    fallback = _fit_mrkdwn(notification.split("\n", 1)[0])
    return [SlackMessage(text=fallback, blocks=tuple(blocks), response_type=response_type)
            for blocks in layout.pack(max_blocks=MAX_BLOCKS, max_chars=MAX_MESSAGE_CHARS)]


render_reply_messages = reply_memo(_render_reply_messages)
