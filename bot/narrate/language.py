"""Whether a sentence is written in the channel's language, judged by words and script.

Latin identifiers and English engineering terms are normal in Chinese technical prose
("npu 相关 PR 占 43%"), so zh is not judged by counting letters: a zh sentence needs
Han characters and no run of English function words, and no kana, Hangul, Cyrillic,
Greek or Arabic. An en sentence has no Han, kana, Hangul, Cyrillic, Greek or Arabic
outside code spans, and no run of French, German or Spanish function words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.models import Lang

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_FOREIGN_TO_ZH = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uac00-\ud7af\u1100-\u11ff"
                            r"\u3130-\u318f\u0400-\u04ff\u0370-\u03ff\u0600-\u06ff\u0590-\u05ff]")
_FOREIGN_TO_EN = re.compile(_FOREIGN_TO_ZH.pattern[:-1] + r"\u3400-\u4dbf\u4e00-\u9fff"
                            r"\uf900-\ufaff\u0e00-\u0e7f\u0900-\u097f]")
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿŒœß]+")
_ENGLISH_WORDS = (
    "the a an of and to in is are was were for with on this that these those by from as "
    "at it its be been being has have had which into now so but not or also than then "
    "their they them there will would can could should among over under about after "
    "before while when where who what all some any more most such only each both other "
    "between through during without within we our")
_OTHER_WORDS = (
    # French
    "le la les des du une est sont dans pour avec sur cette ces qui pas mais nous vous "
    "leur été être ajoute corrige "
    # German
    "der die das und ist sind nicht mit für auf ein eine einer dem wird werden wurde "
    "sich auch von zu bei aus nach oder wir diese dieser "
    # Spanish
    "el los las una unos está están con para por del al que se su sus como pero más este "
    "esta esto también fue y añade")
_ENGLISH = frozenset(_ENGLISH_WORDS.split())
_OTHER = frozenset(_OTHER_WORDS.split())
_ACCENTED = re.compile(r"[À-ÖØ-öø-ÿŒœß]")
EN_RUN = 3
"""English function words that make a "Chinese" sentence an English one."""


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


_LATIN_RUN = re.compile(r"[^\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")
_HAN_RUN = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")
_EDGES = " \t,.;:!?()[]{}\"'#0123456789-"


def _unnamed(prose: str, runs: re.Pattern[str], names: Iterable[str]) -> str:
    """`prose` without the runs of one script that quote a name from the facts (a PR's
    title, a theme's): a name is no evidence of the sentence's language."""
    known = [n.casefold() for n in names if n]

    def keep(match: re.Match[str]) -> str:
        run = match.group(0).strip(_EDGES).casefold()
        return " " if run and any(run in name for name in known) else match.group(0)

    return runs.sub(keep, prose)


def language_problem(prose: str, lang: Lang, names: Iterable[str] = ()) -> str | None:
    """"language" when `prose` (code spans already taken out) is not in `lang`;
    `names` are the facts' own titles, which may be quoted in any language."""
    if lang == "zh":
        prose = _unnamed(prose, _LATIN_RUN, names)
        words = _words(prose)
        english = sum(w in _ENGLISH for w in words)
        if _FOREIGN_TO_ZH.search(prose) or not _HAN.search(prose):
            return "language"
        if english >= EN_RUN and len(words) > len(_HAN.findall(prose)) / 2:
            return "language"
        return None
    prose = _unnamed(prose, _HAN_RUN, names)
    words = _words(prose)
    english = sum(w in _ENGLISH for w in words)
    if _FOREIGN_TO_EN.search(prose):
        return "language"
    other = sum(w in _OTHER or bool(_ACCENTED.search(w)) for w in words)
    if other >= 2 and other >= english:
        return "language"
    return None
