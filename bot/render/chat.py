"""The chat digest's length: about 2,500 visible characters (800 in the compact form),
whatever the week's size.

Every chat platform (plain text, Slack, Telegram, Feishu) shows the same chat view:
the top themes, the risks that matter, the key PRs and the suggestions, each item one
short line, the report link near the top. The view is the most generous of `STEPS`
whose plain text fits `BUDGET`; each platform draws those same items in its own markup,
so the chat form arrives whole. Everything else (every risk and theme, the list of
every PR) is the full report's: Markdown, the HTML page, JSON.
"""

from __future__ import annotations

import dataclasses

from bot.models import Digest
from bot.render.limits import Limits
from bot.render.markup import markup_for
from bot.render.templating import render_template
from bot.render.view import DigestView

BUDGET = 2500
# What a platform may show of the chat view: the plain text's budget plus its own
# header facts (repository, period, counts), which the plain text leaves out.
CHAT_CEILING = BUDGET * 11 // 10
TEXT_TEMPLATE = "text/digest.txt.j2"
# (themes, PRs per theme, risks, key PRs, suggestions, characters per line, notable
# features in the summary), most generous first.
# A chat digest names four key PRs at least (six where there is room): the section a
# reader looks for first is never cut to one or two; other sections give way first.
# A line is never cut inside a clause (`DigestView.short`), so a week that needs more
# room gives up items, in this order: a third risk and follow-up, a third PR per theme
# (the security theme lists every fix), the fourth theme, the second risk and
# follow-up, and last the summary's names of features and fixes (the themes and key
# PRs below name them too).
# An English digest takes about twice the characters of the Chinese one for the same
# items, so it reaches the later steps.
_STEP_TABLE = (
    (4, 3, 3, 6, 4, 110, 3),
    (4, 3, 3, 5, 3, 90, 3),
    (4, 3, 2, 4, 3, 80, 2),
    (4, 2, 2, 4, 2, 70, 1),
    (3, 2, 2, 4, 2, 60, 1),
    (3, 2, 1, 4, 1, 60, 1),
    (3, 2, 1, 4, 1, 50, 0),
)
# A digest of several repositories shows each step's items for each of them, so when
# even the tightest step is too long it may go tighter still.
# Their last column: how many security fixes the summary names.
_COMBINED_TABLE = (
    (1, 2, 1, 1, 2, 50, 1, 2),
    (1, 1, 1, 1, 1, 50, 1, 1),
)
# Tighter still, each repository's part of a section is drawn in the compact form's
# lines (a theme with its size, a risk's short text, a key PR's title) and the
# follow-ups are counted once: shorter lines would cut every title to a few words.
# (themes, PR numbers per theme, risks, key PRs, characters per line), as the compact
# table; a third or fourth repository still makes one whole message.
_COMBINED_COMPACT_TABLE = (
    (3, 2, 2, 2, 72),
    (2, 1, 1, 1, 64),
    (1, 1, 1, 1, 56),
    (1, 0, 1, 1, 48),
)

# The compact form (a channel's `style = "compact"`): about 800 visible characters.
COMPACT_BUDGET = 800
COMPACT_CEILING = COMPACT_BUDGET * 11 // 10
# (themes, PR numbers per theme, risks, key PRs, characters per line), most generous
# first: fewer items before shorter lines, so a title is seldom cut. The risks shown
# are the most severe, always at least one (`bot.render.brief`).
_COMPACT_TABLE = (
    (3, 2, 2, 4, 80),
    (3, 1, 2, 3, 72),
    (3, 1, 1, 3, 72),
    (2, 1, 1, 2, 64),
    (2, 0, 1, 2, 56),
)
COMPACT_STEPS = tuple(
    Limits(themes=themes, theme_items=numbers, risks=risks, quick=quick, suggestions=0,
           line=line, chat=True, compact=True)
    for themes, numbers, risks, quick, line in _COMPACT_TABLE
)


def _limits(table: tuple[tuple[int, ...], ...]) -> tuple[Limits, ...]:
    return tuple(
        Limits(themes=themes, theme_items=items, risks=risks, quick=quick,
               suggestions=suggestions, line=line, notable=notable, chat=True,
               security=security[0] if security else None)
        for themes, items, risks, quick, suggestions, line, notable, *security in table
    )


_TABLE_STEPS = _limits(_STEP_TABLE)
# Tighter than every step: the tightest without the line that counts the risks left out.
_TIGHTEST = dataclasses.replace(_TABLE_STEPS[-1], risks_left=False)
# Tighter still, for one repository's week of long English titles: one PR per theme (the
# rest are counted). A digest of several has tighter steps of its own.
STEPS = (*_TABLE_STEPS, _TIGHTEST, dataclasses.replace(_TIGHTEST, theme_items=1))
COMBINED_STEPS = (*_TABLE_STEPS, _TIGHTEST, *_limits(_COMBINED_TABLE), *(
    Limits(themes=themes, theme_items=numbers, risks=risks, quick=quick, suggestions=0,
           line=line, notable=1, chat=True, security=1, compact_parts=True)
    for themes, numbers, risks, quick, line in _COMBINED_COMPACT_TABLE
))
COMBINED_COMPACT_STEPS = COMPACT_STEPS + tuple(
    Limits(themes=themes, theme_items=numbers, risks=risks, quick=quick, suggestions=0,
           line=line, chat=True, compact=True)
    for themes, numbers, risks, quick, line in _COMBINED_COMPACT_TABLE[2:]
)


def visible_length(text: str) -> int:
    """Characters a reader sees in the plain-text digest (line breaks not counted)."""
    return len(text.replace("\n", ""))


def chat_fit(digest: Digest) -> tuple[DigestView, str]:
    """The chat view of `digest` and its plain text: the most generous of `STEPS` whose
    text fits `BUDGET` (of `COMPACT_STEPS` within `COMPACT_BUDGET` for a compact
    channel), found by a binary search (at most four renders of nine steps; a more
    generous step is never shorter), or the tightest step when none fits."""
    if digest.chat_form.style == "compact":
        return _fit(digest, COMBINED_COMPACT_STEPS if digest.parts else COMPACT_STEPS,
                    COMPACT_BUDGET)
    return _fit(digest, COMBINED_STEPS if digest.parts else STEPS, BUDGET)


def _fit(digest: Digest, steps: tuple[Limits, ...], budget: int) -> tuple[DigestView, str]:
    markup = markup_for("text")
    rendered: dict[int, tuple[DigestView, str]] = {}

    def render(index: int) -> tuple[DigestView, str]:
        if index not in rendered:
            view = DigestView(digest, steps[index])
            rendered[index] = (view, render_template(TEXT_TEMPLATE, digest.lang, v=view,
                                                     d=digest, m=markup))
        return rendered[index]

    low, high, best = 0, len(steps) - 1, len(steps) - 1
    while low <= high:
        middle = (low + high) // 2
        if visible_length(render(middle)[1]) <= budget:
            best, high = middle, middle - 1
        else:
            low = middle + 1
    return render(best)


def chat_view(digest: Digest) -> DigestView:
    """The chat view of `digest`: what every chat platform shows (see `chat_fit`)."""
    return chat_fit(digest)[0]
