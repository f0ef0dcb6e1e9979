"""Chinese typesetting of rendered text: the one place its spacing rules live.

Templates and messages put words together with half-width spaces, and PR data brings
its own; in Chinese a half-width space never sits next to full-width punctuation
("（#7061） 和" becomes "（#7061）和"), and a parenthesis after Chinese text is
full-width. A list bullet at a line's start keeps its space.
"""

from __future__ import annotations

import re

from bot.models import Lang

_FULL_WIDTH = "，。、；：！？（）【】《》“”‘’「」"
_SPACE_BEFORE = re.compile(rf"(?<=\S)[ \t]+(?=[{_FULL_WIDTH}])")
_SPACE_AFTER = re.compile(rf"(?<=[{_FULL_WIDTH}])[ \t]+(?=\S)")
_HAN = r"[\u4e00-\u9fff]"
# A half-width parenthesis right after Chinese text, holding no nested parenthesis.
_PARENTHESIS = re.compile(rf"(?<={_HAN})[ \t]*\(([^()\n]*)\)")
# One opening a line (a note such as "(本数据未记录 review…)", or "(org/a：有…)" naming its
# repository first) when it holds Chinese text.
_LEADING_PARENTHESIS = re.compile(rf"^\(([^()\n]*{_HAN}[^()\n]*)\)")
# A half-width space between two Chinese characters ("在 讨论区 提出").
_HAN_SPACE = re.compile(rf"(?<={_HAN})[ \t]+(?={_HAN})")
_BULLET = re.compile(r"^(\s*(?:[-*+•·–]|\d+[.)])\s+)")


# What every rule needs in a line: without it (an English title) the line is left as is.
_CHINESE = re.compile(rf"{_HAN}|[{_FULL_WIDTH}]")


def _line(line: str) -> str:
    if not _CHINESE.search(line):
        return line
    bullet = _BULLET.match(line)
    head, rest = (bullet.group(1), line[bullet.end():]) if bullet else ("", line)
    rest = _LEADING_PARENTHESIS.sub(r"（\1）", _PARENTHESIS.sub(r"（\1）", rest))
    rest = _HAN_SPACE.sub("", rest)
    rest = _SPACE_AFTER.sub("", _SPACE_BEFORE.sub("", rest))
    return head + rest


def typeset(text: str, lang: Lang) -> str:
    """`text` with Chinese spacing rules applied; other languages unchanged."""
    if lang != "zh":
        return text
    return "\n".join(_line(line) for line in text.split("\n"))
