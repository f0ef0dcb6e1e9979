"""Follow-up suggestions, each derived from a risk or a trend of the week.

Each names what it is about: the PR(s), the file or the setting, and what to do. A
trend's share-based advice is the fallback, used only when no key PR backs it.
"""

from __future__ import annotations

import re

import msgspec

from bot.engine.areas import is_code
from bot.engine.classify import Classification
from bot.engine.risk_words import LEAD_OUTCOMES, either, is_remark, outcome_words
from bot.i18n import Translator, percent
from bot.models import OUTCOMES, Concern, HotFile, NameCount, PullRequest, Risk, RiskKind

MAX_SUGGESTIONS = 6
MAX_FOLLOW_UPS = 3
DOMINANT_SHARE = 0.3
FIX_SHARE = 0.35
HOT_FILE_PULLS = 3
NAMED_PULLS = 3
NAMED_THREADS = 2
NAMED_SETTINGS = 2
# A setting a PR adds, as its body writes it: a snake_case name or a `--flag` in code,
# with a word nearby that calls it one.
_SETTING = re.compile(r"`(--[a-z][a-z0-9-]+|[a-z][a-z0-9_.]*_[a-z0-9_.]*[a-z0-9])(?:=[^`]*)?`")
_SETTING_WORDS = re.compile(
    r"option|config|flag|setting|parameter|argument|env(?:ironment)? var|\bset\b|"
    r"\benabl\w*|\bdefaults?\b|配置|参数|选项|开关|开启|启用", re.I)
SETTING_WINDOW = 60


class Lead(msgspec.Struct, frozen=True, kw_only=True):
    """A key PR as the suggestions see it: what kind, where, which settings it adds,
    whether it changes a test (`bot.engine.areas.is_test_file`)."""

    number: int
    type: str
    topics: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    tested: bool = False


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


def settings_of(pull: PullRequest, cls: Classification) -> tuple[str, ...]:
    """The settings a new feature or a performance change adds (`settings_in` its body)."""
    return settings_in(pull.body) if cls.type in {"feat", "perf"} else ()


# Files tests are written around: source code, not tests, translations, docs, lock
# files, configuration or workflows ("add tests around en.ts", "Cargo.lock" or
# "context_test.go" asks nothing).
def _named(topic: NameCount) -> str:
    """A topic as the rest of the digest names it to the reader ("NPU", "类型标注")."""
    return topic.label or topic.name


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
    """Most urgent first: review concerns left open or unrecorded, other known risks,
    approvals, settings, then trends. Each is a verb, its object (the PR, the file, the
    setting) and its reason, with no words quoted from the review."""
    out: list[str] = []
    out.extend(_review_follow_ups(risks, t))
    known = [r for r in risks if not r.kind.from_review and r.resolution != "unknown"
             and r.severity != "low"]
    for risk in known[:MAX_FOLLOW_UPS]:
        out.append(t("Follow up on #%(pull)d: %(summary)s.", pull=risk.pull,
                     summary=risk.summary))
    unapproved = [r.pull for r in risks if r.kind == RiskKind.UNAPPROVED]
    if len(unapproved) > 1:
        out.append(t("Require an approving review before merge: %(count)d PRs were merged "
                     "without one (%(pulls)s).", count=len(unapproved), pulls=_refs(unapproved, t)))
    if breaking:
        out.append(t("Announce the breaking changes in the release notes: %(pulls)s.",
                     pulls=_refs(breaking, t)))
    for lead in [k for k in leads if k.settings][:NAMED_SETTINGS]:
        out.append(t("Document %(settings)s, added by #%(pull)d, in the configuration "
                     "reference and check its default.",
                     settings=t.sep.join(f"`{name}`" for name in lead.settings),
                     pull=lead.number))
    busy = next((h for h in hot if h.pulls >= HOT_FILE_PULLS and is_code(h.path)), None)
    if busy:
        # The file by its name: the trends, just before, give its path.
        out.append(t("Add tests around %(path)s and watch for conflicting changes: %(count)d "
                     "PRs changed it this week (%(pulls)s).",
                     path=f"`{busy.path.rsplit('/', 1)[-1]}`",
                     count=busy.pulls, pulls=_refs(list(busy.numbers[:NAMED_PULLS + 2]), t)))
    dominant = next((c for c in topics if c.share >= DOMINANT_SHARE and c.count >= 3), None)
    if dominant:
        backing = [k.number for k in leads if dominant.name in k.topics][:NAMED_PULLS]
        share, named = percent(dominant.share, t.lang), _named(dominant)
        out.append(t("Run a focused %(topic)s regression covering %(pulls)s: %(topic)s makes "
                     "up %(share)s of the week (%(count)d PRs).", topic=named,
                     share=share, count=dominant.count, pulls=_refs(backing, t))
                   if backing else
                   t("Plan a focused %(topic)s regression run: %(topic)s makes up %(share)s "
                     "of the week (%(count)d PRs).", topic=named, share=share,
                     count=dominant.count))
    # A topic new this week has no owners' load to compare with: only growth from a
    # week of its own PRs asks whether they keep up.
    for topic in topics:
        if topic.previous and topic.count >= 2 * topic.previous + 1:
            out.append(t("Check that the %(topic)s owners can keep up with reviews: its "
                         "activity rose from %(previous)d to %(count)d PRs.",
                         topic=_named(topic), previous=topic.previous, count=topic.count))
            break
    fixes = next((c for c in types if c.name == "fix"), None)
    key_fixes = [k for k in leads if k.type == "fix"]
    # The key fixes that change no test; where each changes one, there is nothing to ask.
    untested = [k.number for k in key_fixes if not k.tested][:NAMED_PULLS]
    if fixes and fixes.share >= FIX_SHARE and fixes.count >= 3 and (untested or not key_fixes):
        share = percent(fixes.share, t.lang)
        # One PR and several are two messages, not a plural: Chinese has one plural
        # form, and "都" (each) only reads after several.
        out.append(t("Make sure #%(pull)d comes with a regression test: bug fixes are "
                     "%(share)s of the week (%(fixes)d PRs).", pull=untested[0], share=share,
                     fixes=fixes.count)
                   if len(untested) == 1 else
                   t.n("Make sure %(pulls)s comes with a regression test: bug fixes are "
                       "%(share)s of the week (%(fixes)d PRs).",
                       "Make sure %(pulls)s each come with a regression test: bug fixes are "
                       "%(share)s of the week (%(fixes)d PRs).", len(untested), share=share,
                       fixes=fixes.count, pulls=_refs(untested, t))
                   if untested else
                   t("Look at where the bugs came from and add regression tests: bug fixes "
                     "are %(share)s of the week (%(count)d PRs).", share=share,
                     count=fixes.count))
    return tuple(out[:MAX_SUGGESTIONS])


