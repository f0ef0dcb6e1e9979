"""Per-PR summaries, extracted from the PR body's what/why section.

Extractive on purpose: every word comes from the PR, figures stay verbatim. Where the
body says nothing useful, the summary is built from the title and the files.
"""

from __future__ import annotations

import re
from collections import Counter

from bot.engine.classify import Classification
from bot.engine.text import clip, one_line, plain
from bot.i18n import Translator
from bot.models import PullRequest

SUMMARY_LIMIT = 320
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(.+?)\s*#*\s*$", re.M)
_WANTED = re.compile(
    r"what|why|summary|description|motivation|purpose|overview|changes|context|"
    r"变更|目的|概述|描述|动机|背景", re.I,
)
_BOILERPLATE = re.compile(
    r"^(as (the )?titled?\.?|see title\.?|n/?a\.?|none\.?|todo\.?|tbd\.?|wip\.?|"
    r"同标题。?|如题。?)$",
    re.I,
)
_NOISE_LINE = re.compile(
    r"^\s*(>|- \[[ xX]\]|\* \[[ xX]\]|(related )?issues?\s*[:：]|(closes|fixes|resolves) #\d+$|"
    r"https?://\S+$|cc\b|/cc\b|@\w)", re.I,
)
_NUM = r"~?\d+(?:\.\d+)?(?:\s*[-–~]\s*\d+(?:\.\d+)?)?"
_UNIT = r"(?:[KMGT]i?B|ms|µs|us|s|%)"
FIGURE = re.compile(
    rf"{_NUM}\s*{_UNIT}\s*(?:->|→|to)\s*{_NUM}\s*{_UNIT}(?![A-Za-z])"
    rf"|{_NUM}\s*[x×](?![A-Za-z0-9])"
    rf"|{_NUM}\s*(?:[KMGT]i?B)(?![A-Za-z])"
    rf"|{_NUM}%"
)


def _sections(body: str) -> list[tuple[str, str]]:
    """(heading, text) pairs; text before the first heading has heading ''."""
    parts: list[tuple[str, str]] = []
    last_heading, last_end = "", 0
    for match in _HEADING.finditer(body):
        parts.append((last_heading, body[last_end:match.start()]))
        last_heading, last_end = match.group(1), match.end()
    parts.append((last_heading, body[last_end:]))
    return [(h, t) for h, t in parts if t.strip()]


def _paragraphs(text: str) -> list[str]:
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if ln.strip() and not _NOISE_LINE.match(ln)]
        if not lines:
            continue
        paragraph = one_line("\n".join(re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", ln) for ln in lines))
        if paragraph and not _BOILERPLATE.match(paragraph) and len(paragraph) > 3:
            paragraphs.append(paragraph)
    return paragraphs


def body_summary(body: str | None) -> str | None:
    """First useful paragraph(s) of the what/why section, or None."""
    if not body or not body.strip():
        return None
    text = plain(body)
    sections = _sections(text)
    wanted = [t for h, t in sections if h and _WANTED.search(h)]
    candidates = wanted or [t for h, t in sections if not h] or [t for _, t in sections]
    for section in candidates:
        paragraphs = _paragraphs(section)
        if not paragraphs:
            continue
        summary = paragraphs[0]
        for extra in paragraphs[1:]:
            if len(summary) >= 120:
                break
            summary = f"{summary} {extra}"
        return clip(summary.replace("`", ""), SUMMARY_LIMIT)
    return None


def figures(text: str | None, limit: int = 3) -> tuple[str, ...]:
    """Measured figures quoted verbatim (`1.9-3.1x`, `54 GiB to 150 MiB`, `98%`)."""
    if not text:
        return ()
    found: list[str] = []
    for match in FIGURE.finditer(plain(text)):
        value = match.group(0).strip()
        if not any(value in seen for seen in found):
            found.append(value)
        if len(found) >= limit:
            break
    return tuple(found)


def _main_dirs(pull: PullRequest) -> list[str]:
    dirs = Counter(f.path.rsplit("/", 1)[0] if "/" in f.path else "." for f in pull.files)
    return [d for d, _ in dirs.most_common(2)]


def fallback_summary(pull: PullRequest, cls: Classification, t: Translator) -> str:
    """From the files when the body gives nothing. Not from the title: every place
    that shows a summary shows it right after the title."""
    files = len(pull.files) or (pull.changed_files or 0)
    dirs = [t("the repository root") if d == "." else d for d in _main_dirs(pull)]
    if not files:
        return t("No description given.")
    if not dirs:
        return t("Changes %(files)s (+%(added)d/-%(removed)d lines)",
                 files=t.n("%(num)d file", "%(num)d files", files),
                 added=pull.additions or 0, removed=pull.deletions or 0)
    return t(
        "Changes %(files)s in %(dirs)s (+%(added)d/-%(removed)d lines)",
        files=t.n("%(num)d file", "%(num)d files", files),
        dirs=t.join(dirs),
        added=pull.additions or 0,
        removed=pull.deletions or 0,
    )


def summarize(pull: PullRequest, cls: Classification, t: Translator) -> str:
    return body_summary(pull.body) or fallback_summary(pull, cls, t)
