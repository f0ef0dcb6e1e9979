"""Plain text out of GitHub Markdown: what summaries and quotes are cut from."""

from __future__ import annotations

import re

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DETAILS = re.compile(r"<details>.*?</details>", re.S | re.I)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)(]|\([^)]*\))*\)")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_CODE_FENCE = re.compile(r"```.*?(```|$)", re.S)
_SPACE = re.compile(r"[ \t]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_SENTENCE_END = re.compile(
    r"(?<=[.!?。！？])(?<!\be\.g\.)(?<!\bi\.e\.)\s+(?=[A-Z0-9`\"'(\[*_]|[^\x00-\x7f])"
)


def strip_control(text: str) -> str:
    """Drop control and bidi-override characters that could disguise text in chat."""
    return _CONTROL.sub("", text)


def plain(markdown: str) -> str:
    """Readable plain text: no comments, images, HTML tags, link syntax or emphasis."""
    text = strip_control(markdown.replace("\r\n", "\n"))
    text = _COMMENT.sub("", text)
    text = _DETAILS.sub("", text)
    text = _CODE_FENCE.sub("", text)
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub("", text)
    text = _EMPHASIS.sub(r"\2", text)
    return text


def one_line(text: str) -> str:
    return _SPACE.sub(" ", " ".join(line.strip() for line in text.splitlines())).strip()


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a sentence end, else a space (never mid-word)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    taken = ""
    for sentence in sentences(text):
        candidate = f"{taken} {sentence}".strip()
        if len(candidate) > limit:
            break
        taken = candidate
    if taken:
        return taken
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-—") + "…"
