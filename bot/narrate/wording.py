"""The engine's own words where narration needs them: its summary sentences (plain
text), which the narrated summary keeps where the model's count, highlights or risk
sentence did not hold, and a theme in its own lines, for a theme whose narrated
sentences were dropped or that leave out PRs the engine's key changes name."""

from __future__ import annotations

import re
from typing import Any

from bot.i18n import Translator
from bot.models import Digest, Theme
from bot.narrate.claims import RECORDED_CLAIMS
from bot.narrate.injection import screen
from bot.narrate.normal import disguised, folded
from bot.render.limits import THEME_ITEMS
from bot.render.markup import markup_for
from bot.render.naming import title_of
from bot.render.templating import environment
from bot.render.typeset import typeset
from bot.render.view import DigestView

_EN_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
_ZH_SENTENCE = re.compile(r"(?<=[。！？])")


def engine_summary(digest: Digest) -> list[str]:
    """The sentences of the engine's summary paragraph: the first states the PR count,
    the last the risk count."""
    module: Any = environment(digest.lang).get_template("common/prose.j2").make_module({})
    paragraph = typeset(str(module.summary(DigestView(digest), markup_for("text"))),
                        digest.lang).strip()
    split = _ZH_SENTENCE if digest.lang == "zh" else _EN_SENTENCE
    return [s.strip() for s in split.split(paragraph) if s.strip()]


def _named(digest: Digest, number: int) -> str:
    """`#N` and how the digest names the PR (its Chinese headline in zh); a title that
    speaks to readers or to a model, hides a link or makes a claim only recorded facts
    may make (deprecated, approved, migrate to…) is left out of narrated prose (the
    engine's own lists still show it, as written, as the PR's title)."""
    key = next((k for k in digest.key_pulls if k.number == number), None)
    entry = next((p for p in digest.pulls if p.number == number), None)
    title = title_of(key) if key else title_of(entry) if entry else ""
    security = bool(entry and entry.security)
    claims = [name for name, (claim, _) in RECORDED_CLAIMS.items()
              if claim.search(folded(title)) and not (name == "security" and security)]
    if screen(title).left_out or disguised(title) or claims:
        title = ""
    return f"#{number} {title}".strip()


def engine_highlights(digest: Digest, numbers: list[int]) -> str:
    """The PRs the engine's summary names that the narrated one does not, in one
    sentence (the key PRs below say what each does)."""
    t = Translator(digest.lang)
    return t("Also notable: %(refs)s.", refs=t.join([f"#{n}" for n in numbers]))


def theme_room(size: int) -> int:
    """Sentences a theme of `size` PRs may take: one, two from 6 PRs, three from 12."""
    return 1 if size < 6 else 2 if size < 12 else 3


def theme_cited(theme: Theme) -> tuple[int, ...]:
    """The PRs the engine's own "key changes" names for a theme (the security theme all
    of its fixes)."""
    return theme.pulls if theme.kind == "security" else theme.pulls[:THEME_ITEMS]


def engine_theme(digest: Digest, theme: Theme) -> str:
    """A theme in the engine's own lines, as one sentence: its size and the PRs the
    engine's key changes name, each by its title."""
    t = Translator(digest.lang)
    lines = t("; ").join(_named(digest, n) for n in theme_cited(theme))
    return t.n("%(theme)s (%(num)s PR): %(lines)s.", "%(theme)s (%(num)s PRs): %(lines)s.",
               len(theme.pulls) + len(theme.others), theme=theme.title, lines=lines)


def engine_also(digest: Digest, theme: Theme, numbers: list[int]) -> str:
    """The PRs of a theme that the engine's key changes name and the narrated sentences
    do not, in the engine's lines."""
    t = Translator(digest.lang)
    lines = t("; ").join(_named(digest, n) for n in numbers)
    return t("Also in %(theme)s: %(lines)s.", theme=theme.title, lines=lines)
