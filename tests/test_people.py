"""Who did the week's work: authors, first-time contributors and reviewers as the data
records them, bots never counted, and the People line in the full report."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import msgspec

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.engine.people import people_of
from bot.models import (
    LoginCount,
    People,
    PullRequest,
    Review,
    ReviewThread,
    Snapshot,
    ThreadComment,
    Tie,
)
from bot.render import render_digest
from bot.render.html import PageLinks, render_report_page

MERGED = datetime(2026, 7, 15, 3, tzinfo=UTC)


def pull(number: int, author: str | None, **fields: object) -> PullRequest:
    return PullRequest(number=number, title=f"fix: thing {number}",
                       url=f"https://github.com/o/r/pull/{number}", author=author,
                       state="merged", merged_at=MERGED, closed_at=MERGED, **fields)


def review(author: str, state: str = "APPROVED") -> Review:
    return Review(author=author, state=state)  # type: ignore[arg-type]


def test_authors_are_counted_without_bots_and_named_when_they_led() -> None:
    pulls = [pull(1, "ann"), pull(2, "ann"), pull(3, "bob"), pull(4, "bob"),
             pull(5, "bob"), pull(6, "cy"), pull(7, "dee"), pull(8, "dee"),
             pull(9, "eve"), pull(10, "eve"), pull(11, "dependabot[bot]"),
             pull(12, "renovate[bot]"), pull(13, "Renovate[BOT]"), pull(14, None)]
    people = people_of(pulls, reviews_recorded=False)
    assert people.authors == 5
    # The most active, then the three tied on 2 PRs all named (by login): naming two of
    # them would say they led the third.
    assert people.top_authors == (LoginCount(login="bob", count=3),
                                  LoginCount(login="ann", count=2),
                                  LoginCount(login="dee", count=2),
                                  LoginCount(login="eve", count=2))
    assert people.authors_tie is None
    assert people.bot_pulls == 3
    assert people.first_timers is None and people.reviewers is None


def _week(*authors: str) -> Snapshot:
    return Snapshot(repository="o/r", pulls=tuple(pull(n, a) for n, a in enumerate(authors, 1)))


def test_a_tie_too_large_to_name_is_counted_and_said_as_a_tie() -> None:
    """Four authors with 2 PRs each and one with 3: before, two of the four were named
    as if they led. Now the one who led is named and the four are counted together."""
    week = _week("kai", "kai", "kai", "ann", "ann", "bob", "bob", "cy", "cy", "dee", "dee",
                 "eve", "eve", "fay")
    people = people_of(list(week.pulls), reviews_recorded=False)
    assert people.top_authors == (LoginCount(login="kai", count=3),)
    assert people.authors_tie == Tie(people=5, count=2)
    en = build_digest(week, "2026-W29", repo_config=RepoConfig(), lang="en")
    assert ("7 people authored this week's PRs; the most came from kai (3); 5 more wrote "
            "2 each.") in render_digest(en, "markdown")
    zh = build_digest(week, "2026-W29", repo_config=RepoConfig(), lang="zh")
    assert "本周有 7 位作者提交了 PR，提交最多的是 kai（3）；另有 5 位作者各提交了 2 个。" in (
        render_digest(zh, "markdown"))


def test_a_tie_with_no_leader_is_counted_never_cut() -> None:
    week = _week("ann", "ann", "bob", "bob", "cy", "cy", "dee", "dee", "eve", "eve", "fay")
    people = people_of(list(week.pulls), reviews_recorded=False)
    assert people.top_authors == () and people.authors_tie == Tie(people=5, count=2)
    en = build_digest(week, "2026-W29", repo_config=RepoConfig(), lang="en")
    assert "6 people authored this week's PRs; 5 of them wrote 2 each." in render_digest(
        en, "markdown")


def test_a_tie_that_can_be_named_is_said_as_one() -> None:
    week = _week("kai", "kai", "kai", "ann", "ann", "bob", "bob", "cy")
    en = build_digest(week, "2026-W29", repo_config=RepoConfig(), lang="en")
    assert ("4 people authored this week's PRs; the most came from kai (3); ann and bob "
            "(2 each).") in render_digest(en, "markdown")
    zh = build_digest(week, "2026-W29", repo_config=RepoConfig(), lang="zh")
    assert "提交最多的是 kai（3）；ann 和 bob（各 2 个）。" in render_digest(zh, "markdown")


def test_nobody_is_named_as_leading_when_each_wrote_one_pr() -> None:
    people = people_of([pull(1, "ann"), pull(2, "bob")], reviews_recorded=False)
    assert people.authors == 2 and people.top_authors == ()


def test_first_time_contributors_come_from_the_authors_association() -> None:
    pulls = [pull(1, "ann", author_association="FIRST_TIME_CONTRIBUTOR"),
             pull(2, "ann", author_association="FIRST_TIME_CONTRIBUTOR"),
             pull(3, "bob", author_association="MEMBER"),
             pull(4, "cy", author_association="FIRST_TIMER"),
             pull(5, "app[bot]", author_association="FIRST_TIMER"),
             pull(6, "dee")]
    assert people_of(pulls, reviews_recorded=False).first_timers == ("ann", "cy")
    recorded_none = [pull(1, "bob", author_association="MEMBER")]
    assert people_of(recorded_none, reviews_recorded=False).first_timers == ()


def test_reviewers_count_prs_reviewed_not_the_author_nor_bots_nor_pending() -> None:
    thread = ReviewThread(comments=(ThreadComment(author="ann", body="nit"),
                                    ThreadComment(author="bob", body="done"),
                                    ThreadComment(author="coderabbit[bot]", body="x")))
    pulls = [pull(1, "bob", reviews=(review("ann"), review("ann", "COMMENTED")),
                  review_threads=(thread,)),
             pull(2, "cy", reviews=(review("ann"), review("bob"), review("dee", "PENDING"))),
             pull(3, "ann", reviews=(review("ann"), review("gemini[bot]")))]
    people = people_of(pulls, reviews_recorded=True)
    assert people.reviewers == (LoginCount(login="ann", count=2),
                                LoginCount(login="bob", count=1))


def test_the_full_report_has_the_people_line_and_json_the_people_object() -> None:
    snapshot = Snapshot(repository="o/r", pulls=(
        pull(1, "ann", author_association="FIRST_TIME_CONTRIBUTOR",
             reviews=(review("bob"),)),
        pull(2, "ann", author_association="MEMBER", reviews=(review("bob"),)),
        pull(3, "dependabot[bot]", author_association="NONE")))
    digest = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang="en")
    assert digest.people == People(authors=1, top_authors=(LoginCount(login="ann", count=2),),
                                   first_timers=("ann",),
                                   reviewers=(LoginCount(login="bob", count=2),), bot_pulls=1)
    markdown = render_digest(digest, "markdown")
    assert ("## People\nOnly ann authored PRs this week (2). "
            "First-time contributor: ann. Most active reviewers, by PRs reviewed: bob (2). "
            "1 PR by a bot is not counted.") in markdown
    assert json.loads(render_digest(digest, "json"))["people"]["first_timers"] == ["ann"]
    page = render_report_page(digest, PageLinks())
    assert '<section id="people">' in page and "First-time contributor: ann." in page
    assert "People" not in render_digest(digest, "text")  # off in chat by default
    zh = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang="zh")
    assert "## 参与者\n本周只有 ann 提交了 PR（2 个）。首次贡献者：ann。" in (
        render_digest(zh, "markdown"))


def test_a_login_is_escaped_in_the_report_page_and_markdown() -> None:
    hostile = "<script>alert(1)</script>"
    snapshot = Snapshot(repository="o/r", pulls=(pull(1, hostile), pull(2, hostile)))
    digest = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang="en")
    page = render_report_page(digest, PageLinks())
    assert hostile not in page and "&lt;script&gt;" in page
    assert hostile not in render_digest(digest, "markdown")


def test_a_digest_kept_from_before_people_were_counted_still_renders() -> None:
    snapshot = Snapshot(repository="o/r", pulls=(pull(1, "ann"),))
    digest = msgspec.structs.replace(
        build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang="en"), people=None)
    assert "## People" not in render_digest(digest, "markdown")
