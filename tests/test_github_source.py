"""The GitHub source against the fake GitHub: the real PyGithub, no network."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from bot.config import Config, GitHubConfig, RepoConfig
from bot.errors import SourceError
from bot.github.policy import RetrySettings
from bot.github.source import GitHubSource
from bot.models import PullRequest, Snapshot
from bot.snapshot import read_snapshot, write_snapshot
from testkit.clock import VirtualClock
from testkit.fakes.github import FakeGitHub, iter_graphql_queries
from testkit.fakes.github_fixtures import Overflow, build_week, github_complete, week_snapshot
from testkit.redis_server import free_port

REPO = "acme/widgets"
WEEK = "2026-W29"
TZ = "Asia/Shanghai"
TOKEN = "ghp_fake_token"


def config(tz: str = TZ, **github: object) -> Config:
    return Config(
        repos={REPO: RepoConfig(timezone=tz), "acme/secret": RepoConfig(private=True)},
        github=GitHubConfig(**github),  # type: ignore[arg-type]
    )


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


def github_clock() -> VirtualClock:
    """A virtual clock at this whole second: the fake GitHub's reset times are real
    epoch seconds, and the source's waits pass at once, recorded in `slept`."""
    return VirtualClock(datetime.now(UTC).replace(microsecond=0))


def source(fake: FakeGitHub, *, token: str | None = TOKEN, cfg: Config | None = None,
           **kwargs: object) -> tuple[GitHubSource, list[float]]:
    clock = github_clock()
    src = GitHubSource(cfg or config(), token=token, base_url=fake.base_url,
                       clock=clock, **kwargs)  # type: ignore[arg-type]
    return src, clock.slept


def without_resolution(pull: PullRequest) -> PullRequest:
    """What REST can tell: threads without resolved/outdated."""
    return msgspec.structs.replace(pull, review_threads=tuple(
        msgspec.structs.replace(t, resolved=None, outdated=None)
        for t in pull.review_threads or ()))


def assert_same_pulls(got: Snapshot, expected: Snapshot) -> None:
    """Field by field, so a failure names the PR and the field."""
    assert [p.number for p in got.pulls] == [p.number for p in expected.pulls]
    for mine, theirs in zip(got.pulls, expected.pulls, strict=True):
        for name in PullRequest.__struct_fields__:
            assert getattr(mine, name) == getattr(theirs, name), f"#{mine.number}.{name}"


def pages(count: int, size: int = 100) -> int:
    return max(1, math.ceil(count / size))


def graphql_cold_requests(expected: Snapshot, *, follow_ups: int) -> int:
    """Pages of numbers from both searches at once, then the PRs 50 at a time."""
    closed = sum(p.state != "open" for p in expected.pulls)
    opened = len(expected.pulls) - closed
    return (max(pages(closed, 100), pages(opened, 100)) + pages(len(expected.pulls), 50)
            + follow_ups)


def rest_cold_requests(expected: Snapshot) -> int:
    """Searches, then pull, files, reviews, review comments, issue comments, status and
    check runs for each PR, one request per page of 100."""
    closed = sum(p.state != "open" for p in expected.pulls)
    total = pages(closed) + pages(len(expected.pulls) - closed)
    for p in expected.pulls:
        thread_comments = sum(len(t.comments) for t in p.review_threads or ())
        total += (1 + pages(len(p.files)) + pages(len(p.reviews or ()))
                  + pages(thread_comments) + pages(len(p.comments or ())) + 1 + 1)
    return total


# --- the snapshot equals the fixture ------------------------------------------------------


