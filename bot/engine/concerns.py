"""What a review comment says: a concern, an approval, praise, or that it was done.

Risks are built from concerns only. A comment that approves or thanks raises none; a
thread whose last word says the change was made is addressed; a bot's finding is as
severe as its marker, or else its wording, says. The quoted concern keeps its
consequence ("..., causing a failure.") in whole sentences.
"""

from __future__ import annotations

import re

from bot.engine.text import clip, ends_sentence, one_line, plain, sentences
from bot.models import Severity

QUOTE_LIMIT = 320

_MARKER = re.compile(r"!\[(critical|high|medium|low)\](?:\([^)]*\))?", re.I)
# An approval, even with a small remark after it ("LGTM, just one unused variable").
_APPROVAL = re.compile(
    r"^\s*(?:lgtm|looks good(?: to me)?|approved?|ship it|\+1|:\+1:|👍)(?![a-z])", re.I)
# A sentence of praise or thanks, which is no concern on its own.
_PRAISE = re.compile(
    r"^\s*(?:great|nice|cool|awesome|thanks?|thank you|good (?:idea|catch|work|job)|"
    r"overall (?:makes sense|looks good|lgtm)|makes sense|left (?:some|a few) comments)"
    r"(?:\W|$)", re.I,
)
_ASK = re.compile(r"\?|\b(but|however|should|please|nit|could|would|must|need|why|instead)\b",
                  re.I)
# The change was made: a reply "Done in 895730f", "Solved", "Fixed", "Pushed a fix ...".
_DONE = re.compile(
    r"^\s*(?:(?:nice catch|good catch|thanks?)[,!.]?\s*)?(?:done|fixed|addressed|resolved|"
    r"solved|updated|removed|changed|pushed (?:a )?fix(?:es)?)\b"
    r"|\b(?:done|fixed|addressed|resolved|changed) in [0-9a-f]{7,40}\b", re.I,
)
# What goes wrong if the concern stands: the words that make it severe.
_SEVERE = re.compile(
    r"\b(?:crash\w*|fail\w*|data loss|lose|loses|lost|corrupt\w*|overwrit\w*|clear\w*|"
    r"empty|deadlock\w*|hang\w*|leak\w*|race|oom|out of memory|security|vulnerab\w*|"
    r"incorrect|wrong|silently|break\w*|broken|nan)\b", re.I,
)


_BULLET = re.compile(r"(?m)^\s*(?:[*+-]|\d+[.)])\s+")


def _items_as_sentences(text: str) -> str:
    """One line in which each list item ends as a sentence of its own."""
    lines: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if (_BULLET.match(line) and lines and not ends_sentence(lines[-1])
                and not lines[-1].rstrip().endswith((":", "："))):
            lines[-1] += "."
        lines.append(_BULLET.sub("", line))
    return one_line("\n".join(lines))


def bot_marker(body: str | None) -> str | None:
    """The severity a review bot marked the comment with (`![high](...)`), or None."""
    if not body:
        return None
    found = {m.group(1).lower() for m in _MARKER.finditer(body)}
    for level in ("critical", "high", "medium", "low"):
        if level in found:
            return level
    return None


def is_approval(body: str | None) -> bool:
    """An approval ("LGTM!", "Looks good, one nit") is not a concern to report."""
    return bool(body and _APPROVAL.match(plain(body)))


def is_praise(body: str | None) -> bool:
    """Praise or thanks with no request in it raises no concern."""
    if not body:
        return False
    text = one_line(plain(body))
    return bool(_PRAISE.match(text) and not _ASK.search(text))


def says_done(body: str | None) -> bool:
    """Whether the comment reports the change as made ("Done in 895730f3", "Solved")."""
    return bool(body and _DONE.search(one_line(plain(body))))


def wording_severity(body: str | None) -> Severity:
    """High when the comment names what breaks (a failure, lost data, a crash), else
    medium: the severity of a finding without a marker."""
    return "high" if body and _SEVERE.search(plain(body)) else "medium"


_MARKER_SEVERITY: dict[str, Severity] = {"critical": "high", "high": "high", "medium": "medium"}


def marker_severity(marker: str) -> Severity:
    return _MARKER_SEVERITY.get(marker, "low")


def is_concern(body: str | None) -> bool:
    """A comment to report: not an approval, not praise, not a report of work done."""
    return bool(body and body.strip()) and not (
        is_approval(body) or is_praise(body) or says_done(body))


def quote(body: str | None, limit: int = QUOTE_LIMIT) -> str | None:
    """The concern in whole sentences: praise dropped, the consequence sentence kept
    (joined with an ellipsis when sentences between were left out)."""
    if not body:
        return None
    text = _items_as_sentences(plain(_MARKER.sub("", body)))
    kept = [s for s in sentences(text) if not (_PRAISE.match(s) and not _ASK.search(s))]
    if not kept:
        return clip(text, limit) if text else None
    first = kept[0]
    # The last sentence naming what breaks is where the concern arrives.
    consequence = next((s for s in reversed(kept[1:]) if _SEVERE.search(s)), None)
    if consequence is None or _SEVERE.search(first):
        return clip(" ".join(kept), limit)
    following = kept[1:kept.index(consequence) + 1]
    together = " ".join([first, *following])
    if len(together) <= limit:
        return together
    joined = f"{first} … {consequence}"
    return joined if len(joined) <= limit else clip(consequence, limit)
