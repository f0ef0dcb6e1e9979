"""Message catalogs: English message ids, Chinese from `templates/i18n/zh/LC_MESSAGES/*.po`.

Catalogs are read from .po files at first use (no compile step to forget); every .po
file of a language is merged, so each part of the product keeps its own file. A chat
platform keeps its words with its adapter, under a templates folder of its own
(`<root>/i18n/<lang>/LC_MESSAGES/*.po`); `roots` adds those folders to the core's.
"""

from __future__ import annotations

import gettext
import io
from functools import cache
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_percent

from bot.models import Lang
from bot.resources import template_dir

LANGUAGES: tuple[Lang, ...] = ("zh", "en")


@cache
def translations(lang: Lang, roots: tuple[Path, ...] = ()) -> gettext.NullTranslations:
    """The merged catalog for `lang` of the core's templates and of each of `roots`;
    English is the identity."""
    merged: gettext.NullTranslations = gettext.NullTranslations()
    folders = [root / "i18n" / lang / "LC_MESSAGES" for root in (template_dir(), *roots)]
    for path in (p for folder in folders if folder.is_dir() for p in sorted(folder.glob("*.po"))):
        with path.open("rb") as handle:
            catalog = read_po(handle, locale=lang)
        buffer = io.BytesIO()
        write_mo(buffer, catalog)
        buffer.seek(0)
        part = gettext.GNUTranslations(buffer)
        if isinstance(merged, gettext.GNUTranslations):
            merged.add_fallback(part)
        else:
            merged = part
    return merged


class Translator:
    """`t("%(n)d PRs", n=3)` in one language; `t.n(singular, plural, count)` for plurals.
    `roots`: the template folders of the platforms whose words it also speaks."""

    def __init__(self, lang: Lang, roots: tuple[Path, ...] = ()) -> None:
        self.lang = lang
        self._catalog = translations(lang, roots)

    def __call__(self, message: str, **params: object) -> str:
        text = self._catalog.gettext(message)
        return text % params if params else text

    def n(self, singular: str, plural: str, count: int, **params: object) -> str:
        text = self._catalog.ngettext(singular, plural, count)
        return text % {"num": count, **params}

    @property
    def sep(self) -> str:
        """The separator of a plain enumeration: `, ` / `、`."""
        return "、" if self.lang == "zh" else ", "

    def join(self, items: list[str]) -> str:
        """A list in the language's own style: `a, b and c` / `a、b 和 c`."""
        if not items:
            return ""
        if len(items) == 1:
            return items[0]
        sep, last = ("、", " 和 ") if self.lang == "zh" else (", ", " and ")
        return sep.join(items[:-1]) + last + items[-1]


@cache
def translator(lang: Lang, roots: tuple[Path, ...] = ()) -> Translator:
    return Translator(lang, roots)


def percent(share: float, lang: Lang) -> str:
    """`43%` in the language's own number style."""
    return format_percent(share, locale="zh_CN" if lang == "zh" else "en_US")