def test_graphql_week_equals_fixture_field_by_field(fake: FakeGitHub, tmp_path: Path) -> None:
    pulls = build_week(REPO, count=30)
    fake.add_repo(REPO, pulls)
    src, sleeps = source(fake)
    snapshot = src.fetch_week(REPO, WEEK)
    expected = week_snapshot(REPO, pulls, WEEK, TZ)

    assert_same_pulls(snapshot, expected)
    threads = [t for p in snapshot.pulls for t in p.review_threads or ()]
    assert {t.resolved for t in threads} == {True, False}
    assert {t.outdated for t in threads} == {True, False}
    # written and read back, the file still holds the fixture
    path = tmp_path / "week.json"
    write_snapshot(snapshot, path)
    assert_same_pulls(read_snapshot(path), expected)
    assert json.loads(path.read_text())["format"] == "prdigest.snapshot/1"
    # one page of both searches, one of PRs, one round of follow-ups for the overflow
    assert fake.count() == graphql_cold_requests(expected, follow_ups=1) == 3
    assert fake.count("rest") == 0
    assert sleeps == []


def test_every_overflowing_list_is_paginated(fake: FakeGitHub) -> None:
    overflow = Overflow(files=250, threads=120, thread_comments=130, comments=230,
                        reviews=160, labels=45)
    pulls = build_week(REPO, count=8, overflow=overflow)
    fake.add_repo(REPO, pulls)
    src, _ = source(fake)
    snapshot = src.fetch_week(REPO, WEEK)
    expected = week_snapshot(REPO, pulls, WEEK, TZ)
    assert_same_pulls(snapshot, expected)
    big = {p.number: p for p in snapshot.pulls}
    assert len(big[1000].files) == 250 and len(big[1000].labels) == 45
    assert len(big[1001].review_threads or ()) == 120
    assert len((big[1001].review_threads or ())[0].comments) == 130
    assert len(big[1002].comments or ()) == 230 and len(big[1002].reviews or ()) == 160
    # 1 search + 1 page of PRs + 2 rounds of follow-ups (pages 2 and 3 of the longest
    # lists), batched
    assert fake.count() == 4


def test_small_pages_still_give_the_whole_week(fake: FakeGitHub) -> None:
    """With GitHub answering pages of 7, every connection needs several follow-ups."""
    pulls = build_week(REPO, count=30)
    fake.add_repo(REPO, pulls)
    fake.page_cap = 7
    src, _ = source(fake)
    expected = week_snapshot(REPO, pulls, WEEK, TZ)
    assert_same_pulls(src.fetch_week(REPO, WEEK), expected)
    queries = list(iter_graphql_queries(fake))
    assert sum("search(" in q for q in queries) == 4  # ceil(26 closed / 7)
    # follow-ups are batched: far fewer requests than PRs with a next page
    assert len(queries) < 30


def test_rest_fallback_gives_the_same_week_without_resolution(fake: FakeGitHub) -> None:
    pulls = build_week(REPO, count=30)
    fake.add_repo(REPO, pulls)
    src, _ = source(fake, token=None)
    assert src.mode == "rest"
    snapshot = src.fetch_week(REPO, WEEK)
    expected = week_snapshot(REPO, pulls, WEEK, TZ)
    assert_same_pulls(snapshot, Snapshot(
        repository=REPO, pulls=tuple(without_resolution(p) for p in expected.pulls)))
    assert all(t.resolved is None for p in snapshot.pulls for t in p.review_threads or ())
    assert fake.count("graphql") == 0
    assert fake.count() == rest_cold_requests(expected)
    assert all("authorization" not in r.headers for r in fake.requests)


def test_week_follows_the_repository_time_zone(fake: FakeGitHub) -> None:
    """Merged 2026-07-19T16:40Z: week 30 in Shanghai, week 29 in UTC."""
    late = msgspec.structs.replace(
        build_week(REPO, count=1, overflow=None, decoys=0)[0], state="merged",
        merged_at=datetime(2026, 7, 19, 16, 40, tzinfo=UTC),
        closed_at=datetime(2026, 7, 19, 16, 40, tzinfo=UTC),
        created_at=datetime(2026, 7, 18, tzinfo=UTC))
    fake.add_repo(REPO, [late])
    shanghai, _ = source(fake)
    utc, _ = source(fake, cfg=config(tz="UTC"))
    assert [p.number for p in shanghai.fetch_week(REPO, "2026-W29").pulls] == []
    assert [p.number for p in shanghai.fetch_week(REPO, "2026-W30").pulls] == [late.number]
    assert [p.number for p in utc.fetch_week(REPO, "2026-W29").pulls] == [late.number]
    searched = [v["q0"] for v in (r.json()["variables"] for r in fake.requests) if "q0" in v]
    assert searched[0] == (f"repo:{REPO} is:pr is:closed "
                           "closed:2026-07-12T16:00:00+00:00..2026-07-19T15:59:59+00:00")


