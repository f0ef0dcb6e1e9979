"""Why a PR is key: a score made of named parts, so every ranking can be explained."""

from __future__ import annotations

import math
import re

import msgspec

from bot.engine.areas import is_generated, translations_only
from bot.engine.classify import Classification
from bot.engine.lexicon import lexicon
from bot.engine.summarize import figure_text
from bot.i18n import Translator
from bot.models import Lang, PullRequest, Risk

ROUTINE_TYPES = frozenset({"chore", "docs", "style", "ci", "test", "build"})
ROUTINE_MAX_LINES = 10
# Docs, tests and style: written for the code, never key below a large change.
WRITING_TYPES = frozenset({"docs", "test", "style"})
# A security fix is read first, whatever its size.
SECURITY_WEIGHT = 4.0
_TYPE_WEIGHT = {"feat": 3.0, "fix": 2.5, "perf": 2.5, "revert": 2.0, "refactor": 1.0}
# Security is not among them: only a title's or a label's maintainers call a PR a
# security fix (`bot.engine.classify.is_security`), never a word of its text.
_SEVERE = re.compile(
    r"\b(crash\w*|oom|out of memory|blow-?up|explod\w*|leak\w*|race|corrupt\w*|deadlock\w*|"
    r"hang\w*|nan|segfault\w*|data loss)\b", re.I,
)


# A title about documentation: what its body says went wrong went wrong in an example
# or a comment (tokio #8350's doc examples "corrupting the following frame").
_ABOUT_DOCS = re.compile(r"\b(?:docs?|documentation|doctests?|readme)\b", re.I)


def _severe(pull: PullRequest, cls: Classification, body: str) -> str | None:
    """The severe symptom a PR names (in its title, or in a fix's `body` made prose:
    `bot.engine.text.clean_body`, no template or checklist; not of a fix to docs),
    lowercased."""
    found = _SEVERE.search(pull.title) or (
        cls.type == "fix" and not _ABOUT_DOCS.search(pull.title) and _SEVERE.search(body))
    return found.group(0).lower() if found else None


def symptom(word: str, lang: Lang) -> str:
    """A symptom word in the digest's language (`crash` -> 崩溃, `explodes` as
    `explode`), as written when the lexicon has no word for it."""
    if lang != "zh":
        return word
    words = lexicon().symptoms
    if word in words:
        return words[word]
    for ending in ("s", "es", "d", "ed", "ing"):  # a form of a word the lexicon has
        stem = word[: -len(ending)] if word.endswith(ending) else ""
        for known in (stem, stem + "e"):
            if known and known in words:
                return words[known]
    return word


# A severe symptom's English noun phrase, by the start of the word found; those
# without an article read "fixes NaNs".
_EN_SYMPTOMS = (("crash", "a crash"), ("oom", "OOM"), ("out of memory", "OOM"),
                ("blow", "a blowup"), ("explod", "a blowup"), ("leak", "a leak"),
                ("race", "a race"), ("corrupt", "a corruption"), ("deadlock", "a deadlock"),
                ("hang", "a hang"), ("nan", "NaNs"), ("segfault", "a segfault"),
                ("data loss", "data loss"))


def _en_symptom_fact(word: str, t: Translator) -> str:
    phrase = next((said for start, said in _EN_SYMPTOMS if word.startswith(start)), word)
    if phrase.startswith("a "):
        return t("fixes a %(symptom)s", symptom=phrase[2:])
    return t("fixes %(symptom)s", symptom=phrase)


LARGE_LINES = 300
MAX_FACTS = 3


def written_size(pull: PullRequest) -> tuple[int, int]:
    """The lines and files of a PR that a person wrote: its size without the files a
    tool generates (`is_generated`: lock files, test snapshots), so a fix of seven lines
    with 380 lines of Jest snapshots is no large change."""
    generated = [f for f in pull.files if is_generated(f.path)]
    files = len(pull.files) or pull.changed_files or 0
    if not generated:
        return pull.lines_changed, files
    return (max(0, pull.lines_changed - sum(f.additions + f.deletions for f in generated)),
            files - len(generated))