def _review_follow_ups(risks: tuple[Risk, ...], t: Translator) -> list[str]:
    """Review concerns left open or whose resolution is not recorded, remarks on naming,
    placement and style left out: the first few each as what to do about it, on which
    PR and file, and why; the rest of them together."""
    concerns = [r for r in risks if r.kind.from_review and not is_remark(r.concerns)
                and r.resolution in {"unknown", "unresolved"}]
    first_by_pull = {r.pull: r for r in reversed(concerns)}
    named = [r for r in concerns if first_by_pull.get(r.pull) is r][:NAMED_THREADS]
    out = [_follow_up(risk, t) for risk in named]
    rest = [r.pull for r in concerns if r.pull not in {n.pull for n in named}]
    if rest:
        out.append(t("Confirm that the review concerns on %(pulls)s were addressed.",
                     pulls=_refs(rest, t)))
    return out


def _follow_up(risk: Risk, t: Translator) -> str:
    """What to do about one review concern, by what it says may go wrong, and who says
    so; that it was left open at merge where the data shows it (an unrecorded
    resolution is the data's caveat, said once for the digest, not per suggestion)."""
    where = f"`{risk.path}`" if risk.path else t("the conversation")
    who = risk.author or t("the review")
    outcomes = [c for c in risk.concerns if c in OUTCOMES][:LEAD_OUTCOMES]
    if outcomes:
        # The code the concern names says where to look; else the file it is on.
        what = (t.sep.join(f"`{name}`" for name in risk.subjects) if risk.subjects else
                t("the change to %(where)s", where=where))
        advice = t("Re-check %(what)s in #%(pull)d: %(who)s says it may %(outcomes)s.",
                   what=what, pull=risk.pull, who=who,
                   outcomes=either([outcome_words(c, t) for c in outcomes], t))
    elif Concern.SCOPE in risk.concerns and risk.scope:
        advice = t("Confirm whether what #%(pull)d fixes exists only on %(scope)s: %(who)s "
                   "says the change may cover %(scope)s only.",
                   pull=risk.pull, scope=risk.scope, who=who)
    elif Concern.QUESTION in risk.concerns:
        advice = t("Answer %(who)s's open question on #%(pull)d (%(where)s).",
                   pull=risk.pull, where=where, who=who)
    else:
        advice = t("Weigh %(who)s's suggestion on #%(pull)d (%(where)s).",
                   pull=risk.pull, where=where, who=who)
    if risk.resolution == "unresolved":
        advice += t(" It was left unresolved at merge.")
    return advice