def test_progress_reports_each_page(fake: FakeGitHub) -> None:
    fake.add_repo(REPO, build_week(REPO, count=60, overflow=None))
    seen: list[tuple[int, int]] = []
    src = GitHubSource(config(), token=TOKEN, base_url=fake.base_url,
                       progress=lambda done, total: seen.append((done, total)))
    snapshot = src.fetch_week(REPO, WEEK)
    assert seen[-1] == (len(snapshot.pulls), len(snapshot.pulls))
    assert len(seen) == fake.count() and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_fetch_pull_and_missing_pull(fake: FakeGitHub) -> None:
    pulls = build_week(REPO, count=5)
    fake.add_repo(REPO, pulls)
    for token in (TOKEN, None):
        src, _ = source(fake, token=token)
        pull = src.fetch_pull(REPO, 1001)
        assert pull is not None
        expected = pulls[1] if token else without_resolution(pulls[1])
        assert pull == expected
        assert src.fetch_pull(REPO, 99999) is None


@pytest.mark.realdata
def test_real_week_round_trips(fake: FakeGitHub, shared_data: Path) -> None:
    """verl's week 29 (Asia/Shanghai) served by the fake comes back as recorded, once
    the values GitHub always has (creation times, comment URLs) are filled in."""
    recorded = read_snapshot(shared_data / "verl-2026-07.json")
    served = [github_complete(p) for p in recorded.pulls]
    fake.add_repo("verl-project/verl", served)
    cfg = Config(repos={"verl-project/verl": RepoConfig(timezone="Asia/Shanghai")})
    src = GitHubSource(cfg, token=TOKEN, base_url=fake.base_url)
    snapshot = src.fetch_week("verl-project/verl", "2026-W29")
    expected = week_snapshot("verl-project/verl", served, "2026-W29", "Asia/Shanghai")
    assert len(snapshot.pulls) == 28
    assert_same_pulls(snapshot, expected)
    assert fake.count() == 2  # 28 PRs: one page of numbers, one of PRs
    w30 = src.fetch_week("verl-project/verl", "2026-W30")
    assert len(w30.pulls) == 24


# --- errors: one line each ------------------------------------------------------------


def test_unknown_repository(fake: FakeGitHub) -> None:
    fake.add_repo(REPO, [])
    for token in (TOKEN, None):
        src, _ = source(fake, token=token)
        with pytest.raises(SourceError, match=r"^unknown repository acme/nope \("):
            src.fetch_week("acme/nope", WEEK)


def test_rejected_token(fake: FakeGitHub) -> None:
    fake.add_repo(REPO, [])
    src, sleeps = source(fake, token="ghp_wrong")
    with pytest.raises(SourceError, match=r"GitHub rejected the token given \(401 Bad cred"):
        src.fetch_week(REPO, WEEK)
    assert fake.count() == 1 and sleeps == []


