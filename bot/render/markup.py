"""Per-format markup and escaping: the one place GitHub text is made inert.

Every method takes raw text and escapes it for its format, so a template never has to
remember to: `m.bold(title)`, `m.code(path)`, `m.link(url, label)`, `m.pr(n, url)`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import ClassVar, Protocol

from markupsafe import Markup as SafeHtml
from markupsafe import escape as html_escape

from bot.engine.text import strip_control

_MD_SPECIAL = re.compile(r"([\\`*\[\]<]|~~)")
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_MD_LINE_START = re.compile(r"(\n\s*)([#>+\-=]|\d+\.)")
_TG_MENTION = re.compile(r"@(?=\w)")
_TG_LINK_TARGET = re.compile(r"https?://\S+", re.I)


def is_web_url(url: str) -> bool:
    """Whether `url` is an http(s) address: the only links chat text and buttons carry
    (`javascript:`, `slack://` or `tg://` from GitHub text must not become one)."""
    return bool(_TG_LINK_TARGET.fullmatch(_clean(url).strip()))


def _clean(text: object) -> str:
    return strip_control("" if text is None else str(text))


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


class SlackMarkup:
    """Slack mrkdwn: only `& < >` are escaped, so `<!channel>` in a title pings nobody."""

    name: ClassVar[str] = "slack"

    def esc(self, text: object) -> str:
        return _clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    def bold(self, text: object) -> str:
        return f"*{self.esc(text).replace('*', '∗')}*"

    def code(self, text: object) -> str:
        return f"`{self.esc(text).replace('`', 'ˋ')}`"

    def link(self, url: str, label: object) -> str:
        if not is_web_url(url):
            return self.esc(label)
        target = self.esc(url.strip()).replace("|", "%7C")
        return f"<{target}|{self.esc(label).replace('|', '¦')}>"

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        label = f"{repo}#{int(number)}"
        return self.link(url, label) if url else self.esc(label)


class TelegramMarkup:
    """Telegram HTML parse mode: `& < >` escaped, only Telegram's tags used.

    A word joiner after `@` keeps `@all` or `@someone` in a PR title from becoming a
    mention that notifies; links go only to http(s), since `tg://user?id=` would mention
    too. Text inside a tag stays on one line, so splitting at line ends never cuts a tag.
    """

    name: ClassVar[str] = "telegram"

    def esc(self, text: object) -> str:
        return _TG_MENTION.sub("@\u2060", html.escape(_clean(text), quote=False))

    def _inline(self, text: object) -> str:
        return " ".join(self.esc(text).splitlines())

    def bold(self, text: object) -> str:
        return f"<b>{self._inline(text)}</b>"

    def code(self, text: object) -> str:
        return f"<code>{self._inline(text)}</code>"

    def link(self, url: str, label: object) -> str:
        target = _clean(url).strip()
        if not _TG_LINK_TARGET.fullmatch(target):
            return self._inline(label)
        return f'<a href="{html.escape(target, quote=True)}">{self._inline(label)}</a>'

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        label = f"{repo}#{int(number)}"
        return self.link(url, label) if url else self.esc(label)


class FeishuMarkup:
    """Feishu card markdown: every markdown marker and tag opener becomes a numeric
    character reference, the escape Feishu documents for its rich-text component
    (`<` -> `&#60;`, `*` -> `&#42;`), so `<at id=all>` or `**x**` from GitHub shows as
    typed. Backslash escapes are not part of Feishu's card markdown."""

    name: ClassVar[str] = "feishu"

    _SPECIAL: ClassVar[re.Pattern[str]] = re.compile(r"[&<>*_~`\\\[\]()#:$|!{}]")
    _LINE_START: ClassVar[re.Pattern[str]] = re.compile(r"^(?:([-+=])|(\d+)\.)")
    # Text shown in a code span as typed: no backtick and nothing a reader could mistake.
    _CODE_SAFE: ClassVar[re.Pattern[str]] = re.compile(r"[A-Za-z0-9 ./_+,=@-]+")

    def esc(self, text: object) -> str:
        # One line: a line break could start a heading, list or quote inside a sentence.
        flat = " ".join(_clean(text).split())
        escaped = self._SPECIAL.sub(lambda match: f"&#{ord(match.group(0))};", flat)

        def line_start(match: re.Match[str]) -> str:
            if match.group(1):
                return f"&#{ord(match.group(1))};"
            return f"{match.group(2)}&#46;"

        return self._LINE_START.sub(line_start, escaped, count=1)

    def bold(self, text: object) -> str:
        inner = self.esc(text).strip()
        return f"**{inner}**" if inner else ""

    def code(self, text: object) -> str:
        flat = " ".join(_clean(text).split())
        if flat and self._CODE_SAFE.fullmatch(flat):
            return f"`{flat}`"
        return self.esc(flat)

    @staticmethod
    def _target(url: str) -> str | None:
        """An http(s) address safe inside `(...)`, or None for anything else."""
        target = _clean(url).strip()
        if not re.match(r"^https?://\S+$", target):
            return None
        for raw, encoded in ((" ", "%20"), ("(", "%28"), (")", "%29"), ("<", "%3C"),
                             (">", "%3E"), ('"', "%22"), ("'", "%27")):
            target = target.replace(raw, encoded)
        return target

    def link(self, url: str, label: object) -> str:
        target = self._target(url)
        return f"[{self.esc(label)}]({target})" if target else self.esc(label)

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        # The label is ours (`#`, digits and a repository's name), so it needs no
        # escaping inside a link.
        target = self._target(url)
        label = f"{repo}#{int(number)}"
        return f"[{label}]({target})" if target else f"{repo}&#35;{int(number)}"


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
    for m in (MarkdownMarkup(), TextMarkup(), SlackMarkup(), TelegramMarkup(), FeishuMarkup(),
              HtmlMarkup())
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
    """The markup of a format: markdown, text, slack, telegram, feishu or html."""
    try:
        return _MARKUPS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}") from None
