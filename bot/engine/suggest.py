"""Follow-up suggestions, each derived from a risk or a trend of the week.

Each names what it is about: the PR(s), the file or the setting, and what to do. A
trend's share-based advice is the fallback, used only when no key PR backs it.
"""

from __future__ import annotations

import re

import msgspec

from bot.engine.text import cut_words
from bot.i18n import Translator, percent
from bot.models import HotFile, NameCount, Risk

MAX_SUGGESTIONS = 6
MAX_FOLLOW_UPS = 3
DOMINANT_SHARE = 0.3
FIX_SHARE = 0.35
HOT_FILE_PULLS = 3
NAMED_PULLS = 3
NAMED_THREADS = 2
QUOTE_LIMIT = 60
NAMED_SETTINGS = 2
# A setting a PR adds, as its body writes it: a snake_case name or a `--flag` in code,
# with a word nearby that calls it one.
_SETTING = re.compile(r"`(--[a-z][a-z0-9-]+|[a-z][a-z0-9_.]*_[a-z0-9_.]*[a-z0-9])(?:=[^`]*)?`")
_SETTING_WORDS = re.compile(
    r"option|config|flag|setting|parameter|argument|env(?:ironment)? var|\bset\b|"
    r"\benabl\w*|\bdefaults?\b|配置|参数|选项|开关|开启|启用", re.I)
SETTING_WINDOW = 60


class Lead(msgspec.Struct, frozen=True, kw_only=True):
    """A key PR as the suggestions see it: what kind, where, which settings it adds."""

    number: int
    type: str
    topics: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()


def settings_in(body: str | None, limit: int = 2) -> tuple[str, ...]:
    """The settings a PR body names in code (`save_lora_only`, `--max-model-len`) next
    to a word that calls them a setting, in order, at most `limit`."""
    found: list[str] = []
    for match in _SETTING.finditer(body or ""):
        around = (body or "")[max(0, match.start() - SETTING_WINDOW):match.end() + SETTING_WINDOW]
        name = match.group(1)
        if _SETTING_WORDS.search(around) and name not in found:
            found.append(name)
        if len(found) >= limit:
            break
    return tuple(found)


def _refs(numbers: list[int], t: Translator) -> str:
    return t.sep.join(f"#{n}" for n in dict.fromkeys(numbers))


def suggest(
    risks: tuple[Risk, ...],
    topics: tuple[NameCount, ...],
    types: tuple[NameCount, ...],
    hot: tuple[HotFile, ...],
    breaking: list[int],
    t: Translator,
    leads: tuple[Lead, ...] = (),
) -> tuple[str, ...]:
    """Most urgent first: known risks, unknown resolutions, approvals, settings, then
    trends, each naming its PRs."""
    out: list[str] = []
    known = [r for r in risks if r.resolution != "unknown" and r.severity != "low"]
    for risk in known[:MAX_FOLLOW_UPS]:
        out.append(t("Follow up on #%(pull)d: %(summary)s.", pull=risk.pull,
                     summary=risk.summary))
    out.extend(_unknown_threads(risks, t))
    unapproved = [r.pull for r in risks if r.kind == "unapproved"]
    if len(unapproved) > 1:
        out.append(t("Require an approving review before merge: %(count)d PRs were merged "
                     "without one (%(pulls)s).", count=len(unapproved), pulls=_refs(unapproved, t)))
    if breaking:
        out.append(t("Announce the breaking changes in the release notes: %(pulls)s.",
                     pulls=_refs(breaking, t)))
    for lead in [k for k in leads if k.settings][:NAMED_SETTINGS]:
        out.append(t("Document %(settings)s, added by #%(pull)d, in the configuration "
                     "reference and check its default.",
                     settings=t.sep.join(lead.settings),
                     pull=lead.number))
    busy = next((h for h in hot if h.pulls >= HOT_FILE_PULLS), None)
    if busy:
        out.append(t("%(path)s was changed by %(count)d PRs (%(pulls)s): add tests around it "
                     "and watch for conflicting changes.", path=busy.path, count=busy.pulls,
                     pulls=_refs(list(busy.numbers[:NAMED_PULLS + 2]), t)))
    dominant = next((c for c in topics if c.share >= DOMINANT_SHARE and c.count >= 3), None)
    if dominant:
        backing = [k.number for k in leads if dominant.name in k.topics][:NAMED_PULLS]
        share = percent(dominant.share, t.lang)
        out.append(t("%(topic)s makes up %(share)s of the week (%(count)d PRs): run a "
                     "focused %(topic)s regression covering %(pulls)s.", topic=dominant.name,
                     share=share, count=dominant.count, pulls=_refs(backing, t))
                   if backing else
                   t("%(topic)s makes up %(share)s of the week (%(count)d PRs): plan a focused "
                     "regression run for it.", topic=dominant.name, share=share,
                     count=dominant.count))
    for topic in topics:
        if topic.previous is not None and topic.count >= 2 * max(topic.previous, 1) + 1:
            out.append(t("%(topic)s activity rose from %(previous)d to %(count)d PRs: check "
                         "that its owners can keep up with reviews.", topic=topic.name,
                         previous=topic.previous, count=topic.count))
            break
    fixes = next((c for c in types if c.name == "fix"), None)
    if fixes and fixes.share >= FIX_SHARE and fixes.count >= 3:
        backing = [k.number for k in leads if k.type == "fix"][:NAMED_PULLS]
        share = percent(fixes.share, t.lang)
        out.append(t("Bug fixes are %(share)s of the week (%(count)d PRs): make sure %(pulls)s "
                     "each come with a regression test.", share=share, count=fixes.count,
                     pulls=_refs(backing, t))
                   if backing else
                   t("Bug fixes are %(share)s of the week (%(count)d PRs): look at where the "
                     "bugs came from and add regression tests.", share=share,
                     count=fixes.count))
    return tuple(out[:MAX_SUGGESTIONS])


def _unknown_threads(risks: tuple[Risk, ...], t: Translator) -> list[str]:
    """Review concerns whose resolution is not recorded: the first few by PR, file and
    what was asked; the rest together."""
    unknown = [r for r in risks if r.resolution == "unknown" and r.kind.startswith("thread")]
    first_by_pull = {r.pull: r for r in reversed(unknown) if r.path}
    named = [r for r in unknown if first_by_pull.get(r.pull) is r][:NAMED_THREADS]
    out = []
    for risk in named:
        asked = cut_words(risk.quote.rsplit(" … ", 1)[0], QUOTE_LIMIT) if risk.quote else ""
        out.append(t("Check that the review concern on %(path)s in #%(pull)d (“%(asked)s”) "
                     "was addressed; its resolution is not recorded.", path=risk.path,
                     pull=risk.pull, asked=asked)
                   if asked else
                   t("Check that the review concern on %(path)s in #%(pull)d was addressed; "
                     "its resolution is not recorded.", path=risk.path, pull=risk.pull))
    rest = [r.pull for r in unknown if r.pull not in {n.pull for n in named}]
    if rest:
        out.append(t("Confirm that the review concerns on %(pulls)s were addressed; whether "
                     "they were resolved before merge is not recorded.", pulls=_refs(rest, t)))
    return out
