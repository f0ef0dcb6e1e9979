"""Who did the week's work: its authors, first-time contributors and most active
reviewers, from what the data records; bot accounts are not people and count nowhere."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from bot.engine.exclude import is_bot
from bot.models import LoginCount, People, PullRequest, Tie

# The most active authors and reviewers named; the rest are counted.
TOP = 3
# What GitHub's author association calls someone's first contribution: to this
# repository, or to GitHub at all.
FIRST_TIME = frozenset({"FIRST_TIME_CONTRIBUTOR", "FIRST_TIMER"})


def _person(login: str | None) -> bool:
    return bool(login) and not is_bot(login)


def _top(counts: Counter[str], least: int) -> tuple[tuple[LoginCount, ...], Tie | None]:
    """The most frequent logins (at least `least` each), most first, ties by login; a
    group tied on one count is named whole (up to one name beyond `TOP`) or, too many,
    counted: never cut inside, which would name some as if they led the others."""
    groups: dict[int, list[str]] = {}
    for login, count in sorted(counts.items(), key=lambda item: (-item[1], item[0].lower(),
                                                                   item[0])):
        if count >= least:
            groups.setdefault(count, []).append(login)
    named: list[LoginCount] = []
    for count, logins in groups.items():
        if len(named) >= TOP:
            break
        if len(named) + len(logins) > TOP + 1:
            return tuple(named), Tie(people=len(logins), count=count)
        named += [LoginCount(login=login, count=count) for login in logins]
    return tuple(named), None


def _reviewers_of(pull: PullRequest) -> set[str]:
    """People who reviewed `pull`: submitted a review or wrote in a review thread (the
    author answering in their own thread is not a reviewer)."""
    logins = {r.author for r in pull.reviews or () if r.state != "PENDING"}
    logins |= {c.author for th in pull.review_threads or () for c in th.comments}
    return {login for login in logins if login and _person(login) and login != pull.author}


def people_of(pulls: Sequence[PullRequest], *, reviews_recorded: bool) -> People:
    """The week's people. Top authors are named only when they wrote more than one PR
    (a list of people with one PR each says nothing about who led); first-time
    contributors only where the data records the author's association; reviewers only
    where it records reviews."""
    authors = Counter(p.author for p in pulls if p.author and _person(p.author))
    associations = [p for p in pulls if isinstance(p.author_association, str)]
    first: tuple[str, ...] | None = None
    if associations:
        first = tuple(dict.fromkeys(p.author for p in associations
                                    if p.author and _person(p.author)
                                    and p.author_association in FIRST_TIME))
    reviewers: tuple[LoginCount, ...] | None = None
    reviewers_tie: Tie | None = None
    if reviews_recorded:
        reviewers, reviewers_tie = _top(_count(_reviewers_of(p) for p in pulls), 1)
    top_authors, authors_tie = _top(authors, 2)
    return People(authors=len(authors), top_authors=top_authors, first_timers=first,
                  reviewers=reviewers, authors_tie=authors_tie, reviewers_tie=reviewers_tie,
                  bot_pulls=sum(1 for p in pulls if p.author and is_bot(p.author)))


def _count(groups: Iterable[set[str]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for group in groups:
        counts.update(group)
    return counts
