"""Every message the product can say has its Chinese translation."""

from __future__ import annotations

import gettext
import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir

from adapters.registry import PLATFORMS, PlatformSpec
from bot.i18n import translations
from testkit import ROOT

_JINJA = {"extensions": "jinja2.ext.do,jinja2.ext.loopcontrols"}
_KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "t": None, "n": (1, 2)}
# The core and the adapters outside a platform's package: the core's catalogs.
_CORE = ([("bot/**.py", "python"), ("adapters/*.py", "python"), ("templates/**.j2", "jinja2"),
          ("templates/**.html", "jinja2")],
         {"templates/**.j2": _JINJA, "templates/**.html": _JINJA})
# A platform's package: its code and templates, in the core's catalogs and its own.
_PLATFORM = ([("**.py", "python"), ("templates/**.j2", "jinja2")], {"templates/**.j2": _JINJA})


def _messages(folder: Path, methods: tuple[list[tuple[str, str]], dict[str, dict[str, str]]]
              ) -> list[tuple[str, int, str | tuple[str, ...]]]:
    return [
        (filename, lineno, message)
        for filename, lineno, message, _, _ in extract_from_dir(
            str(folder), methods[0], methods[1], keywords=_KEYWORDS)
        if message
    ]


def _untranslated(messages: list[tuple[str, int, str | tuple[str, ...]]],
                  zh: gettext.NullTranslations) -> list[str]:
    missing = []
    for filename, lineno, message in messages:
        msgid = message[0] if isinstance(message, tuple) else message
        translated = (
            zh.ngettext(message[0], message[1], 2) if isinstance(message, tuple) and
            len(message) > 1 else zh.gettext(msgid)
        )
        words = re.sub(r"%\(\w+\)[sd]", "", msgid)
        if translated == msgid and any(c.isalpha() for c in words):
            missing.append(f"{filename}:{lineno}: {msgid!r}")
    return missing


def test_messages_are_found() -> None:
    assert len(_messages(ROOT, _CORE)) > 50
    # A platform says little of its own (the core lays out every message): how a
    # command is typed there, its command menu.
    assert any(_messages(spec.templates.parent, _PLATFORM) for spec in PLATFORMS)


def test_every_message_of_the_core_has_chinese_in_the_cores_catalogs() -> None:
    assert _untranslated(_messages(ROOT, _CORE), translations("zh")) == []


@pytest.mark.parametrize("spec", PLATFORMS, ids=lambda spec: spec.name)
def test_every_message_of_a_platform_has_chinese_in_its_catalogs(spec: PlatformSpec) -> None:
    zh = translations("zh", (spec.templates,))
    assert _untranslated(_messages(spec.templates.parent, _PLATFORM), zh) == []
