"""One reading of untrusted text before any rule looks at it: what a reader would see.

`visible` drops what a reader cannot see (zero-width, bidi controls, tag characters,
variation selectors, control characters); `folded` is that text under NFKC (full-width
`＠` and `ｅｖｉｌ．ｃｏｍ` become `@` and `evil.com`), with Cyrillic and Greek letters
that look like Latin ones read as those (`еvіl` is `evil`, `іgnore` is `ignore`) and
the ways of writing a dot that chat clients or readers still follow (`[.]`, `(.)`, `。`,
`点`, ` . ` or ` dot ` between labels) written as dots. Rules read `folded`; what is shown
stays `visible` (NFKC would turn Chinese full-width punctuation `，：（）` into ASCII).
"""

from __future__ import annotations

import re
import unicodedata

from bot.engine.text import strip_control

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff]")
_DOT_WORDS = re.compile(r"\s*(?:\[\s*(?:\.|dot)\s*\]|\(\s*(?:\.|dot)\s*\)|\{\s*(?:\.|dot)\s*\}|"
                        r"<\s*(?:\.|dot)\s*>)\s*|(?<=[A-Za-z0-9])\s+dot\s+(?=[A-Za-z0-9])",
                        re.I)
_WIDE_DOT = re.compile(r"(?<=[A-Za-z0-9])\s*[。｡点]\s*(?=[A-Za-z0-9])|"
                       r"(?<=[A-Za-z0-9])\s+\.\s+(?=[a-z][a-z0-9-]{1,23}(?![A-Za-z0-9]))")
_LOOKALIKES = str.maketrans(
    # Cyrillic and Greek letters drawn like Latin ones: a reader sees `еvіl.com` as
    # evil.com, so the rules must too (folded text is read, never shown).
    "аеорсухіјѕԁһӏԛԝвкмнтАВЕКМНОРСТХІЈЅԌԚԜУ"
    "αορικνυχτΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdhlqwbkmhtABEKMHOPCTXIJSGQWY"
    "aopikvuxtABEZHIKMNOPTYX")
_LATIN_OR_LOOKALIKE = re.compile("[A-Za-z\u0370-\u03ff\u0400-\u052f]+")
OBFUSCATED = re.compile(r"\[\s*(?:\.|dot|:)\s*\]|\(\s*(?:\.|dot)\s*\)|\{\s*(?:\.|dot)\s*\}|"
                        r"(?<![a-z0-9])(?:hxxps?|h\*\*ps?|http\[s?\])(?![a-z0-9])|"
                        r"(?<=[a-z0-9])\s+dot\s+(?=[a-z]{2,}\b)", re.I)
"""A link written so that filters miss it: never in a faithful sentence."""


def visible(text: str) -> str:
    """`text` without invisible, bidi and control characters."""
    return strip_control(_INVISIBLE.sub("", text))


def disguised(text: str) -> bool:
    """Whether a word mixes Latin letters with Cyrillic or Greek look-alikes (`еvil`):
    written to pass for something it is not, never in a faithful sentence."""
    return any(re.search("[A-Za-z]", word) and word != word.translate(_LOOKALIKES)
               for word in _LATIN_OR_LOOKALIKE.findall(text))


def folded(text: str) -> str:
    """`visible(text)` under NFKC, with obfuscated dots written as dots."""
    out = unicodedata.normalize("NFKC", visible(text)).translate(_LOOKALIKES)
    out = _DOT_WORDS.sub(".", out)
    return _WIDE_DOT.sub(".", out)
