"""Per-format markup and escaping: the one place GitHub text is made inert.

Every method takes raw text and escapes it for its format, so a template never has to
remember to: `m.bold(title)`, `m.code(path)`, `m.link(url, label)`, `m.pr(n, url)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar, Protocol

from markupsafe import Markup as SafeHtml
from markupsafe import escape as html_escape

from bot.engine.text import strip_control

_MD_SPECIAL = re.compile(r"([\\`*\[\]<]|~~)")
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_MD_LINE_START = re.compile(r"(\n\s*)([#>+\-=]|\d+\.)")
_WEB_URL = re.compile(r"https?://\S+", re.I)


def is_web_url(url: str) -> bool:
    """Whether `url` is an http(s) address: the only links chat text and buttons carry
    (`javascript:` or an app's own scheme from GitHub text must not become one)."""
    return bool(_WEB_URL.fullmatch(_clean(url).strip()))


def _clean(text: object) -> str:
    return strip_control("" if text is None else str(text))


def clean(text: object) -> str:
    """Any value as the text every format escapes: a string without control characters."""
    return _clean(text)


def _fence(text: str) -> str:
    """Enough backticks around `text` that none inside can close the span."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


class Markup(Protocol):
    name: ClassVar[str]

    def esc(self, text: object) -> str: ...
    def bold(self, text: object) -> str: ...
    def code(self, text: object) -> str: ...
    def link(self, url: str, label: object) -> str: ...
    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        """A PR reference, `#12` (`org/a#12` with `repo`), linked where the format links."""
        ...


class MarkdownMarkup:
    """GitHub-flavoured Markdown: backslash escapes; code spans hold text literally."""

    name: ClassVar[str] = "markdown"

    def esc(self, text: object) -> str:
        escaped = _MD_SPECIAL.sub(r"\\\1", _clean(text))
        # Each pattern only where its character occurs: most titles need neither.
        if "_" in escaped:
            escaped = _MD_UNDERSCORE.sub(r"\\_", escaped)
        return _MD_LINE_START.sub(r"\1\\\2", escaped) if "\n" in escaped else escaped

    def bold(self, text: object) -> str:
        return f"**{self.esc(text)}**"

    def code(self, text: object) -> str:
        return _fence(_clean(text).replace("\n", " "))

    def link(self, url: str, label: object) -> str:
        safe_url = _clean(url).replace(" ", "%20").replace(")", "%29").replace("(", "%28")
        return f"[{self.esc(label)}]({safe_url})"

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        return self.esc(f"{repo}#{int(number)}")


class TextMarkup:
    """Plain text for chat cards and terminals: no markup at all."""

    name: ClassVar[str] = "text"

    def esc(self, text: object) -> str:
        return _clean(text)

    def bold(self, text: object) -> str:
        return _clean(text)

    def code(self, text: object) -> str:
        return _clean(text)

    def link(self, url: str, label: object) -> str:
        return f"{_clean(label)} ({_clean(url)})"

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        return self.esc(f"{repo}#{int(number)}")


class HtmlMarkup:
    """HTML pages: markupsafe escaping; results are `Markup`, so autoescape keeps them."""

    name: ClassVar[str] = "html"

    def esc(self, text: object) -> str:
        return html_escape(_clean(text))

    def bold(self, text: object) -> str:
        return SafeHtml("<strong>%s</strong>") % _clean(text)

    def code(self, text: object) -> str:
        return SafeHtml("<code>%s</code>") % _clean(text)

    def link(self, url: str, label: object) -> str:
        target = _clean(url)
        if not re.match(r"^(https?://|/)", target):
            target = "#"
        return SafeHtml('<a href="%s">%s</a>') % (target, _clean(label))

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        label = f"{repo}#{int(number)}"
        return self.link(url, label) if url else SafeHtml(html_escape(label))


_MARKUPS: dict[str, Markup] = {
    m.name: m
    for m in (MarkdownMarkup(), TextMarkup(), HtmlMarkup())
}


# A code span as GitHub comments write one: `name`, or ``a ` b`` with more backticks.
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def _esc_keeping_spaces(markup: Markup, text: str) -> str:
    """`esc`, with the spaces around the text kept (some formats trim them)."""
    core = text.strip()
    start = text.index(core) if core else len(text)
    # Spaces need no escaping in any format; `esc("")` keeps HTML's result markupsafe.
    return markup.esc("") + text[:start] + markup.esc(core) + text[start + len(core):]


def code_spans(markup: Markup, text: object) -> str:
    """Quoted review text in the format's markup: its `code` spans as the format's code,
    the rest escaped; an unpaired backtick stays as it is."""
    source = _clean(text)
    parts: list[str] = []
    last = 0
    for match in _CODE_SPAN.finditer(source):
        parts += [_esc_keeping_spaces(markup, source[last:match.start()]),
                  markup.code(match[2].strip())]
        last = match.end()
    parts.append(_esc_keeping_spaces(markup, source[last:]))
    # `esc("")` is the format's empty text (markupsafe's for HTML, which then stays safe).
    return markup.esc("").join(parts)


# In narrated prose: a code span, or a PR reference (`#12`, `PR #12`, `org/a#12`).
_NARRATED_PART = re.compile(
    r"(`+)(.+?)\1|(?<![A-Za-z0-9_/.-])(?:([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(\d+)|"
    r"(?:PR\s?)?#(\d+))")
PullRef = Callable[[int, str], str]
"""(number, repository or "") -> the PR reference in a format's markup."""


def narrated_text(markup: Markup, text: object, pr: PullRef) -> str:
    """A narrated sentence in the format's markup: its code spans as the format's code,
    its PR references as the engine writes them (`pr`), the rest escaped."""
    source = _clean(text)
    parts: list[str] = []
    last = 0
    for match in _NARRATED_PART.finditer(source):
        parts.append(_esc_keeping_spaces(markup, source[last:match.start()]))
        if match[2] is not None:
            parts.append(markup.code(match[2].strip()))
        elif match[4] is not None:
            parts.append(pr(int(match[4]), match[3]))
        else:
            parts.append(pr(int(match[5]), ""))
        last = match.end()
    parts.append(_esc_keeping_spaces(markup, source[last:]))
    return markup.esc("").join(parts)


def markup_for(fmt: str) -> Markup:
    """The markup of a core format: markdown, text or html (a chat platform's markup lives
    with its adapter, `adapters/<platform>/markup.py`)."""
    try:
        return _MARKUPS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}") from None
