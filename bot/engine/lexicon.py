"""The Chinese words PR titles are said with, read once from `i18n/zh/lexicon.toml`.

The words are data, kept with the other Chinese catalogs, so a translator adds a word
without touching code; `bot.engine.headline` reads them through `lexicon()`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from bot.resources import template_dir

LEXICON_FILE = ("i18n", "zh", "lexicon.toml")


@dataclass(frozen=True, slots=True)
class Verb:
    """A verb a title opens with: its Chinese, its frames by preposition ("将 {o} 移到
    {t}"), whether its conditions decide what it means (`narrows`: "disable X for Y"),
    and whether it is a negation that takes another verb ("don't route ...")."""

    zh: str
    frames: Mapping[str, str]
    narrows: bool = False
    negation: bool = False


@dataclass(frozen=True, slots=True)
class Lexicon:
    types: Mapping[str, str]
    verbs: Mapping[str, Verb]
    adjuncts: Mapping[str, str]
    words: Mapping[str, str]
    kept: frozenset[str]
    names: frozenset[str]
    acronyms: Mapping[str, str]
    phrases: Mapping[tuple[str, ...], str]
    numbers: Mapping[str, str]
    adverbs: Mapping[str, str]
    adjunct_phrases: Mapping[tuple[str, ...], str]
    # Severe symptoms a PR names ("crash" -> 崩溃).
    symptoms: Mapping[str, str]
    # What a "when X is ..." clause says X is.
    states: Mapping[str, str]
    # Every written form of a verb ("fixes", "added", "splitting") -> its entry's key.
    forms: Mapping[str, str]

    def type_label(self, kind: str) -> str:
        return self.types.get(kind, self.types["other"])


def _forms(lemma: str) -> set[str]:
    """The inflected forms of an English verb: -s, -es, -ed, -ing, a final e dropped, a
    final consonant doubled, y -> ies/ied."""
    forms = {lemma, lemma + "s", lemma + "es", lemma + "ed", lemma + "d", lemma + "ing"}
    if lemma.endswith("e"):
        forms.add(lemma[:-1] + "ing")
    if lemma.endswith("y"):
        forms |= {lemma[:-1] + "ies", lemma[:-1] + "ied"}
    if re.search(r"[^aeiou][aeiou][bdgmnprt]$", lemma):
        forms |= {lemma + lemma[-1] + "ed", lemma + lemma[-1] + "ing"}
    return forms


def _verb(entry: Mapping[str, Any]) -> Verb:
    frames = {k: str(v) for k, v in entry.items() if k not in {"zh", "narrows", "negation"}}
    return Verb(zh=str(entry["zh"]), frames=frames, narrows=bool(entry.get("narrows")),
                negation=bool(entry.get("negation")))


def parse_lexicon(data: Mapping[str, Any]) -> Lexicon:
    """A lexicon from the catalog's tables (see the comments in lexicon.toml)."""
    verbs = {key: _verb(entry) for key, entry in data["verbs"].items()}
    forms: dict[str, str] = {}
    for key in verbs:
        first, _, rest = key.partition(" ")
        for form in _forms(first):
            forms.setdefault(f"{form} {rest}".strip(), key)
    return Lexicon(
        types=dict(data["types"]),
        verbs=verbs,
        adjuncts=dict(data["adjuncts"]),
        words=dict(data["words"]),
        kept=frozenset(data["kept"]["words"]),
        names=frozenset(data["names"]["words"]),
        acronyms={word.lower(): word for word in data["acronyms"]["words"]},
        phrases={tuple(key.split()): str(value) for key, value in data["phrases"].items()},
        numbers=dict(data["numbers"]),
        adverbs=dict(data["adverbs"]),
        adjunct_phrases={tuple(key.split()): str(value)
                         for key, value in data["adjunct_phrases"].items()},
        symptoms=dict(data["symptoms"]),
        states=dict(data["states"]),
        forms=forms,
    )


@cache
def lexicon() -> Lexicon:
    """The shipped lexicon, read at first use."""
    path = template_dir().joinpath(*LEXICON_FILE)
    with path.open("rb") as handle:
        return parse_lexicon(tomllib.load(handle))
