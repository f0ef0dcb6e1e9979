"""GitHub's GraphQL points: what the fake charges, what a week costs, what the source
keeps of `rateLimit`, and the same PR data however the lists are paged."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from bot.config import Config, RepoConfig
from bot.github.budget import Budget
from bot.github.source import GitHubSource
from bot.models import PullRequest, ReviewThread, ThreadComment
from testkit.clock import VirtualClock
from testkit.fakes.github import FakeGitHub, iter_graphql_queries
from testkit.fakes.github_fixtures import Overflow, build_week, week_snapshot
from testkit.fakes.github_points import query_cost

REPO = "acme/widgets"
WEEK = "2026-W29"
TZ = "Asia/Shanghai"
TOKEN = "ghp_fake_token"
CONFIG = Config(repos={REPO: RepoConfig(timezone=TZ)})


def source(fake: FakeGitHub, **kwargs: object) -> GitHubSource:
    return GitHubSource(CONFIG, token=TOKEN, base_url=fake.base_url,
                        clock=VirtualClock(datetime.now(UTC)), **kwargs)  # type: ignore[arg-type]


# --- the fake charges by GitHub's documented formula -------------------------------------


def test_the_documented_example_costs_51_points() -> None:
    """GitHub's own example: 1 + 100 + 100 x 50 = 5,101 requests, 51 points."""
    query = """query { viewer { login repositories(first: 100) { edges { node { id
      issues(first: 50) { edges { node { id title labels(first: 60) { edges { node {
      id name } } } } } } } } } } }"""
    assert query_cost(query) == 51


def test_a_query_without_connections_costs_one_point_and_variables_count() -> None:
    assert query_cost("query { viewer { login } }") == 1
    nested = ("query($n: Int!) { search(query: \"x\", type: ISSUE, first: $n) { nodes {"
              " ... on PullRequest { reviewThreads(first: 50) { nodes { comments(first: 20)"
              " { nodes { body } } } } } } } }")
    # 1 + 25 + 25 x 50 = 1,276 requests
    assert query_cost(nested, {"n": 25}) == 13


def test_the_fake_refuses_a_query_beyond_what_is_left() -> None:
    with FakeGitHub(token=TOKEN) as fake:
        fake.add_repo(REPO, build_week(REPO, count=3, overflow=None, decoys=0))
        fake.points.remaining = 0
        fake.points.set_reset_in(5)

        class Refilling(VirtualClock):
            def pause(self, seconds: float) -> None:  # the hour passes: the points refill
                super().pause(seconds)
                fake.points.remaining = fake.points.limit

        clock = Refilling(datetime.now(UTC))
        src = GitHubSource(CONFIG, token=TOKEN, base_url=fake.base_url, clock=clock)
        assert len(src.fetch_week(REPO, WEEK).pulls) == 3
        assert len(clock.slept) == 1 and 4 <= clock.slept[0] <= 7


# --- a week's price ----------------------------------------------------------------------


def test_a_week_of_30_prs_costs_a_few_points_and_the_budget_keeps_githubs_answer() -> None:
    with FakeGitHub(token=TOKEN) as fake:
        pulls = build_week(REPO, count=30)  # three PRs with oversized lists
        fake.add_repo(REPO, pulls)
        budget = Budget()
        src = source(fake, budget=budget)
        snapshot = src.fetch_week(REPO, WEEK)
        assert snapshot.pulls == week_snapshot(REPO, pulls, WEEK, TZ).pulls
        spent = sum(fake.points.costs)
        # One search carrying reviewThreads(first: 50) { comments(first: 20) } cost ~40.
        assert spent <= 10
        assert budget.spent == spent
        assert budget.remaining == fake.points.remaining == 5000 - spent
        assert budget.reset_at is not None
        assert abs(budget.reset_at.timestamp() - fake.points.reset_at) < 2
        assert budget.week_cost(REPO) == spent
        # every request asked for the budget
        assert all("rateLimit" in q for q in iter_graphql_queries(fake))


def test_each_fetch_logs_its_price_once(caplog: pytest.LogCaptureFixture) -> None:
    with FakeGitHub(token=TOKEN) as fake:
        fake.add_repo(REPO, build_week(REPO, count=30))
        src = source(fake)
        with caplog.at_level(logging.INFO, logger="bot.github.budget"):
            src.fetch_week(REPO, WEEK)
            src.fetch_pull(REPO, 1004)  # no list beyond its first page
        lines = [r.getMessage() for r in caplog.records if r.name == "bot.github.budget"]
        spent = sum(fake.points.costs)
        assert len(lines) == 2
        assert lines[0].startswith(f"github: {REPO} week cost ")
        assert f"{fake.points.remaining} left" in lines[1]
        assert " pulls cost 1 point(s) in 1 request(s)" in lines[1]
        assert spent == int(lines[0].split(" cost ")[1].split(" ")[0]) + 1


