"""The jinja2 environment of each language, and rendering a template in it.

Chinese output is typeset on the way out (`bot.render.typeset`), so no template or
message has to remember where a half-width space may not go.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from bot.i18n import percent, translations
from bot.models import Lang
from bot.render.markup import code_spans
from bot.render.typeset import typeset
from bot.resources import template_dir


@cache
def environment(lang: Lang, roots: tuple[Path, ...] = ()) -> jinja2.Environment:
    """Templates of `lang`, with `_()`/`ngettext()` from its catalog (newstyle: `%%` for %).
    `roots`: a chat platform's own template folders, searched after the core's (its
    templates import the shared ones, `common/*.j2`), their catalogs merged in."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(template_dir()), *map(str, roots)]),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",),
                                            default_for_string=False),
        extensions=["jinja2.ext.i18n", "jinja2.ext.loopcontrols", "jinja2.ext.do"],
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        # Templates ship with the package; checking their files on every render would
        # put a blocking stat() on the event loop of each reply.
        auto_reload=False,
    )
    catalog = translations(lang, roots)
    env.install_gettext_translations(catalog, newstyle=True)  # type: ignore[attr-defined]
    env.globals["lang"] = lang
    env.globals["code_spans"] = code_spans
    # Chinese runs sentences together; English separates them with a space.
    env.globals["sentence_sep"] = "" if lang == "zh" else " "
    env.filters["percent"] = lambda share: percent(share, lang)
    # A message id held in data rather than written in a template (the headings of
    # `bot.render.sections`): `{{ s.heading|translated }}`. Templates keep `_()` for
    # literal ids, which the catalog checks extract.
    env.filters["translated"] = catalog.gettext
    return env


def render_template(name: str, lang: Lang, *, roots: tuple[Path, ...] = (),
                    **context: Any) -> str:
    return typeset(environment(lang, roots).get_template(name).render(**context), lang)


