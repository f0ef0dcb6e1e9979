"""Follow-up suggestions, each derived from a risk or a trend of the week."""

from __future__ import annotations

from bot.i18n import Translator, percent
from bot.models import HotFile, NameCount, Risk

MAX_SUGGESTIONS = 6
MAX_FOLLOW_UPS = 3
DOMINANT_SHARE = 0.3
FIX_SHARE = 0.35
HOT_FILE_PULLS = 3


def _refs(numbers: list[int], t: Translator) -> str:
    return t.sep.join(f"#{n}" for n in dict.fromkeys(numbers))


def suggest(
    risks: tuple[Risk, ...],
    topics: tuple[NameCount, ...],
    types: tuple[NameCount, ...],
    hot: tuple[HotFile, ...],
    breaking: list[int],
    t: Translator,
) -> tuple[str, ...]:
    """Most urgent first: known risks, unknown resolutions, approvals, then trends."""
    out: list[str] = []
    known = [r for r in risks if r.resolution != "unknown" and r.severity != "low"]
    for risk in known[:MAX_FOLLOW_UPS]:
        out.append(t("Follow up on #%(pull)d: %(summary)s.", pull=risk.pull,
                     summary=risk.summary))
    unknown = [r.pull for r in risks if r.resolution == "unknown" and r.kind.startswith("thread")]
    if unknown:
        out.append(t("Confirm that the review concerns on %(pulls)s were addressed; whether "
                     "they were resolved before merge is not recorded.", pulls=_refs(unknown, t)))
    unapproved = [r.pull for r in risks if r.kind == "unapproved"]
    if len(unapproved) > 1:
        out.append(t("Require an approving review before merge: %(count)d PRs were merged "
                     "without one (%(pulls)s).", count=len(unapproved), pulls=_refs(unapproved, t)))
    if breaking:
        out.append(t("Announce the breaking changes in the release notes: %(pulls)s.",
                     pulls=_refs(breaking, t)))
    dominant = next((c for c in topics if c.share >= DOMINANT_SHARE and c.count >= 3), None)
    if dominant:
        out.append(t("%(topic)s makes up %(share)s of the week (%(count)d PRs): plan a focused "
                     "regression run for it.", topic=dominant.name,
                     share=percent(dominant.share, t.lang), count=dominant.count))
    for topic in topics:
        if topic.previous is not None and topic.count >= 2 * max(topic.previous, 1) + 1:
            out.append(t("%(topic)s activity rose from %(previous)d to %(count)d PRs: check "
                         "that its owners can keep up with reviews.", topic=topic.name,
                         previous=topic.previous, count=topic.count))
            break
    fixes = next((c for c in types if c.name == "fix"), None)
    if fixes and fixes.share >= FIX_SHARE and fixes.count >= 3:
        out.append(t("Bug fixes are %(share)s of the week (%(count)d PRs): look at where the "
                     "bugs came from and add regression tests.",
                     share=percent(fixes.share, t.lang), count=fixes.count))
    busy = next((h for h in hot if h.pulls >= HOT_FILE_PULLS), None)
    if busy:
        out.append(t("%(path)s was changed by %(count)d PRs (%(pulls)s): add tests around it "
                     "and watch for conflicting changes.", path=busy.path, count=busy.pulls,
                     pulls=_refs(list(busy.numbers), t)))
    return tuple(out[:MAX_SUGGESTIONS])
