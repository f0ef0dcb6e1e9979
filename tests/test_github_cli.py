"""`prdigest snapshot` and live `prdigest digest` against the fake GitHub and Redis."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.clock import SystemClock
from bot.models import PullRequest
from bot.snapshot import read_snapshot
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week, week_snapshot
from testkit.redis_server import free_port

REPO = "acme/widgets"
WEEK = "2026-W29"
TOKEN = "ghp_fake_token"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        server.add_repo(REPO, build_week(REPO, count=30))
        yield server


def write_config(tmp_path: Path, api_url: str, *, past_ttl: int = 2592000) -> str:
    path = tmp_path / "prdigest.toml"
    path.write_text(f"""
[repos."{REPO}"]
timezone = "Asia/Shanghai"

[repos."acme/secret"]
private = true

[github]
api_url = "{api_url}"
token_env = "TEST_GH_TOKEN"

[cache]
url_env = "TEST_REDIS_URL"
past_week_ttl_seconds = {past_ttl}
""")
    return str(path)


def run(*args: str, env: dict[str, str | None]) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_snapshot_command_writes_the_fixture(fake: FakeGitHub, tmp_path: Path) -> None:
    config = write_config(tmp_path, fake.base_url)
    out = tmp_path / "week.json"
    code, _, err = run("snapshot", REPO, "--week", WEEK, "-o", str(out), "--config", config,
                       env={"TEST_GH_TOKEN": TOKEN})
    assert code == 0, err
    assert err.strip() == f"prdigest: wrote 30 PRs of {REPO} {WEEK} to {out}"
    written = read_snapshot(out)
    expected = week_snapshot(REPO, list(fake.repos[REPO].pulls.values()), WEEK,
                             "Asia/Shanghai")
    for mine, theirs in zip(written.pulls, expected.pulls, strict=True):
        for name in PullRequest.__struct_fields__:
            assert getattr(mine, name) == getattr(theirs, name), f"#{mine.number}.{name}"
    assert {t.resolved for p in written.pulls for t in p.review_threads or ()} == {True, False}
    assert json.loads(out.read_text())["repository"] == REPO


def test_live_digest_is_cached_in_redis(fake: FakeGitHub, tmp_path: Path,
                                        redis_url: str) -> None:
    config = write_config(tmp_path, fake.base_url)
    env: dict[str, str | None] = {"TEST_GH_TOKEN": TOKEN, "TEST_REDIS_URL": redis_url}
    args = ("digest", REPO, "--week", WEEK, "--config", config, "--format", "json")
    code, first, err = run(*args, env=env)
    assert code == 0, err
    cold = fake.count()
    # the week (numbers, PRs, follow-ups: 3 requests) and the week before, one PR there (2)
    assert cold == 5
    code, second, err = run(*args, env=env)
    assert code == 0, err
    assert fake.count() == cold and first == second
    assert json.loads(first)["counts"]["total"] == 30


def test_live_digest_without_redis_asks_github_each_time(fake: FakeGitHub,
                                                         tmp_path: Path) -> None:
    config = write_config(tmp_path, fake.base_url)
    env: dict[str, str | None] = {"TEST_GH_TOKEN": TOKEN, "TEST_REDIS_URL": None}
    args = ("digest", REPO, "--week", WEEK, "--config", config, "--format", "json")
    assert run(*args, env=env)[0] == 0
    assert run(*args, env=env)[0] == 0
    assert fake.count() == 10


def test_live_digest_counts_last_week_in_its_trends(tmp_path: Path) -> None:
    """GitHub answers one week per query (unlike a snapshot file holding several), so the
    CLI must ask for the week before as chat and the schedule do."""
    with FakeGitHub(token=TOKEN) as server:
        server.add_repo(REPO, build_week(REPO, count=30)
                        + build_week(REPO, count=12, week="2026-W28", seed=3, decoys=0,
                                     first_number=2000))
        config = write_config(tmp_path, server.base_url)
        env: dict[str, str | None] = {"TEST_GH_TOKEN": TOKEN, "TEST_REDIS_URL": None}

        def digest(week: str) -> dict[str, Any]:
            code, out, err = run("digest", REPO, "--week", week, "--config", config,
                                 "--format", "json", env=env)
            assert code == 0, err
            return cast(dict[str, Any], json.loads(out))

        this, last = digest(WEEK), digest("2026-W28")
    assert last["counts"]["total"] >= 12  # its own PRs, and a decoy of the week after
    counted_last = {t["name"]: t["count"] for t in last["topics"]}
    assert counted_last, "the week before has PRs on some topic"
    for entry in this["topics"]:
        assert entry["previous"] == counted_last.get(entry["name"], 0), entry["name"]
    assert any(t["previous"] for t in this["topics"])


def test_stale_digest_says_so_with_its_age(fake: FakeGitHub, tmp_path: Path, redis_url: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Fresh for an hour, kept in Redis for two (Redis's own clock): the second run's clock
    # is two hours ahead, so the copy is stale but still kept however slow the machine.
    config = write_config(tmp_path, fake.base_url, past_ttl=3600)
    env: dict[str, str | None] = {"TEST_GH_TOKEN": TOKEN, "TEST_REDIS_URL": redis_url}
    args = ("digest", REPO, "--week", WEEK, "--config", config, "--lang", "en", "--format",
            "text")
    code, fresh, err = run(*args, env=env)
    assert code == 0, err
    assert "could not be reached" not in fresh
    real_now = SystemClock.now
    monkeypatch.setattr(SystemClock, "now",
                        lambda self: real_now(self) + timedelta(hours=2))
    fake.fail_next(100, 502)
    monkeypatch.setattr(time, "sleep", lambda seconds: None)  # no waits between retries
    code, stale, err = run(*args, env=env)
    assert code == 0, err
    note = re.search(r"GitHub could not be reached; this digest uses data cached (\d+) "
                     r"minutes ago\.", stale)
    assert note is not None, stale
    assert int(note[1]) in (120, 121)  # two hours, and the real time between the runs


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("rejected-token", "GitHub rejected the token in $TEST_GH_TOKEN (401 Bad credentials)"),
        ("unknown-repo", "unknown repository acme/nope (it does not exist, or the token "
                         "cannot see it)"),
        ("private-no-token", "acme/secret is private: set $TEST_GH_TOKEN to a GitHub token"),
        ("no-network", "cannot reach GitHub at http://127.0.0.1:"),
    ],
)
@pytest.mark.parametrize("command", ["snapshot", "digest"])
def test_source_errors_are_one_line_with_exit_code_2(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, message: str,
    command: str,
) -> None:
    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    api_url = f"http://127.0.0.1:{free_port()}" if case == "no-network" else fake.base_url
    config = write_config(tmp_path, api_url)
    repo = {"unknown-repo": "acme/nope", "private-no-token": "acme/secret"}.get(case, REPO)
    token = {"rejected-token": "ghp_wrong", "private-no-token": None}.get(case, TOKEN)
    args = ["digest", repo, "--week", WEEK] if command == "digest" else \
        ["snapshot", repo, "--week", WEEK, "-o", str(tmp_path / "out.json")]
    code, out, err = run(*args, "--config", config,
                         env={"TEST_GH_TOKEN": token, "TEST_REDIS_URL": None})
    assert code == 2 and out == ""
    *before, last = err.splitlines()
    assert last.startswith(f"prdigest: error: {message}")
    # A network failure is retried, and says so once when the retries begin.
    assert before == ([f"prdigest: GitHub at {api_url} did not answer (connection refused); "
                       "retrying in 1 s"] if case == "no-network" else [])
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("command", ["snapshot", "digest"])
def test_a_host_that_does_not_resolve_fails_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    # `.invalid` never resolves (RFC 6761).
    config = write_config(tmp_path, "https://api.github.invalid")
    args = ["digest", REPO, "--week", WEEK] if command == "digest" else \
        ["snapshot", REPO, "--week", WEEK, "-o", str(tmp_path / "out.json")]
    code, out, err = run(*args, "--config", config,
                         env={"TEST_GH_TOKEN": TOKEN, "TEST_REDIS_URL": None})
    assert code == 2 and out == ""
    assert err == ("prdigest: error: cannot reach GitHub at https://api.github.invalid "
                   "(host not found)\n")
    assert slept == []
