"""Which PRs a team asked to leave out (`exclude` tables of a repository and a channel),
and why: every part of a digest, the notices and the trends count only the rest."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

from bot.config import ExcludeRule
from bot.i18n import translator
from bot.models import Lang, PullRequest, Snapshot
from bot.patterns import found_in
from bot.week import belongs_to_week, week_period

LeftOutBy = Literal["bot", "author", "label", "title"]
"""Why a PR was left out: a bot account (`*[bot]`), a listed author, label or title."""

EVERY_BOT = "*[bot]"


def is_bot(login: str | None) -> bool:
    """A GitHub app account: its login ends `[bot]` (`dependabot[bot]`)."""
    return login is not None and login.lower().endswith("[bot]")


def left_out_by(pull: PullRequest, rules: Iterable[ExcludeRule]) -> LeftOutBy | None:
    """The first rule that leaves `pull` out, or None when it is kept. Logins and labels
    compare case-insensitively, as GitHub's do; titles are searched, not matched whole,
    by RE2 in linear time (`bot.patterns`)."""
    author = (pull.author or "").lower()
    labels = {label.lower() for label in pull.labels}
    for rule in rules:
        for listed in rule.authors:
            if listed == EVERY_BOT and is_bot(pull.author):
                return "bot"
            if listed != EVERY_BOT and listed.lower() == author:
                return "bot" if is_bot(pull.author) else "author"
        if any(label.lower() in labels for label in rule.labels):
            return "label"
        if any(found_in(pattern, pull.title) for pattern in rule.titles):
            return "title"
    return None


def leave_out_of_week(snapshot: Snapshot, rules: Sequence[ExcludeRule], week: str, tz: str
                      ) -> tuple[Snapshot, Counter[LeftOutBy]]:
    """The snapshot without the PRs the rules leave out, and how many of the week's own
    PRs were left out for each reason (a snapshot file may hold other weeks too)."""
    if not any(rules):
        return snapshot, Counter()
    period = week_period(week, tz)
    kept: list[PullRequest] = []
    reasons: Counter[LeftOutBy] = Counter()
    for pull in snapshot.pulls:
        reason = left_out_by(pull, rules)
        if reason is None:
            kept.append(pull)
        elif belongs_to_week(pull, period):
            reasons[reason] += 1
    return msgspec.structs.replace(snapshot, pulls=tuple(kept)), reasons


_REASONS: tuple[tuple[LeftOutBy, str, str], ...] = (
    ("bot", "%(num)d PR by a bot", "%(num)d PRs by bots"),
    ("author", "%(num)d PR by an excluded author", "%(num)d PRs by excluded authors"),
    ("label", "%(num)d PR with an excluded label", "%(num)d PRs with excluded labels"),
    ("title", "%(num)d PR with an excluded title", "%(num)d PRs with excluded titles"),
)


def left_out_note(reasons: Counter[LeftOutBy], lang: Lang) -> str | None:
    """One sentence saying how many PRs were left out and why; None when none were."""
    t = translator(lang)
    items = [t.n(singular, plural, reasons[kind]) for kind, singular, plural in _REASONS
             if reasons[kind]]
    if not items:
        return None
    return t("Left out by the exclude settings: %(items)s.", items=t.join(items))


def excluded_note(lang: Lang) -> str:
    """What an answer about a left-out PR says, so nobody wonders where it went."""
    return translator(lang)("This PR is left out of digests and notices by the exclude "
                            "settings.")
