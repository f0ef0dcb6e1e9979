"""The verifier between the model and every renderer: a narrated sentence is kept only
when everything it states can be found in what the model was given.

A sentence fails when it cites a PR outside the week (and not quoted in the input),
names a PR (`#N`) it does not list in `pulls`, states a figure the fact pack does not
hold, puts in backticks an identifier none of its cited PRs contains, carries a
mention, a URL or markup, or is not in the channel's language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bot.models import Lang
from bot.narrate.figures import CODE_SPAN, PULL_REF, figures_in

MAX_CHARS = 400
# zh: at least this share of the letters are Han characters (code spans aside).
MIN_HAN_SHARE = 0.5

_MENTION = re.compile(r"@\w|<[!@#]|<\s*at\b|tg://|user\?id=", re.I)
# No `\b` before a scheme: Han characters are word characters, so "见https://" has none.
_URL = re.compile(r"(?:https?|ftp|tg|mailto|file|javascript):|www\.|"
                  r"[\w-]\.(?:com|org|net|io|cn|dev|ai|app|me|xyz|co)(?![A-Za-z0-9])", re.I)
_MARKUP = re.compile(r"<\s*/?\s*[a-z][^>]*>|\*\*|__|~~|```|\]\(|\[[^\]]*\]\s*\(|&[a-z]+;|"
                     r"^\s*(?:#{1,6}\s|>|[-*+]\s|\d+\.\s)|\|", re.I)
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_OTHER_SCRIPTS = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")
_LATIN = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class Grounds:
    """What narrated sentences may state: the week's PR numbers, PR numbers quoted in
    the input, the figures of the fact pack, and each PR's text (for identifiers)."""

    pulls: frozenset[int]
    figures: frozenset[str]
    texts: Mapping[int, str] = field(default_factory=dict)
    quoted: frozenset[int] = frozenset()

    @classmethod
    def of(cls, pulls: Iterable[int], texts: Mapping[int, str],
           extra_figures: Iterable[str] = (), facts: Iterable[str] = ()) -> Grounds:
        """Grounds from the PRs' texts plus any other fact text (the week's sections)."""
        corpus = [*texts.values(), *facts]
        figures: set[str] = set(extra_figures)
        quoted: set[int] = set()
        for text in corpus:
            figures |= figures_in(text)
            quoted |= {int(n) for n in PULL_REF.findall(text)}
        return cls(pulls=frozenset(pulls), figures=frozenset(figures), texts=dict(texts),
                   quoted=frozenset(quoted))


def check(text: str, pulls: Iterable[int], grounds: Grounds, lang: Lang) -> str | None:
    """Why the sentence must be dropped (a short reason word), or None when it holds."""
    cited = set(pulls)
    if not text.strip():
        return "blank"
    if len(text) > MAX_CHARS or "\n" in text.strip():
        return "too-long"
    if _MENTION.search(text):
        return "mention"
    if _URL.search(text):
        return "url"
    if _MARKUP.search(text):
        return "markup"
    named = {int(n) for n in PULL_REF.findall(text)}
    if not named <= cited:
        return "uncited-pull"
    if any(n not in grounds.pulls and n not in grounds.quoted for n in cited):
        return "unknown-pull"
    if not figures_in(text) <= grounds.figures:
        return "figure"
    for ident in CODE_SPAN.findall(text):
        if not any(ident in grounds.texts.get(n, "") for n in cited):
            return "identifier"
    if text.count("`") % 2:
        return "markup"
    return language_problem(text, lang)


def language_problem(text: str, lang: Lang) -> str | None:
    """"language" when the sentence is not written in `lang`: zh mostly Han characters
    (identifiers in backticks aside), en without any."""
    prose = CODE_SPAN.sub(" ", text)
    han = len(_HAN.findall(prose))
    if lang == "en":
        return "language" if han or _OTHER_SCRIPTS.search(prose) else None
    latin = len(_LATIN.findall(prose))
    if han == 0 or han < MIN_HAN_SHARE * (han + latin):
        return "language"
    return None