def test_a_budget_short_of_a_repository_waits_for_the_reset() -> None:
    clock = VirtualClock()
    budget = Budget(clock=clock)
    assert not budget.short_of(10)  # nothing known yet: go ahead
    reset = clock.now() + timedelta(seconds=600)
    budget.record({"cost": 3, "remaining": 7, "resetAt": reset.isoformat()})
    assert budget.short_of(10) and not budget.short_of(7)
    assert budget.seconds_to_reset() == pytest.approx(600)
    # an older answer of the same hour arriving late does not raise what is left
    budget.record({"cost": 1, "remaining": 40, "resetAt": reset.isoformat()})
    assert budget.remaining == 7
    clock.advance(601)  # the hour is over: the points have refilled
    assert not budget.short_of(10) and budget.seconds_to_reset() == 0


# --- the same PR data, however it is paged ----------------------------------------------------


def _busy(pull: PullRequest, threads: int, comments: int) -> PullRequest:
    """The PR with `threads` review threads of `comments` comments each."""
    made = tuple(
        ReviewThread(path=f"src/file_{t}.py", line=t + 1, resolved=t % 2 == 0,
                     outdated=t % 3 == 0, comments=tuple(
                         ThreadComment(author="alice", body=f"thread {t} note {c}",
                                       created_at=pull.created_at,
                                       url=f"{pull.url}#discussion_r{t * 1000 + c}")
                         for c in range(comments)))
        for t in range(threads))
    return msgspec.structs.replace(pull, review_threads=made)


def test_prs_with_more_threads_and_comments_than_a_page_come_back_whole() -> None:
    """Threads come 10 a page with 10 comments each; one PR has 23 threads of 12
    comments, another one thread of 31: both come back as served, and only their
    lists are asked for again."""
    pulls = build_week(REPO, count=12, overflow=None, decoys=0)
    pulls[2] = _busy(pulls[2], threads=23, comments=12)
    pulls[5] = _busy(pulls[5], threads=1, comments=31)
    with FakeGitHub(token=TOKEN) as fake:
        fake.add_repo(REPO, pulls)
        got = source(fake).fetch_week(REPO, WEEK)
        expected = week_snapshot(REPO, pulls, WEEK, TZ)
        assert got.pulls == expected.pulls
        by_number = {p.number: p for p in got.pulls}
        assert len(by_number[pulls[2].number].review_threads or ()) == 23
        assert all(len(t.comments) == 12 for t in by_number[pulls[2].number].review_threads or ())
        assert len((by_number[pulls[5].number].review_threads or ())[0].comments) == 31
        more = [q for q in iter_graphql_queries(fake) if q.startswith("query More")]
        assert more, "the overflowing lists were fetched in follow-ups"
        asked = {n for n in (p.number for p in pulls) if any(f"p{n}:" in q for q in more)}
        assert asked <= {pulls[2].number}  # PR lists asked again: only the busy one's


def test_a_page_that_says_there_is_more_is_followed_even_with_tiny_pages() -> None:
    pulls = build_week(REPO, count=6, overflow=Overflow(threads=17, thread_comments=23),
                       decoys=0)
    with FakeGitHub(token=TOKEN, page_cap=3) as fake:
        fake.add_repo(REPO, pulls)
        got = source(fake).fetch_week(REPO, WEEK)
        assert got.pulls == week_snapshot(REPO, pulls, WEEK, TZ).pulls


def test_follow_up_pages_ask_for_no_more_than_is_left() -> None:
    """12 threads: the second page asks for 2, not 100 (threads price their comments)."""
    pulls = build_week(REPO, count=3, overflow=None, decoys=0)
    pulls[0] = _busy(pulls[0], threads=12, comments=2)
    with FakeGitHub(token=TOKEN) as fake:
        fake.add_repo(REPO, pulls)
        source(fake).fetch_week(REPO, WEEK)
        more = [q for q in iter_graphql_queries(fake) if q.startswith("query More")]
        assert len(more) == 1 and "reviewThreads(first: 2, after:" in more[0]


def test_the_week_after_a_reset_is_fetched_at_the_refilled_budget() -> None:
    """An answer from a later hour replaces the last one, whatever it says."""
    budget = Budget()
    early = datetime.now(UTC) + timedelta(minutes=5)
    budget.record({"cost": 1, "remaining": 3, "resetAt": early.isoformat()})
    budget.record({"cost": 1, "remaining": 4999,
                   "resetAt": (early + timedelta(hours=1)).isoformat()})
    assert budget.remaining == 4999


# --- /metrics ------------------------------------------------------------------------------


def _sample(text: str, name: str) -> float:
    line = next(line for line in text.splitlines() if line.startswith(f"{name} "))
    return float(line.split(" ", 1)[1])


def test_the_services_expose_githubs_points_on_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.config import GitHubConfig
    from bot.web.services import build_services

    with FakeGitHub(token=TOKEN) as fake:
        fake.add_repo(REPO, build_week(REPO, count=30))
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        config = msgspec.structs.replace(CONFIG, github=GitHubConfig(api_url=fake.base_url))
        services = build_services(config, background=False, llm=False)
        before = services.metrics.exposition().decode()
        assert _sample(before, "prdigest_github_points_remaining") == -1
        services.process.source.fetch_week(REPO, WEEK)
        text = services.metrics.exposition().decode()
        assert _sample(text, "prdigest_github_points_spent_total") == sum(fake.points.costs)
        assert _sample(text, "prdigest_github_points_remaining") == fake.points.remaining
        reset = _sample(text, "prdigest_github_points_reset_timestamp_seconds")
        assert abs(reset - fake.points.reset_at) < 2
