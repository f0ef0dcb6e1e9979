"""Digest and Reply to Feishu interactive cards (card JSON 2.0).

Structure lives here, wording in `adapters/feishu/templates/feishu/*.j2`, escaping in
`FeishuMarkup` (`adapters.feishu.markup`).
Feishu refuses a card message whose request body exceeds 30 KB (error 230025), so the
size measured is the byte length of the body the SDK sends - the card serialised into
a JSON string field of a JSON object - and a long digest becomes several cards, split
at section boundaries by the shared splitter.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from adapters.feishu import TEMPLATES
from adapters.feishu.markup import FeishuMarkup
from bot.models import Digest, Lang, Reply, Risk
from bot.render import environment, split_sections
from bot.render.chat import chat_view
from bot.render.markup import markup_for
from bot.render.memo import reply_memo
from bot.render.typeset import typeset

Card = dict[str, Any]

# "Card and post messages: request body at most 30 KB" (im/v1 message error 230025).
MAX_REQUEST_BYTES = 30 * 1024
# Sections travel through the splitter joined by this; control characters never
# survive escaping, so no text can contain it.
SECTION_BREAK = "\x1e"
# Key PRs that get a button of their own under the digest.
KEY_PULL_BUTTONS = 3
# The measured body carries ids at least as long as any real one, so a card that fits
# the measure fits whatever chat or message it is sent to.
_ID_ALLOWANCE = "x" * 64
_UUID_ALLOWANCE = "x" * 50


@dataclass(frozen=True)
class Button:
    label: str
    url: str
    primary: bool = False


@dataclass(frozen=True)
class CardFrame:
    """What every card of one message shares: header, colour, summary, buttons."""

    title: str
    subtitle: str
    template: str
    buttons: tuple[Button, ...] = ()


def header_template(risks: Iterable[Risk]) -> str:
    """Header colour by the worst risk: red for high, orange for medium, blue for low,
    green when nothing was found."""
    severities = {risk.severity for risk in risks}
    if "high" in severities:
        return "red"
    if "medium" in severities:
        return "orange"
    if "low" in severities:
        return "blue"
    return "green"


def card_content(card: Card) -> str:
    """The card as the `content` string of a message request: compact, UTF-8 as is."""
    return json.dumps(card, ensure_ascii=False, separators=(",", ":"))


def request_bytes(card: Card) -> int:
    """Bytes of the create-message body carrying `card`, serialised the way lark-oapi
    does (`json.dumps(..., ensure_ascii=False)`), with worst-case ids."""
    body = {
        "receive_id": _ID_ALLOWANCE,
        "msg_type": "interactive",
        "content": card_content(card),
        "uuid": _UUID_ALLOWANCE,
    }
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8"))


def _is_web_url(url: str) -> bool:
    return url.startswith(("https://", "http://")) and not any(c.isspace() for c in url)


def _button(button: Button) -> Card:
    return {
        "tag": "button",
        "text": {"tag": "plain_text", "content": button.label},
        "type": "primary" if button.primary else "default",
        "behaviors": [{"type": "open_url", "default_url": button.url}],
    }


def _card(frame: CardFrame, title: str, sections: Sequence[str], *, buttons: bool) -> Card:
    elements: list[Card] = []
    for section in sections:
        if elements:
            elements.append({"tag": "hr"})
        elements.append({"tag": "markdown", "content": section})
    if buttons and frame.buttons:
        elements.append({
            "tag": "column_set",
            "flex_mode": "flow",
            "columns": [
                {"tag": "column", "width": "auto", "elements": [_button(b)]}
                for b in frame.buttons
            ],
        })
    header: Card = {"title": {"tag": "plain_text", "content": title}}
    if frame.subtitle:
        header["subtitle"] = {"tag": "plain_text", "content": frame.subtitle}
    header["template"] = frame.template
    return {
        "schema": "2.0",
        "config": {"update_multi": True, "summary": {"content": title}},
        "header": header,
        "body": {"elements": elements},
    }


def _macro(lang: Lang, template: str, name: str, *args: Any) -> str:
    module = environment(lang, (TEMPLATES,)).get_template(template).module
    return typeset(str(getattr(module, name)(*args)).strip(), lang)


def build_cards(frame: CardFrame, sections: Iterable[str], lang: Lang, *,
                limit: int = MAX_REQUEST_BYTES) -> list[Card]:
    """Cards holding `sections` in order, each within `limit` request bytes; when more
    than one is needed each title says which part it is, and the buttons go last."""
    parts = [s.strip() for s in sections if s.strip()]

    def titled(part: int, count: int) -> str:
        if count == 1:
            return frame.title
        return _macro(lang, "feishu/digest.j2", "part_title", frame.title, part, count)

    def measure(chunk: str) -> int:
        # Worst case for every chunk: a two-digit part number and the buttons.
        return request_bytes(_card(frame, titled(99, 99), chunk.split(SECTION_BREAK),
                                   buttons=True))

    chunks = split_sections(parts, limit, measure, joiner=SECTION_BREAK) or [""]
    return [
        _card(frame, titled(index, len(chunks)),
              [s for s in chunk.split(SECTION_BREAK) if s],
              buttons=index == len(chunks))
        for index, chunk in enumerate(chunks, start=1)
    ]


def digest_cards(digest: Digest, *, limit: int = MAX_REQUEST_BYTES) -> list[Card]:
    """The weekly digest as one or more cards: header coloured by its worst risk,
    one markdown element per section, buttons to the key PRs and the full report."""
    lang = digest.lang
    view = chat_view(digest)
    markup, plain = FeishuMarkup(), markup_for("text")
    name = "feishu/digest.j2"
    buttons = [
        Button(label=part.ref(k.number), url=k.url)
        for part in view.each for k in part.quick[:KEY_PULL_BUTTONS] if _is_web_url(k.url)
    ][:KEY_PULL_BUTTONS]
    reports = ([("", digest.report_url)] if digest.report_url and not view.parts
               else view.report_links)
    buttons += [Button(label=_macro(lang, name, "full_report", repository), url=url,
                       primary=True)
                for repository, url in reports if _is_web_url(url)]
    frame = CardFrame(
        title=_macro(lang, name, "title", view, plain),
        subtitle=_macro(lang, name, "subtitle", view),
        template=header_template(view.all_risks),
        buttons=tuple(buttons),
    )
    sections = [_macro(lang, name, "section", section, view, digest, markup)
                for section in view.sections]
    return build_cards(frame, sections, lang, limit=limit)


_REPLY_COLOURS = {"help": "blue", "topics": "blue", "subscribed": "green",
                  "unsubscribed": "green", "error": "grey", "settings": "green",
                  "answer": "blue"}


def _reply_cards(reply: Reply, *, limit: int = MAX_REQUEST_BYTES) -> list[Card]:
    """A chat reply as cards; a digest reply is the digest's cards."""
    if reply.kind == "digest":
        if reply.digest is None:
            raise ValueError("a digest reply without a digest")
        return digest_cards(reply.digest, limit=limit)
    lang = reply.lang
    name = "feishu/reply.j2"
    params = dict(reply.params)
    buttons: tuple[Button, ...] = ()
    if reply.kind == "pull":
        if reply.pull is None:
            raise ValueError("a pull reply without a pull")
        template = header_template(reply.pull.risks)
        subtitle = reply.pull.repository
        if _is_web_url(reply.pull.url):
            buttons = (Button(label=_macro(lang, name, "open_pull"), url=reply.pull.url,
                              primary=True),)
    elif reply.kind == "notices":
        template = header_template(tuple(r for n in reply.notices if n.pull is not None
                                         for r in n.pull.risks))
        subtitle = _macro(lang, name, "subtitle", list(dict.fromkeys(
            n.pull.repository for n in reply.notices if n.pull is not None)))
    else:
        template = _REPLY_COLOURS.get(reply.kind, "blue")
        # The channel's scope: its repositories joined by ", ".
        scope = params.get("repository", "")
        subtitle = _macro(lang, name, "subtitle", scope.split(", ")) if scope else ""
    frame = CardFrame(title=_macro(lang, name, "title", reply), subtitle=subtitle,
                      template=template, buttons=buttons)
    body = _macro(lang, name, "body", reply, params, FeishuMarkup())
    # One section: an answer too long for a card splits at its line ends.
    return build_cards(frame, [body], lang, limit=limit)


reply_cards = reply_memo(_reply_cards)
