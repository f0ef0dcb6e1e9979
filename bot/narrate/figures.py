"""The figures a text states, normalised to plain numbers, so a sentence's figures can
be looked up among those of the fact pack: `43%`, `2-3x`, `54GiB`, `1,024`, `十二个`,
`百分之四十三` and `三倍` all count."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

PULL_REF = re.compile(r"(?:PR\s?)?#(\d+)", re.I)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
_DIGITS = re.compile(r"\d+(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?")
_HAN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}
_HAN_UNIT = {"十": 10, "百": 100, "千": 1000, "万": 10_000}
_HAN_NUMBER = "[零〇一二两三四五六七八九十百千万]+"
# Measure words and units after which a Chinese numeral is a figure ("十二个", "三倍");
# without one, "一" is mostly the article ("一起", "统一").
_MEASURES = "个项次条名位周天倍成行处类份种篇轮例段组台"
_HAN_FIGURE = re.compile(rf"百分之({_HAN_NUMBER})|({_HAN_NUMBER})(?=[{_MEASURES}])")


def without_refs(text: str) -> str:
    """`text` without PR references and code spans, whose digits are not figures."""
    return PULL_REF.sub(" ", CODE_SPAN.sub(" ", text))


def normal(number: str) -> str:
    """`1,024` -> `1024`, `0.50` -> `0.5`, `3.0` -> `3`."""
    try:
        value = Decimal(number.replace(",", ""))
    except InvalidOperation:
        return number
    text = format(value.normalize(), "f")
    return text


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
            if unit == 10_000:
                total += (section + digit) * unit
                section = 0
            else:
                section += (digit or 1) * unit
            digit = 0
            seen = True
        else:
            return None
    return total + section + digit if seen else None


def figures_in(text: str) -> set[str]:
    """Every figure `text` states, normalised (PR numbers and code spans left out)."""
    plain = without_refs(text)
    found = {normal(m.group(0)) for m in _DIGITS.finditer(plain)}
    for match in _HAN_FIGURE.finditer(plain):
        value = han_value(match.group(1) or match.group(2))
        if value is not None:
            found.add(str(value))
    return found


def percent_forms(share: float) -> set[str]:
    """How a share may be written as a percentage: `0.2857` -> 29, 28.6 and 28.57."""
    value = share * 100
    return {normal(f"{value:.{places}f}") for places in (0, 1, 2)}
