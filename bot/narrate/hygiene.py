"""PR text is attacker-controlled: it reaches the model only as cleaned, truncated data
inside delimited blocks the prompt declares to be data, never instructions. Cleaning
takes out HTML comments (where instructions hide), invisible characters, secrets
(`bot.narrate.redact`), links (the model may not write one, so it need not read one)
and anything that could close a data block."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from bot.narrate.normal import visible
from bot.narrate.redact import redact

OPEN = "<<<DATA"
CLOSE = "DATA>>>"
BODY_CHARS = 1200
TEXT_CHARS = 300

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_LINK = re.compile(r"\b(?:https?|ftp)://[^\s)\]>\"']+", re.I)
LINK = "[link]"
_DELIMITER = re.compile(r"<{3,}|>{3,}")
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def clean(text: str | None, limit: int = TEXT_CHARS) -> str:
    """`text` without HTML comments, invisible characters, control characters or
    anything that could close a data block, cut to `limit` characters."""
    if not text:
        return ""
    out = visible(_HTML_COMMENT.sub("", text))
    out = _LINK.sub(LINK, redact(out))
    out = _DELIMITER.sub(lambda m: m.group(0)[0] * 2, out)
    out = _BLANK_LINES.sub("\n\n", _SPACES.sub(" ", out)).strip()
    if len(out) > limit:
        out = out[: limit - 1].rstrip() + "…"
    return out


def data_block(label: str, data: Any) -> str:
    """`data` as JSON between the delimiters; JSON quoting keeps its text inert."""
    payload = msgspec.json.encode(data).decode()
    return f"{OPEN} {label}\n{payload}\n{CLOSE}"


def read_blocks(text: str) -> dict[str, Any]:
    """The data blocks of a prompt by label (what a model, or the test fake, reads)."""
    blocks: dict[str, Any] = {}
    for match in re.finditer(rf"{OPEN} (\w+)\n(.*?)\n{CLOSE}", text, re.S):
        blocks[match.group(1)] = msgspec.json.decode(match.group(2))
    return blocks
