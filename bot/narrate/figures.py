"""The figures a text states, normalised to plain numbers, so a sentence's figures can
be looked up among those of the facts it cites: `43%`, `2-3x`, `54GiB`, `1,024`,
`十二个`, `五百`, `百分之四十三`, `three times` all count.

A Chinese numeral is a figure when it is a number beyond doubt (`十二`, `五百`, with a
unit character) or a digit before a measure word of quantity (`三个`, `两项`, `五倍`);
`一` before a measure word is the article (`一个新参数`), and `一次`/`两次`/`二次` are
as often "once"/"twice"/"second-order" as counts, so neither is read as a figure.
Idioms built on numerals (`十分`, `万一`, `千万不要`) are not figures.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

PULL_REF = re.compile(r"(?<![A-Za-z0-9_/.-])(?:PR\s?)?#(\d+)", re.I)
QUALIFIED_REF = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(\d+)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
_DIGITS = re.compile(r"\d+(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?")
_HAN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}
_HAN_UNIT = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
_HAN_NUMBER = "[零〇一二两三四五六七八九十百千万亿]+"
# Measure words of quantity and time after which a bare digit is a figure.
_MEASURES = "个项次条名位周天倍成行处类份种篇轮例段组台月日年号时秒"
_IDIOMS = re.compile(r"十分|十足|十全|万一|千方百计|万无一失|成千上万|千万(?=[不别要记])|百般|"
                     r"一一|两两|三三两两|一次性|二次|两次|一次|再次|多次|数[十百千万]|几[十百千万]|"
                     r"[上近][百千万]")
_HAN_FIGURE = re.compile(rf"百分之({_HAN_NUMBER})|({_HAN_NUMBER})")
_EN_NUMBER = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
              "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
              "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
              "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
              "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
              "twice": 2, "thrice": 3, "dozen": 12, "dozens": 12}
_EN_SCALE = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_EN_WORD = re.compile(r"[A-Za-z]+")


def without_refs(text: str) -> str:
    """`text` without PR references and code spans, whose digits are not figures."""
    return PULL_REF.sub(" ", QUALIFIED_REF.sub(" ", CODE_SPAN.sub(" ", text)))


def normal(number: str) -> str:
    """`1,024` -> `1024`, `0.50` -> `0.5`, `3.0` -> `3`, `07` -> `7`."""
    try:
        value = Decimal(number.replace(",", ""))
    except InvalidOperation:
        return number
    return format(value.normalize(), "f")


def han_value(numeral: str) -> int | None:
    """`十二` -> 12, `三百零五` -> 305, `两` -> 2; None when it is not a numeral."""
    total = section = digit = 0
    seen = False
    for char in numeral:
        if char in _HAN_DIGIT:
            digit = _HAN_DIGIT[char]
            seen = True
        elif char in _HAN_UNIT:
            unit = _HAN_UNIT[char]
            if unit >= 10_000:
                total = (total + section + digit) * unit
                section = 0
            else:
                section += (digit or 1) * unit
            digit = 0
            seen = True
        else:
            return None
    return total + section + digit if seen else None


def _han_figures(text: str) -> set[str]:
    found: set[str] = set()
    plain = _IDIOMS.sub(" ", text)
    for match in _HAN_FIGURE.finditer(plain):
        if match.group(1):
            value = han_value(match.group(1))
        else:
            numeral = match.group(2)
            after = plain[match.end():match.end() + 1]
            has_unit = any(c in _HAN_UNIT for c in numeral)
            value = han_value(numeral)
            if value is None or not (has_unit or (after and after in _MEASURES
                                                  and value >= 2)):
                continue
        if value is not None:
            found.add(str(value))
    return found


def _english_figures(text: str) -> set[str]:
    """`five hundred` -> 500, `three` -> 3, `twice` -> 2 (`one` is the article's kin)."""
    found: set[str] = set()
    value: int | None = None
    for word in (*(w.lower() for w in _EN_WORD.findall(text)), ""):
        if word in _EN_NUMBER:
            value = (value or 0) + _EN_NUMBER[word]
        elif word in _EN_SCALE and value is not None:
            value *= _EN_SCALE[word]
        elif word in _EN_SCALE:
            value = _EN_SCALE[word]
        elif word == "and" and value is not None:
            continue
        else:
            if value is not None:
                found.add(str(value))
            value = None
    return found


def figures_in(text: str) -> set[str]:
    """Every figure `text` states, normalised (PR numbers and code spans left out)."""
    plain = without_refs(text)
    found = {normal(m.group(0)) for m in _DIGITS.finditer(plain)}
    return found | _han_figures(plain) | _english_figures(plain)


def percent_forms(share: float) -> set[str]:
    """How a share may be written as a percentage: `0.2857` -> 29, 28.6 and 28.57."""
    value = share * 100
    return {normal(f"{value:.{places}f}") for places in (0, 1, 2)}
