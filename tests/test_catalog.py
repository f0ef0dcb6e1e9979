"""Every message the product can say has its Chinese translation."""

from __future__ import annotations

import re

from babel.messages.extract import extract_from_dir

from bot.i18n import translations
from testkit import ROOT

_METHODS = [
    ("bot/**.py", "python"),
    ("adapters/**.py", "python"),
    ("templates/**.j2", "jinja2"),
    ("templates/**.html", "jinja2"),
]
_JINJA = {"extensions": "jinja2.ext.do,jinja2.ext.loopcontrols"}
_OPTIONS = {"templates/**.j2": _JINJA, "templates/**.html": _JINJA}
_KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "t": None, "n": (1, 2)}


def _messages() -> list[tuple[str, int, str | tuple[str, ...]]]:
    return [
        (filename, lineno, message)
        for filename, lineno, message, _, _ in extract_from_dir(
            str(ROOT), _METHODS, _OPTIONS, keywords=_KEYWORDS
        )
        if message
    ]


def test_messages_are_found() -> None:
    assert len(_messages()) > 50


def test_every_message_has_chinese() -> None:
    zh = translations("zh")
    missing = []
    for filename, lineno, message in _messages():
        msgid = message[0] if isinstance(message, tuple) else message
        translated = (
            zh.ngettext(message[0], message[1], 2) if isinstance(message, tuple) and
            len(message) > 1 else zh.gettext(msgid)
        )
        words = re.sub(r"%\(\w+\)[sd]", "", msgid)
        if translated == msgid and any(c.isalpha() for c in words):
            missing.append(f"{filename}:{lineno}: {msgid!r}")
    assert not missing, "\n".join(missing)
