"""Plain text out of GitHub Markdown: what summaries and quotes are cut from."""

from __future__ import annotations

import re

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DETAILS = re.compile(r"<details>.*?</details>", re.S | re.I)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)(]|\([^)]*\))*\)")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_INLINE_CODE = re.compile(r"(`[^`\n]+`)")
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
    # A tag inside a code span is text the PR quotes (`<script>`), not markup.
    text = "".join(part if part.startswith("`") else _TAG.sub("", part)
                   for part in _INLINE_CODE.split(text))
    text = _EMPHASIS.sub(r"\2", text)
    return text


def one_line(text: str) -> str:
    return _SPACE.sub(" ", " ".join(line.strip() for line in text.splitlines())).strip()


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


ELLIPSIS = "…"
_TERMINAL = re.compile(r"[.!?。！？…)\]\"'`”’]$")
# A sentence that ends on one of these words leads into something (a code block, a
# list) that was not kept: it is incomplete.
_DANGLING = re.compile(
    r"(?:\b(?:as|is|was|are|were|to|the|a|an|of|by|with|and|or|from|in|for|like|below|"
    r"following|follows|that|this|these|via)|[:：,，;；(（-])$", re.I,
)
_DANGLING_TAIL = 16
_LOWER_WORD = re.compile(r"^[a-z][a-z]*(?=[\s,.;:!?]|$)")


def clip(text: str, limit: int) -> str:
    """At most `limit` characters of whole sentences; where a sentence itself has to be
    cut, at a space (never mid-word), and the cut is marked with an ellipsis."""
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
    return cut_words(text, limit)


def cut_words(text: str, limit: int) -> str:
    """`text` cut before `limit`, at a clause boundary if one is past the middle, else
    at a space (never mid-word), with an ellipsis; unchanged when it fits."""
    if len(text) <= limit:
        return text
    window = text[: limit - 1]
    for mark in ("; ", ": ", " — ", " – ", ", "):
        at = window.rfind(mark)
        if at > limit // 2:
            return window[:at].rstrip() + ELLIPSIS
    space = window.rfind(" ")
    if space > limit // 2:
        window = window[:space]
    return window.rstrip(" ,;:-—，、；：") + ELLIPSIS


def is_complete(sentence: str) -> bool:
    """Whether a sentence can stand as written: it does not end leading into a part
    that was dropped (`... was built as`, `... as follows:`)."""
    sentence = sentence.rstrip()
    # Only the end can dangle: the tail is searched, longer than the longest word.
    return bool(sentence) and not _DANGLING.search(sentence[-_DANGLING_TAIL:])


def ends_sentence(text: str) -> bool:
    return bool(_TERMINAL.search(text.rstrip()))


def sentence_case(text: str) -> str:
    """The first letter in capitals when the text opens with a plain lowercase word;
    an identifier (`recv_buf`, `vLLM`, `gen_batch_size`) is left as written."""
    match = _LOWER_WORD.match(text)
    if not match:
        return text
    return text[0].upper() + text[1:]


def first_clause(text: str, limit: int) -> str:
    """The opening sentence of `text`, at most `limit` characters: what a one-line
    mention of the PR says, cut (and marked so) at a clause boundary when too long."""
    parts = sentences(text)
    return cut_words(parts[0] if parts else text.strip(), limit)