def key_facts(pull: PullRequest, cls: Classification, risks: list[Risk],
              figures: tuple[str, ...], settings: tuple[str, ...], t: Translator,
              headline: str = "", body: str = "") -> tuple[str, ...]:
    """Why a key PR matters, in a few words each: what it measured, the settings it
    adds, the severe symptom it fixes (unless its `headline` says it), how large it
    is, its risks; at most three. The zh chat says them after the PR's Chinese title,
    where its English body is left out."""
    facts: list[str] = []
    if figures:
        facts.append(t("measured %(figures)s",
                       figures=t.sep.join(figure_text(f, t.lang) for f in figures)))
    if settings:
        facts.append(t("adds the setting %(settings)s",
                       settings=t.sep.join(f"`{name}`" for name in settings)))
    severe = _severe(pull, cls, body) if cls.type == "fix" else None
    if severe and t.lang == "zh" and symptom(severe, t.lang) not in headline:
        facts.append(t("fixes a %(symptom)s", symptom=symptom(severe, t.lang)))
    elif severe and t.lang == "en" and severe not in pull.title.lower():
        # In en the title is shown before the facts: the symptom only where it does
        # not say it, as a noun that reads after "fixes" (`crashes` -> "a crash").
        facts.append(_en_symptom_fact(severe, t))
    if written_size(pull)[0] >= LARGE_LINES:  # judged on what a person wrote,
        # said in GitHub's own totals
        facts.append(t.n("%(num)d file, %(lines)d lines changed",
                         "%(num)d files, %(lines)d lines changed",
                         len(pull.files) or pull.changed_files or 0, lines=pull.lines_changed))
    if risks:
        facts.append(t.n("%(num)d risk", "%(num)d risks", len(risks)))
    return tuple(facts[:MAX_FACTS])


class Score(msgspec.Struct, frozen=True, kw_only=True):
    value: float
    key: bool
    reasons: tuple[str, ...]


def is_routine(cls: Classification, pull: PullRequest, risks: list[Risk]) -> bool:
    """Small maintenance with no risk, and translations only whatever their size, are
    counted, but not key."""
    if risks or cls.security:
        return False
    lines = written_size(pull)[0]
    return (cls.type in ROUTINE_TYPES and lines <= ROUTINE_MAX_LINES) or \
        (cls.type in WRITING_TYPES and lines < LARGE_LINES) or \
        translations_only([f.path for f in pull.files])


def score_pull(
    pull: PullRequest,
    cls: Classification,
    risks: list[Risk],
    figures: tuple[str, ...],
    t: Translator,
    *,
    focus_topics: tuple[str, ...] = (),
    body: str = "",
) -> Score:
    """Type, size, severity words, figures, review depth, risks and focus topics."""
    value = 0.0
    reasons: list[str] = []
    if cls.breaking:
        value += 5
        reasons.append(t("breaking change"))
    if cls.security:
        value += SECURITY_WEIGHT
        reasons.append(t("security fix"))
    weight = _TYPE_WEIGHT.get(cls.type, 0.5)
    value += weight
    type_reason = {"feat": t("new feature"), "fix": t("bug fix"), "perf": t("performance")}
    if cls.type in type_reason:
        reasons.append(type_reason[cls.type])
    lines = written_size(pull)[0]
    value += min(3.0, math.log10(lines + 1))
    if lines >= LARGE_LINES:  # said in GitHub's totals, as the PR page shows them
        files, lines = len(pull.files) or pull.changed_files or 0, pull.lines_changed
        reasons.append(t.n("large change (%(lines)d lines in %(num)d file)",
                           "large change (%(lines)d lines in %(num)d files)", files,
                           lines=lines))
    severe = _severe(pull, cls, body)
    if severe:
        value += 1.5
        reasons.append(t("severe symptom (%(word)s)", word=symptom(severe, t.lang)))
    if figures:
        value += 1.0
        reasons.append(t("measured effect (%(figures)s)",
                         figures=t.sep.join(figure_text(f, t.lang) for f in figures)))
    discussion = len(pull.review_threads or ()) + len(pull.comments or ()) + len(
        [r for r in pull.reviews or () if r.body]
    )
    if discussion:
        value += min(2.0, 0.5 * discussion)
        reasons.append(t.n("%(num)d review discussion", "%(num)d review discussions",
                           discussion))
    if risks:
        value += min(2.0, float(len(risks)))
        reasons.append(t.n("%(num)d risk", "%(num)d risks", len(risks)))
    focused = [topic for topic in cls.topics if topic in focus_topics]
    if focused:
        value += 2.0
        reasons.append(t("on your topics (%(topics)s)", topics=t.sep.join(focused)))
    # A branch sync moves work already counted; a dependency bump and a version's release
    # are routine whatever their size: none is a key PR.
    key = (pull.state == "merged" and not is_routine(cls, pull, risks) and not cls.sync
           and not cls.bump and not cls.release)
    return Score(value=round(value, 3), key=key, reasons=tuple(reasons))
