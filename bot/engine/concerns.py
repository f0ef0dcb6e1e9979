"""What a review comment says: a concern, an approval, praise, or that it was done.

Risks are built from concerns only. A comment that approves or thanks raises none; a
thread whose last word says the change was made is addressed; a bot's finding is as
severe as its marker, or else its wording, says. The quoted concern keeps its
consequence ("..., causing a failure.") in whole sentences.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot.engine.text import clip, ends_sentence, one_line, plain, sentences
from bot.models import OUTCOMES, Concern, Severity

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


# A sentence about the code as it was before the PR ("I found the previous handling ...
# silently breaks the marconi-style caching"): what breaks there is not the PR's doing.
_BEFORE_THE_CHANGE = re.compile(
    r"\b(?:previous(?:ly)?|the old (?:code|handling|path|behaviou?r|implementation)|"
    r"before this (?:pr|change))\b", re.I)


def _about_the_change(sentence: str) -> bool:
    return not _BEFORE_THE_CHANGE.search(sentence)


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


def asks_or_warns(body: str | None) -> bool:
    """A conversation comment worth a risk: a concern that asks something or names
    what may go wrong (a comment explaining the code, "There are multiple streams ...",
    is neither)."""
    if not is_concern(body):
        return False
    text = one_line(plain(_CODE.sub(" ", body or "")))
    return bool(_ASK.search(text) or _SEVERE.search(text))


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
    consequence = next((s for s in reversed(kept[1:])
                        if _SEVERE.search(s) and _about_the_change(s)), None)
    if consequence is None or _SEVERE.search(first):
        return clip(" ".join(kept), limit)
    following = kept[1:kept.index(consequence) + 1]
    together = " ".join([first, *following])
    if len(together) <= limit:
        return together
    joined = f"{first} … {consequence}"
    return joined if len(joined) <= limit else clip(consequence, limit)


# What may go wrong, by the words a reviewer uses for it (code spans left out: a name
# such as `..._threadsafe` says nothing about the concern).
_OUTCOME_WORDS: dict[Concern, re.Pattern[str]] = {
    Concern.SECURITY: re.compile(r"\b(?:security|vulnerab\w*|injection|exploit\w*|CVE)\b", re.I),
    Concern.DATA_LOSS: re.compile(
        r"\b(?:data loss|lose|loses|lost|overwrit\w*|clears|cleared|clear (?:the|all|out)|"
        r"empty|wipe[sd]?|corrupt\w*)\b", re.I),
    Concern.CRASH: re.compile(r"\b(?:crash\w*|segfault\w*|panic\w*)\b", re.I),
    Concern.OOM: re.compile(r"\b(?:oom|out of memory)\b", re.I),
    Concern.HANG: re.compile(r"\b(?:hang|hangs|hanging|deadlock\w*|stuck)\b", re.I),
    Concern.WRONG_RESULT: re.compile(r"\b(?:incorrect\w*|wrong|bias\w*|mismatch\w*|nan)\b",
                                     re.I),
    Concern.FAILURE: re.compile(r"\b(?:fail\w*|errors?|exceptions?)\b", re.I),
    Concern.BREAKS: re.compile(r"\b(?:break|breaks|breaking|broken)\b", re.I),
    Concern.RACE: re.compile(r"\b(?:race\w*|thread.?safe\w*|concurren\w*|lock)\b", re.I),
    Concern.LEAK: re.compile(r"\bleak\w*", re.I),
    Concern.COMPATIBILITY: re.compile(r"\b(?:backward\w*|compatib\w*)\b", re.I),
    Concern.PERFORMANCE: re.compile(r"\b(?:slow\w*|latency|overhead|regress\w*|performance)\b",
                                    re.I),
}
# "Now the change only affects NPU": what the change may leave out.
_SCOPE = re.compile(r"\bonly (?:affects|applies to|exists on|works on|runs on|covers)\s+"
                    r"([A-Za-z][\w+-]*)", re.I)
_DESIGN = re.compile(r"^(?:better|consider|suggest\w*|maybe|perhaps|let's|how about|why not|"
                     r"we (?:could|should)|you (?:could|should|can)|i think)\b", re.I)
_REMARK_WORDS: dict[Concern, re.Pattern[str]] = {
    Concern.UNUSED: re.compile(r"\bunused\b|\bdead code\b|\bnever used\b", re.I),
    Concern.NAMING: re.compile(r"\brenam\w*|\bnaming\b|\bname (?:it|this)\b|"
                               r"\bcall (?:it|this)\b", re.I),
    Concern.PLACEMENT: re.compile(
        r"\bmove (?:it|this|these|them|that)\b|\bmove\b[^.]*\b(?:to|into)\b|\bbelongs? (?:in|to)\b|"
        r"\bshould (?:live|be done|go) in\b|\brather than inlin\w*|\bbetter (?:place|put)\b", re.I),
    Concern.STYLE: re.compile(r"\bnit\b|\btypo\w*|(?<![-\w])style\b|\bformatt?\w*\b|\bindent\w*|"
                              r"\bdocstring\w*", re.I),
}
_CODE = re.compile(r"(`+)([^`\n]+?)\1")
SUBJECTS = 2
SUBJECT_LIMIT = 48


@lru_cache(maxsize=4096)
def concerns_of(body: str | None) -> tuple[Concern, ...]:
    """What a review comment says may go wrong (its outcomes, most severe first), or
    else asks for: the scope of the change, an answer, another design, a remark."""
    if not body:
        return ()
    text = _items_as_sentences(plain(_CODE.sub(" ", _MARKER.sub("", body))))
    # What may go wrong is read from the sentences about the change, not about the code
    # as it was before it.
    about = " ".join(s for s in sentences(text) if _about_the_change(s))
    found = [c for c in OUTCOMES if _OUTCOME_WORDS[c].search(about)]
    if _SCOPE.search(text):
        found.append(Concern.SCOPE)
    if "?" in text:
        found.append(Concern.QUESTION)
    if _DESIGN.match(text):
        found.append(Concern.DESIGN)
    found.extend(c for c, words in _REMARK_WORDS.items() if words.search(about))
    return tuple(found)


@lru_cache(maxsize=4096)
def scope_of(body: str | None) -> str | None:
    """What a comment says the change is limited to ("only affects NPU" -> "NPU")."""
    match = _SCOPE.search(one_line(plain(body))) if body else None
    return match.group(1) if match else None


@lru_cache(maxsize=4096)
def subjects_of(body: str | None) -> tuple[str, ...]:
    """The code a comment names (its first code spans), for the risk line's lead."""
    found: list[str] = []
    for match in _CODE.finditer(body or ""):
        name = match.group(2).strip()
        if name and len(name) <= SUBJECT_LIMIT and name not in found:
            found.append(name)
        if len(found) == SUBJECTS:
            break
    return tuple(found)
