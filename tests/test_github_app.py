"""GitHub App authentication against the fake GitHub: PyGithub's JWT and installation
tokens, for GraphQL and REST, refreshed before they expire; bad keys are clear errors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.config import Config, RepoConfig
from bot.errors import ConfigError, SourceError
from bot.github.source import GitHubSource
from testkit.clock import VirtualClock
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_apps import rsa_key
from testkit.fakes.github_fixtures import build_week, week_snapshot

REPO = "acme/widgets"
WEEK = "2026-W29"
TZ = "Asia/Shanghai"
CONFIG = Config(repos={REPO: RepoConfig(timezone=TZ)})
APP_ID = 4242
INSTALLATION = 77


@pytest.fixture(scope="module")
def keys() -> tuple[str, str]:
    return rsa_key()


@pytest.fixture
def fake(keys: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    for name in ("GITHUB_TOKEN", "GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY",
                 "GITHUB_APP_PRIVATE_KEY_FILE", "GITHUB_APP_INSTALLATION_ID"):
        monkeypatch.delenv(name, raising=False)
    with FakeGitHub(token="ghp_personal") as server:
        server.add_repo(REPO, build_week(REPO, count=30))
        server.apps.add_app(APP_ID, keys[1], {12: "someone-else", INSTALLATION: "acme"})
        yield server


def app_env(monkeypatch: pytest.MonkeyPatch, key: str, *, installation: int | None = None
            ) -> None:
    monkeypatch.setenv("GITHUB_APP_ID", str(APP_ID))
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY", key)
    if installation is not None:
        monkeypatch.setenv("GITHUB_APP_INSTALLATION_ID", str(installation))


def source(fake: FakeGitHub) -> GitHubSource:
    return GitHubSource(CONFIG, base_url=fake.base_url, clock=VirtualClock(datetime.now(UTC)))


def test_an_app_installation_reads_the_week_over_graphql_and_rest(
    fake: FakeGitHub, keys: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_personal")  # set too: the App is used
    app_env(monkeypatch, keys[0], installation=INSTALLATION)
    src = source(fake)
    assert src.mode == "graphql"
    snapshot = src.fetch_week(REPO, WEEK)
    assert snapshot.pulls == week_snapshot(REPO, list(fake.repos[REPO].pulls.values()), WEEK,
                                           TZ).pulls
    _, pull = src.github.requester.requestJsonAndCheck("GET", f"/repos/{REPO}/pulls/1004")
    assert pull["number"] == 1004
    assert fake.apps.exchanges == [INSTALLATION]  # one token for all of it
    used = {r.headers.get("authorization") for r in fake.requests
            if not r.path.startswith("/app/")}
    assert len(used) == 1 and used.pop().startswith("token ghs_")
    assert {r.kind for r in fake.requests if not r.path.startswith("/app/")} == {"graphql",
                                                                                "rest"}
    exchange = next(r for r in fake.requests if r.path.endswith("/access_tokens"))
    assert exchange.headers["authorization"].startswith("Bearer ey")  # a JWT, not the key


def test_without_an_installation_id_the_owners_installation_is_found(
    fake: FakeGitHub, keys: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app_env(monkeypatch, keys[0])
    src = source(fake)
    assert len(src.fetch_week(REPO, WEEK).pulls) == 30
    assert fake.apps.exchanges == [INSTALLATION]
    assert fake.count(path="/app/installations") == 2  # the list, then the exchange


def test_the_key_may_come_from_a_file(fake: FakeGitHub, keys: tuple[str, str],
                                      monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pem = tmp_path / "app.pem"
    pem.write_text(keys[0])
    monkeypatch.setenv("GITHUB_APP_ID", str(APP_ID))
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY_FILE", str(pem))
    monkeypatch.setenv("GITHUB_APP_INSTALLATION_ID", str(INSTALLATION))
    assert len(source(fake).fetch_week(REPO, WEEK).pulls) == 30


def test_installation_tokens_are_renewed_before_they_expire(
    fake: FakeGitHub, keys: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tokens live 21 s here; PyGithub trades again 20 s before expiry, so the second
    fetch, 1.5 s later, gets a new token and no request ever carries an expired one.
    (On a loaded machine the first fetch may outlast its token's first second and
    trade again too: only "the second fetch traded anew" is certain.)"""
    fake.apps.token_seconds = 21
    app_env(monkeypatch, keys[0], installation=INSTALLATION)
    src = source(fake)
    src.fetch_week(REPO, WEEK)
    first = len(fake.apps.exchanges)
    time.sleep(1.5)
    src.fetch_week(REPO, "2026-W28")
    assert first >= 1 and len(fake.apps.exchanges) > first
    assert set(fake.apps.exchanges) == {INSTALLATION}
    assert all(r.status in (200, 201) for r in fake.requests)


def test_a_one_line_env_value_with_escaped_newlines_is_a_key(
    fake: FakeGitHub, keys: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app_env(monkeypatch, keys[0].strip().replace("\n", "\\n"), installation=INSTALLATION)
    assert len(source(fake).fetch_week(REPO, WEEK).pulls) == 30


# --- errors: clear, naming the variable, never showing the key ---------------------------


def test_a_bad_key_names_its_variable_and_never_prints_it(
    fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret_text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecretsecretsecret\n-----END RSA"
    app_env(monkeypatch, secret_text, installation=INSTALLATION)
    with pytest.raises(ConfigError) as caught:
        source(fake)
    message = str(caught.value)
    assert message.startswith("GITHUB_APP_PRIVATE_KEY: not an RSA private key in PEM format")
    assert "secret" not in message and "MIIE" not in message
    assert fake.count() == 0


def test_a_key_github_does_not_know_is_a_rejection_not_a_crash(
    fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    other, _ = rsa_key()
    app_env(monkeypatch, other, installation=INSTALLATION)
    with pytest.raises(SourceError) as caught:
        source(fake).fetch_week(REPO, WEEK)
    message = str(caught.value)
    assert message.startswith("GitHub rejected the token of the GitHub App in $GITHUB_APP_ID"
                              " (401 A JSON web token could not be decoded")
    assert "PRIVATE KEY" not in message and "\n" not in message


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"GITHUB_APP_ID": "my-app"}, "GITHUB_APP_ID: expected the App's numeric id"),
        ({"GITHUB_APP_ID": "1"}, "GITHUB_APP_ID is set: set GITHUB_APP_PRIVATE_KEY"),
        ({"GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY_FILE": "/nonexistent/app.pem"},
         "GITHUB_APP_PRIVATE_KEY_FILE: cannot read /nonexistent/app.pem (No such file"),
    ],
)
def test_incomplete_app_settings_name_the_variable(
    fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match="^" + expected.replace("(", r"\(")):
        source(fake)


def test_an_app_not_installed_on_the_owner_says_so(
    fake: FakeGitHub, keys: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.apps.apps[APP_ID].installations = {12: "someone-else"}
    app_env(monkeypatch, keys[0])
    with pytest.raises(SourceError, match=r"^the GitHub App 4242 is not installed on acme: "
                                          r"install it there, or set GITHUB_APP_INSTALLATION_ID"):
        source(fake).fetch_week(REPO, WEEK)