def test_token_from_the_configured_env_var(fake: FakeGitHub,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    fake.add_repo(REPO, [])
    monkeypatch.setenv("MY_GH_TOKEN", "ghp_wrong")
    cfg = msgspec.structs.replace(config(), github=GitHubConfig(token_env="MY_GH_TOKEN"))
    src = GitHubSource(cfg, base_url=fake.base_url)
    assert src.mode == "graphql"
    with pytest.raises(SourceError, match=r"rejected the token in \$MY_GH_TOKEN"):
        src.fetch_week(REPO, WEEK)
    monkeypatch.delenv("MY_GH_TOKEN")
    assert GitHubSource(cfg, base_url=fake.base_url).mode == "rest"


def test_private_repository_needs_a_token(fake: FakeGitHub) -> None:
    src, _ = source(fake, token=None)
    with pytest.raises(SourceError, match=r"acme/secret is private: set \$GITHUB_TOKEN"):
        src.fetch_week("acme/secret", WEEK)
    assert fake.count() == 0


def test_bad_repository_name(fake: FakeGitHub) -> None:
    src, _ = source(fake)
    with pytest.raises(SourceError, match="owner/name"):
        src.fetch_week("widgets", WEEK)


def test_no_network_is_retried_then_one_line() -> None:
    clock = VirtualClock()
    src = GitHubSource(config(), token=TOKEN, base_url=f"http://127.0.0.1:{free_port()}",
                       clock=clock)
    with pytest.raises(SourceError) as caught:
        src.fetch_week(REPO, WEEK)
    assert str(caught.value).startswith("cannot reach GitHub at http://127.0.0.1:")
    assert "connection refused" in str(caught.value) and "\n" not in str(caught.value)
    assert clock.slept == [1.0, 2.0, 4.0]


# --- retries and rate limits --------------------------------------------------------------


@pytest.mark.parametrize("token", [TOKEN, None], ids=["graphql", "rest"])
@pytest.mark.parametrize(
    ("arrange", "waits"),
    [
        (lambda f: f.fail_next(2, 502), [1.0, 2.0]),
        (lambda f: f.fail_next(1, 503), [1.0]),
        (lambda f: f.rate_limit_next(kind="primary", reset_in=30), [31.0]),
        (lambda f: f.rate_limit_next(kind="secondary", retry_after=7), [7.0]),
        (lambda f: f.rate_limit_next(kind="primary", reset_in=20, retry_after=3), [3.0]),
    ],
    ids=["502x2", "503", "403-primary", "429-retry-after", "403-retry-after"],
)
def test_transient_failures_are_waited_out(fake: FakeGitHub, token: str | None,
                                           arrange: object, waits: list[float]) -> None:
    pulls = build_week(REPO, count=3, overflow=None, decoys=0)
    fake.add_repo(REPO, pulls)
    src, sleeps = source(fake, token=token)
    arrange(fake)  # type: ignore[operator]
    snapshot = src.fetch_week(REPO, WEEK)
    assert [p.number for p in snapshot.pulls] == [p.number for p in pulls]
    assert sleeps == pytest.approx(waits, abs=1.0)
    failed = [r.status for r in fake.requests if r.status != 200]
    assert len(failed) == len(waits)


def test_graphql_rate_limited_error_is_a_rate_limit(fake: FakeGitHub) -> None:
    fake.add_repo(REPO, build_week(REPO, count=3, overflow=None, decoys=0))
    src, sleeps = source(fake)
    fake.rate_limit_next(kind="graphql", reset_in=10)
    assert len(src.fetch_week(REPO, WEEK).pulls) == 3
    assert len(sleeps) == 1 and 9 <= sleeps[0] <= 12


@pytest.mark.parametrize("kind", ["primary", "secondary", "graphql"])
def test_far_reset_fails_at_once_naming_the_reset(fake: FakeGitHub, kind: str) -> None:
    fake.add_repo(REPO, [])
    src, sleeps = source(fake, retry=RetrySettings(max_wait_seconds=60))
    fake.rate_limit_next(kind=kind, reset_in=1800)
    with pytest.raises(SourceError) as caught:
        src.fetch_week(REPO, WEEK)
    message = str(caught.value)
    assert message.startswith("GitHub rate limit reached")
    assert " UTC, in about 30 min" in message
    reset = message.split("resets at ")[1][:19]
    expected = datetime.now(UTC).timestamp() + 1800
    assert abs(datetime.fromisoformat(reset + "+00:00").timestamp() - expected) < 5
    assert sleeps == [] and fake.count() == 1


def test_spent_budget_waits_before_the_next_request(fake: FakeGitHub) -> None:
    """An answer saying 0 remaining makes the source wait for the reset, not for a 403."""
    fake.add_repo(REPO, build_week(REPO, count=3, overflow=None, decoys=0))
    fake.rate_budget = 1
    fake.rate_reset_in = 20

    class Refilling(VirtualClock):
        def pause(self, seconds: float) -> None:  # time passes: the budget is refilled
            super().pause(seconds)
            fake.rate_budget = 100

    clock = Refilling(datetime.now(UTC))
    src = GitHubSource(config(), token=None, base_url=fake.base_url, clock=clock)
    assert len(src.fetch_week(REPO, WEEK).pulls) == 3
    assert len(clock.slept) == 1 and 19 <= clock.slept[0] <= 22
    assert all(r.status == 200 for r in fake.requests)


def test_too_many_5xx_is_one_line(fake: FakeGitHub) -> None:
    fake.add_repo(REPO, [])
    src, sleeps = source(fake)
    fake.fail_next(10, 500)
    with pytest.raises(SourceError, match=r"^GitHub keeps failing \(500 .*\) after 4 attempts"):
        src.fetch_week(REPO, WEEK)
    assert sleeps == [1.0, 2.0, 4.0] and fake.count() == 4


def test_timeouts_are_retried(fake: FakeGitHub) -> None:
    fake.add_repo(REPO, build_week(REPO, count=2, overflow=None, decoys=0))
    src, sleeps = source(fake, cfg=config(timeout_seconds=1.0))
    fake.stall_next(1, 1.6)
    assert len(src.fetch_week(REPO, WEEK).pulls) == 2
    assert sleeps == [1.0]


@pytest.mark.parametrize("token", [TOKEN, None], ids=["graphql", "rest"])
def test_every_request_is_reported_for_metrics(fake: FakeGitHub, token: str | None) -> None:
    fake.add_repo(REPO, build_week(REPO, count=10))
    seen: list[tuple[str, int | str]] = []
    src = GitHubSource(config(), token=token, base_url=fake.base_url, clock=VirtualClock(),
                       on_request=lambda api, status: seen.append((api, status)))
    fake.fail_next(1, 502)
    src.fetch_week(REPO, WEEK)
    kind = "graphql" if token else "rest"
    assert seen == [(kind, 502)] + [(kind, 200)] * (fake.count() - 1)


@pytest.mark.parametrize("token", [TOKEN, None], ids=["graphql", "rest"])
def test_more_than_github_search_returns_is_an_error_not_a_cut(fake: FakeGitHub,
                                                               token: str | None) -> None:
    fake.add_repo(REPO, build_week(REPO, count=1200, overflow=None, decoys=0))
    src, _ = source(fake, token=token)
    with pytest.raises(SourceError, match=r"PRs match one search of the week, but GitHub "
                                          r"search returns at most 1000"):
        src.fetch_week(REPO, WEEK)


@pytest.mark.parametrize("url", ["nonsense", "ftp://example.com", "http://"])
def test_bad_api_url_is_one_line(url: str) -> None:
    with pytest.raises(SourceError, match=r"^github.api_url: expected an http\(s\) URL"):
        GitHubSource(config(api_url=url), token=TOKEN)


def test_the_rest_fallback_searches_with_githubs_advanced_search(fake: FakeGitHub) -> None:
    """GitHub is removing the legacy `GET /search/issues`; the fake refuses it, as GitHub
    will, so every search here must be the advanced one."""
    import httpx

    fake.add_repo(REPO, build_week(REPO, count=5))
    src, _ = source(fake, token=None)
    src.fetch_week(REPO, WEEK)
    searches = [r for r in fake.requests if r.path.endswith("/search/issues")]
    assert len(searches) == 2
    assert all(r.query.get("advanced_search") == ["true"] for r in searches)
    assert all(r.status == 200 for r in searches)
    legacy = httpx.get(f"{fake.base_url}/search/issues", params={"q": f"repo:{REPO} is:pr"})
    assert legacy.status_code == 422 and "advanced_search" in legacy.text
