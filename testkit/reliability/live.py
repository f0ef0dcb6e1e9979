"""What "a live mention" means on each platform - a ping, a tag or a trick link in a
payload a fake accepted - and the same for the HTML report pages."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from html.parser import HTMLParser
from typing import Any

from testkit.fakes.telegram import parse_html

# Slack mrkdwn: a special mention (<!channel>, <!here>, <!everyone>, <!subteam^..>), a user
# or channel mention (<@U..>, <#C..>) - anything `<!`, `<@`, `<#` - pings; so does any link
# whose target is not http(s) (a `javascript:` or `tg:` target, or one we did not make).
_SLACK_LIVE = re.compile(r"<[!@#]")
_SLACK_LINK = re.compile(r"<([^<>|]*)\|?[^<>]*>")
# Telegram HTML: a tg:// link mentions a user; an @name in the parsed text becomes a
# mention entity; a non-http(s) link target is a trick.
_TG_AT = re.compile(r"(?<![\w\u2060])@[A-Za-z0-9_]{3,}")
# Feishu card markdown: an <at ...> tag mentions (the cards' own <font> is not live).
_FEISHU_TAG = re.compile(r"<\s*at\b", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_MD_LINK = re.compile(r"\]\(\s*([^)\s]*)")


def _texts(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def slack_live(payload: Mapping[str, Any]) -> list[str]:
    """What in one Slack message would notify or mislead: unescaped `<!..>`, `<@..>`,
    `<#..>`, a non-http(s) link target, `link_names` (which turns @here into a ping),
    or a control character."""
    found: list[str] = []
    if str(payload.get("link_names", "")).lower() in {"1", "true"}:
        found.append("link_names is on")
    blocks = payload.get("blocks")
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    for text in [str(payload.get("text") or ""), *_texts(blocks or [])]:
        found += [f"slack mention {m.group(0)!r} in {text[:80]!r}"
                  for m in _SLACK_LIVE.finditer(text)]
        for link in _SLACK_LINK.finditer(text):
            target = link.group(1)
            if not target.startswith(("http://", "https://")):
                found.append(f"slack link to {target!r}")
        found += [f"control character {c!r}" for c in _CONTROL.findall(text)]
    return found


def telegram_live(fields: Mapping[str, str]) -> list[str]:
    """What in one Telegram message would notify or mislead: a `tg://` or other
    non-http(s) link, an `@name` Telegram would turn into a mention, a tag Telegram
    refuses, or a control character."""
    text = fields.get("text", "")
    found: list[str] = []
    if fields.get("parse_mode") == "HTML":
        try:
            plain, entities = parse_html(text)
        except ValueError as exc:
            return [f"telegram markup refused: {exc}"]
        for entity in entities:
            url = str(entity.get("url", ""))
            if entity["type"] == "text_link" and not url.startswith(("http://", "https://")):
                found.append(f"telegram link to {url!r}")
    else:
        plain = text
    found += [f"telegram mention {m.group(0)!r}" for m in _TG_AT.finditer(plain)]
    found += [f"control character {c!r}" for c in _CONTROL.findall(plain)]
    markup = fields.get("reply_markup")
    if markup:
        for url in re.findall(r'"url":\s*"([^"]*)"', markup):
            if not url.startswith(("http://", "https://")):
                found.append(f"telegram button to {url!r}")
    return found


def feishu_live(card: Mapping[str, Any]) -> list[str]:
    """What in one Feishu card would notify or mislead: an `<at>` tag in any text, a
    link whose target is not http(s), or a control character."""
    found: list[str] = []
    for text in _texts(card):
        found += [f"feishu tag {m.group(0)!r} in {text[:80]!r}"
                  for m in _FEISHU_TAG.finditer(text)]
        for target in _MD_LINK.findall(text):
            if target and not target.startswith(("http://", "https://")):
                found.append(f"feishu link to {target!r}")
        found += [f"control character {c!r}" for c in _CONTROL.findall(text)]
    return found


_LIVE_TAGS = frozenset({"script", "at", "img", "iframe", "object", "embed", "frame", "form",
                        "input", "link", "meta", "base", "video", "audio"})


class _PageTags(HTMLParser):
    """Every real tag of a page (escaped text is data, not a tag)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _LIVE_TAGS and not (tag in {"meta", "link"} and self._harmless(attrs)):
            self.found.append(f"html tag <{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"html handler {name}= on <{tag}>")
            if name in {"href", "src", "action", "xlink:href"} and value is not None and \
                    re.match(r"\s*(javascript|tg|data|vbscript):", value, re.I):
                self.found.append(f"html link {value!r} on <{tag}>")

    @staticmethod
    def _harmless(attrs: list[tuple[str, str | None]]) -> bool:
        """The page's own <meta charset> / viewport, not content from GitHub."""
        names = {name for name, _ in attrs}
        return bool(names & {"charset", "name"}) and "http-equiv" not in names

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def html_live(page: str) -> list[str]:
    """What in a report page would run, mention or mislead: a script/at/img/... tag, an
    event-handler attribute, a javascript:/tg:/data: link, a control character."""
    parser = _PageTags()
    parser.feed(page)
    parser.close()
    found = parser.found
    found += [f"control character {c!r}" for c in _CONTROL.findall("".join(parser.text))]
    return found
