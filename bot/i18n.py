"""Message catalogs: English message ids, Chinese from `templates/i18n/zh/LC_MESSAGES/*.po`.

Every catalog of a language is merged, so each part of the product keeps its own file.
A chat platform keeps its words with its adapter, under a templates folder of its own
(`<root>/i18n/<lang>/LC_MESSAGES/*.po`); `roots` adds those folders to the core's.

The `.po` files are compiled to `.mo` when the package is built (`hatch_build.py`), so
an installation reads `.mo` files with the standard library alone. In a source checkout
a `.po` newer than its `.mo` (one just edited) is compiled in memory with Babel, a
development tool, so an edit shows without a rebuild.
"""

from __future__ import annotations

import gettext
import io
from decimal import ROUND_HALF_EVEN, Decimal
from functools import cache
from pathlib import Path

from bot.errors import ConfigError
from bot.models import Lang
from bot.resources import template_dir

LANGUAGES: tuple[Lang, ...] = ("zh", "en")


@cache
def translations(lang: Lang, roots: tuple[Path, ...] = ()) -> gettext.NullTranslations:
    """The merged catalog for `lang` of the core's templates and of each of `roots`;
    English is the identity."""
    merged: gettext.NullTranslations = gettext.NullTranslations()
    folders = [root / "i18n" / lang / "LC_MESSAGES" for root in (template_dir(), *roots)]
    for folder in (f for f in folders if f.is_dir()):
        names = sorted({p.stem for pattern in ("*.po", "*.mo") for p in folder.glob(pattern)})
        for name in names:
            part = _catalog(folder / f"{name}.po", lang)
            if isinstance(merged, gettext.GNUTranslations):
                merged.add_fallback(part)
            else:
                merged = part
    return merged


def _catalog(po: Path, lang: Lang) -> gettext.GNUTranslations:
    """One catalog: its compiled `.mo`, or its `.po` compiled now where that is newer
    (an edit in a source checkout) or the only one there."""
    mo = po.with_suffix(".mo")
    if mo.is_file() and not (po.is_file() and po.stat().st_mtime > mo.stat().st_mtime):
        with mo.open("rb") as handle:
            return gettext.GNUTranslations(handle)
    return gettext.GNUTranslations(io.BytesIO(compile_catalog(po, lang)))


def compile_catalog(po: Path, lang: str) -> bytes:
    """The `.mo` bytes of a `.po` file, through Babel (a build and development tool:
    installations read the `.mo` files the build wrote)."""
    try:
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po
    except ImportError:
        raise ConfigError(f"{po}: not compiled (no {po.with_suffix('.mo').name}); catalogs "
                          "are compiled when the package is built - in a source checkout run "
                          "`make setup`") from None
    with po.open("rb") as handle:
        catalog = read_po(handle, locale=lang)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    return buffer.getvalue()


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
    """`43%`: both languages write a whole percentage the same way (CLDR's zh_CN and
    en_US patterns `#,##0%`), rounded half to even as Babel rounds it."""
    whole = (Decimal(str(share)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
    return f"{int(whole):,}%"


def tag_lang(tag: object) -> Lang | None:
    """A platform's language tag for a user (`zh-CN`, `zh-hans`, `en-US`) as a catalog
    language: Chinese for any `zh`, English for any other; None without one."""
    if not isinstance(tag, str) or not tag:
        return None
    return "zh" if tag.lower().startswith("zh") else "en"
