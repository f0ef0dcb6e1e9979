"""The GitHub credential pool (`bot.github.pool`, `bot.github.plan`): several tokens and
a GitHub App's installations in one service, each with its own points; every
repository read with a credential that can read it; the prefetch plan within 80% of
every credential's hourly points in every rolling hour; a fetch spread over the pool."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.config import ChannelConfig, Config, GitHubConfig, RepoConfig, parse_config
from bot.delivery.prefetch import prefetch_plan
from bot.errors import ConfigError
from bot.github.budget import Budget
from bot.github.plan import HOUR, Fetch, Lane, pace
from bot.github.pool import PooledSource, github_source, pool_credentials
from bot.github.source import GitHubSource
from bot.models import PullRequest
from bot.week import week_period
from testkit.clock import VirtualClock
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_apps import rsa_key
from testkit.fakes.github_fixtures import build_week, week_snapshot

WEEK = "2026-W29"
TZ = "Asia/Shanghai"
ENV = ("GITHUB_TOKEN", "GITHUB_TOKEN_2", "GITHUB_TOKEN_3", "GITHUB_APP_ID",
       "GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_PRIVATE_KEY_FILE", "GITHUB_APP_INSTALLATION_ID")


@pytest.fixture(autouse=True)
def _no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def busiest_hours(moments: list[tuple[datetime, str, int]]) -> dict[str, int]:
    """The most points each credential spends within any rolling hour."""
    peaks: dict[str, int] = {}
    for lane in {name for _, name, _ in moments}:
        mine = sorted((at, points) for at, name, points in moments if name == lane)
        peaks[lane] = max(sum(p for t, p in mine if end - HOUR < t <= end) for end, _ in mine)
    return peaks


def organisation(repos: int, owners: int = 1) -> Config:
    names = [f"org{n % owners}/r{n}" for n in range(repos)]
    return Config(repos={name: RepoConfig(timezone=TZ) for name in names},
                  channels=tuple(ChannelConfig(platform="slack", id=f"C{n}", repo=name,
                                               timezone=TZ, schedule="0 9 * * MON")
                                 for n, name in enumerate(names)))


FIRE = week_period(WEEK, TZ).until + timedelta(days=7, hours=9)
"""Monday 09:00 in Shanghai, the week after 2026-W29: the week owed is 2026-W30."""


class Learned(Budget):
    """One credential that has measured every repository's week at 8 points (a first
    run: the week in full, the week before for its counts at a third)."""

    def known_week_cost(self, repo: str) -> int | None:
        return 8


def _planned(config: Config, points: Budget | None) -> list[tuple[datetime, str, int]]:
    plan = prefetch_plan(config, config.channels, FIRE - timedelta(hours=6),
                         timedelta(hours=6), points=points)
    return [(p.at, p.credential or "hash", 3 if p.counted else 8) for p in plan]


@pytest.mark.slow  # many CPU seconds: in `make test-all`, not the quick loop
def test_the_first_run_plan_keeps_each_hour_within_80_percent_of_a_token() -> None:
    """2,000 repositories, 11 points each: the hashed spread alone spends nearly all of
    a token's 5,000 in its busiest hour (the first run measured met 5,057); the plan
    keeps every hour within 4,000."""
    config = organisation(2000)
    hashed = busiest_hours(_planned(config, None))["hash"]
    assert hashed > 4900
    planned = _planned(config, Learned(name="GITHUB_TOKEN"))
    assert busiest_hours(planned) == {"GITHUB_TOKEN": pytest.approx(4000, abs=11)}
    assert max(p for p in busiest_hours(planned).values()) <= 4000
    assert len(planned) == 4000 and sum(p for *_, p in planned) == 22000


@pytest.mark.slow  # many CPU seconds: in `make test-all`, not the quick loop
def test_a_pool_of_two_halves_the_plan_and_stays_within_each_tokens_margin() -> None:
    config = organisation(2000)
    one = _planned(config, Learned(name="a"))
    lanes = [Lane("a", 5000, lambda repo: True), Lane("b", 5000, lambda repo: True)]
    fetches = [Fetch(p.repo, p.at, 3 if p.counted else 8) for p in prefetch_plan(
        config, config.channels, FIRE - timedelta(hours=6), timedelta(hours=6))]
    placed = pace(fetches, lanes)
    assert all(where is not None for where in placed)
    moments = [(w.at, w.lane, f.points) for f, w in zip(fetches, placed, strict=True)
               if w is not None]
    peaks = busiest_hours(moments)
    assert set(peaks) == {"a", "b"} and max(peaks.values()) <= 4000
    # Two tokens carry the first run at its hashed moments, none held back; one token
    # has to hold fetches back (its last 30 min or more after the hashed last).
    assert all(w is not None and w.at == f.at for f, w in zip(fetches, placed, strict=True))
    hashed_last = max(f.at for f in fetches)
    assert max(at for at, *_ in one) > hashed_last + timedelta(minutes=30)


def test_an_installation_only_gets_its_owners_repositories() -> None:
    start = datetime(2026, 7, 27, tzinfo=UTC)
    lanes = [Lane("app:org0", 5000, lambda r: r.startswith("org0/")),
             Lane("app:org1", 5000, lambda r: r.startswith("org1/"))]
    fetches = [Fetch(f"org{n % 2}/r{n}", start, 8) for n in range(600)]
    placed = pace(fetches, lanes)
    assert all(w is not None and w.lane == f"app:{f.repo.split('/')[0]}"
               for f, w in zip(fetches, placed, strict=True))
    assert pace([Fetch("elsewhere/x", start, 8)], lanes) == [None]


# --- against the fake GitHub -------------------------------------------------------


@pytest.fixture
def two_tokens(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeGitHub, Config]]:
    config = parse_config({"repos": {"acme/public": {"timezone": TZ},
                                     "acme/secret": {"timezone": TZ, "private": True}},
                           "github": {"token_envs": ["GITHUB_TOKEN_2"]}})
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_first")
    monkeypatch.setenv("GITHUB_TOKEN_2", "ghp_second")
    with FakeGitHub(token="ghp_first", more_tokens=["ghp_second"]) as fake:
        fake.add_repo("acme/public", build_week("acme/public", count=12))
        fake.add_repo("acme/secret", build_week("acme/secret", count=8), private=True,
                      readers=["ghp_second"])
        yield fake, config


def _pool(config: Config, fake: FakeGitHub) -> PooledSource:
    source = github_source(config, base_url=fake.base_url, clock=VirtualClock(datetime.now(UTC)))
    assert isinstance(source, PooledSource)
    return source


def test_a_private_repository_is_read_with_the_token_that_sees_it(
        two_tokens: tuple[FakeGitHub, Config]) -> None:
    fake, config = two_tokens
    pool = _pool(config, fake)
    try:
        expected = week_snapshot("acme/secret", list(fake.repos["acme/secret"].pulls.values()),
                                 WEEK, TZ)
        assert pool.fetch_week("acme/secret", WEEK).pulls == expected.pulls
        first = next(m for m in pool.members if m.credential.name == "GITHUB_TOKEN")
        assert first.unreadable == {"acme/secret"}  # tried once, then passed over
        fake.clear()
        pool.fetch_week("acme/secret", WEEK)
        assert fake.requests_by("ghp_first") == 0 and fake.requests_by("ghp_second") > 0
        status = pool.status()
        assert [s["name"] for s in status] == ["GITHUB_TOKEN", "GITHUB_TOKEN_2"]
        assert status[0]["unreadable"] == ["acme/secret"]
        assert "ghp_" not in repr(status) and "ghp_" not in repr(pool.members[0].credential)
    finally:
        pool.close()


def test_a_credential_short_of_points_hands_the_fetch_to_one_with_points(
        two_tokens: tuple[FakeGitHub, Config]) -> None:
    fake, config = two_tokens
    pool = _pool(config, fake)
    try:
        pool.fetch_week("acme/public", WEEK)  # learns its price, on the first token
        cost = pool.budget.week_cost("acme/public")
        first_token = fake.points_of("ghp_first")
        first_token.remaining = cost - 1  # the rest of its hour is spent elsewhere
        pool.fetch_pulls("acme/public", [1])  # its answer tells the pool so
        fake.clear()
        pool.fetch_week("acme/public", WEEK)
        assert fake.requests_by("ghp_first") == 0 and fake.requests_by("ghp_second") > 0
        assert pool.budget.remaining == (pool.members[0].budget.remaining or 0) + \
            (pool.members[1].budget.remaining or 0)
    finally:
        pool.close()


def test_one_app_installation_per_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    private, public = rsa_key()
    monkeypatch.setenv("GITHUB_APP_ID", "4242")
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY", private)
    config = Config(repos={"acme/a": RepoConfig(timezone=TZ),
                           "umbrella/b": RepoConfig(timezone=TZ)})
    assert [c.name for c in pool_credentials(config)] == ["app:acme", "app:umbrella"]
    with FakeGitHub(token=None) as fake:
        fake.apps.add_app(4242, public, {11: "acme", 22: "umbrella", 33: "third"})
        fake.add_repo("acme/a", build_week("acme/a", count=5))
        fake.add_repo("umbrella/b", build_week("umbrella/b", count=5))
        pool = _pool(config, fake)
        try:
            assert len(pool.fetch_week("acme/a", WEEK).pulls) > 0
            assert len(pool.fetch_week("umbrella/b", WEEK).pulls) > 0
        finally:
            pool.close()
        assert sorted(fake.apps.exchanges) == [11, 22]  # each owner's own installation
        assert [m.serves("umbrella/b") for m in pool.members] == [False, True]


def test_one_credential_is_the_plain_source() -> None:
    assert isinstance(github_source(Config()), GitHubSource)


@pytest.mark.parametrize(("envs", "message"), [
    (["GITHUB_TOKEN"], "github.token_envs[0]: GITHUB_TOKEN is named twice"),
    (["T2", "T2"], "github.token_envs[1]: T2 is named twice"),
    (["not a name"], "github.token_envs[0]: expected the name of an environment variable"),
])
def test_the_token_variables_are_checked_at_load(envs: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_config({"github": {"token_envs": envs}})
    assert GitHubConfig().token_envs == ()


def test_chat_lookups_go_to_the_credential_that_reads_each_repository(
        two_tokens: tuple[FakeGitHub, Config]) -> None:
    fake, config = two_tokens
    opened_at = datetime(2026, 7, 20, 8, tzinfo=UTC)
    fake.add_repo("acme/public", [PullRequest(number=901, title="waiting here", state="open",
                                              url="u901", created_at=opened_at)])
    fake.add_repo("acme/secret", [PullRequest(number=902, title="waiting there", state="open",
                                              url="u902",
                                              created_at=opened_at - timedelta(days=1))],
                  private=True, readers=["ghp_second"])
    pool = _pool(config, fake)
    try:
        found = pool.repository("acme/secret")
        assert found is not None and found.private
        assert pool.repository("acme/nowhere") is None
        fake.clear()
        queue = pool.review_queue(["acme/public", "acme/secret"])
        # One search per credential the repositories need, merged oldest first.
        assert [(p.repository, p.number) for p in queue.pulls] == [
            ("acme/secret", 902), ("acme/public", 901)]
        assert queue.total == 2
        assert fake.requests_by("ghp_first") == 1 and fake.requests_by("ghp_second") == 1
    finally:
        pool.close()
