"""A risk's sentence in the reader's language: what may go wrong first, then who raised
it, where, and whether it was addressed before merge.

"May lose or overwrite data or cause a failure (in `_reissue_inflight_prompts`): raised
by gemini-code-assist[bot] on trainer_base.py; whether it was resolved before merge is
not recorded." A remark on naming, placement or style says so, and is no more than low.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from bot.engine.zh_text import tidy
from bot.i18n import Translator, translator
from bot.models import OUTCOMES, REMARKS, Concern, Lang

# How many outcomes a lead names: the most severe.
LEAD_OUTCOMES = 2
State = Literal["unknown", "unresolved", "outdated", "open"]


def outcome_words(concern: Concern, t: Translator) -> str:
    """What an outcome says may happen, as a verb phrase ("lose or overwrite data")."""
    return _outcomes(t.lang)[concern]


def _asked(concern: Concern, t: Translator) -> str:
    return _asks(t.lang)[concern]


@cache
def _outcomes(lang: Lang) -> dict[Concern, str]:
    """The outcomes' words in `lang`, translated once."""
    t = translator(lang)
    return {
        Concern.SECURITY: t("leave a security hole"),
        Concern.DATA_LOSS: t("lose or overwrite data"),
        Concern.CRASH: t("crash"),
        Concern.OOM: t("run out of memory"),
        Concern.HANG: t("hang"),
        Concern.WRONG_RESULT: t("give wrong results"),
        Concern.FAILURE: t("cause a failure"),
        Concern.BREAKS: t("break what works today"),
        Concern.RACE: t("race under concurrency"),
        Concern.LEAK: t("leak resources"),
        Concern.COMPATIBILITY: t("break compatibility"),
        Concern.PERFORMANCE: t("slow things down"),
    }


@cache
def _asks(lang: Lang) -> dict[Concern, str]:
    """What concerns without an outcome ask for, in `lang`, translated once."""
    t = translator(lang)
    return {
        Concern.QUESTION: t("An open question"),
        Concern.DESIGN: t("A design suggestion"),
        Concern.UNUSED: t("Unused code left in"),
        Concern.NAMING: t("A naming remark"),
        Concern.PLACEMENT: t("A remark on where the code belongs"),
        Concern.STYLE: t("A style remark"),
    }


def either(items: list[str], t: Translator) -> str:
    """Outcomes as alternatives: "lose data or crash" / "丢失数据、崩溃"."""
    return ("、" if t.lang == "zh" else " or ").join(items)


def says_what_may_go_wrong(concerns: tuple[Concern, ...]) -> bool:
    """Whether a risk's lead says what may go wrong (an outcome, or a scope in doubt)."""
    return any(c in OUTCOMES or c == Concern.SCOPE for c in concerns)


def is_remark(concerns: tuple[Concern, ...]) -> bool:
    """A remark on naming, placement, style or unused code, and nothing said to go
    wrong, no scope in doubt, no question ("Better move it to ..." is one)."""
    return any(c in REMARKS for c in concerns) and all(
        c in REMARKS or c == Concern.DESIGN for c in concerns)


# What a concern that names no outcome asks for, the most telling first.
_ASKED_ORDER = (Concern.UNUSED, Concern.NAMING, Concern.PLACEMENT, Concern.STYLE,
                Concern.QUESTION, Concern.DESIGN)


def lead(concerns: tuple[Concern, ...], subjects: tuple[str, ...], scope: str | None,
         t: Translator) -> str:
    """What the concern says may go wrong, the code it names after it."""
    outcomes = [c for c in concerns if c in OUTCOMES][:LEAD_OUTCOMES]
    if outcomes:
        said = t("May %(outcomes)s", outcomes=either([outcome_words(c, t) for c in outcomes], t))
    elif Concern.SCOPE in concerns and scope:
        said = t("The change may cover %(what)s only", what=scope)
    else:
        asked = next((c for c in _ASKED_ORDER if c in concerns), None)
        said = _asked(asked, t) if asked else t("A review concern")
    if subjects:
        said += t(" (in %(names)s)", names=t.sep.join(f"`{name}`" for name in subjects))
    return said


def marked(label: str, said: str, t: Translator) -> str:
    """A review bot's marked finding: its level before the lead."""
    return t("%(label)s finding: %(lead)s", label=label,
             lead=said[:1].lower() + said[1:] if t.lang == "en" else said)


def where_raised(path: str | None, t: Translator) -> str:
    """Where a concern was raised: on a file, or in the PR's conversation."""
    return t("on %(path)s", path=path) if path else t("in the conversation")


def raised(said: str, who: str, where: str, state: State, t: Translator) -> str:
    """The lead, then who raised it, where (`where_raised`), and whether it was addressed."""
    if state == "outdated":
        text = t("%(lead)s: raised by %(who)s %(where)s, left unresolved (outdated by later "
                 "commits)", lead=said, who=who, where=where)
    elif state == "open":
        text = t("%(lead)s: raised by %(who)s %(where)s, still unresolved",
                 lead=said, who=who, where=where)
    elif state == "unresolved":
        text = t("%(lead)s: raised by %(who)s %(where)s, left unresolved at merge",
                 lead=said, who=who, where=where)
    else:
        text = t("%(lead)s: raised by %(who)s %(where)s; whether it was resolved before "
                 "merge is not recorded", lead=said, who=who, where=where)
    return tidy(text) if t.lang == "zh" else text


def in_review(said: str, who: str, comment: bool, t: Translator) -> str:
    """A marked finding in a review or a comment, whose handling is not recorded."""
    if comment:
        return t("%(lead)s: in a comment by %(who)s; whether it was addressed is not "
                 "recorded", lead=said, who=who)
    return t("%(lead)s: in the review by %(who)s; whether it was addressed is not recorded",
             lead=said, who=who)
