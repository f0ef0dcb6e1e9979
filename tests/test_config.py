"""The config file: validated at load, every error names its field."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.registry import PLATFORM_SCHEMAS, PLATFORMS, load_settings
from adapters.slack.settings import slack_settings
from bot.config import load_config
from bot.errors import ConfigError
from testkit import EXAMPLES


def test_example_config_loads() -> None:
    config = load_config(EXAMPLES / "prdigest.toml")
    repo = config.repo("acme/lumen")
    assert repo.timezone == "Asia/Shanghai"
    assert "npu" in repo.topics
    assert [c.key for c in config.channels] == [
        "slack:C0123456", "telegram:-1001234567890", "feishu:oc_0123456789abcdef",
    ]


def test_unconfigured_repository_gets_defaults() -> None:
    assert load_config(None).repo("a/b").timezone == "Asia/Shanghai"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[repos."a/b"]\ntimezone = 5\n', "repos.'a/b'.timezone: expected str, got int"),
        ('[repos."a/b"]\ntimezone = "Mars/Olympus"\n', "repos.'a/b'.timezone: unknown time zone"),
        ('[repos."a/b".topics]\nnpu = { keywordz = ["x"] }\n',
         "repos.'a/b'.topics.npu: unknown field 'keywordz'"),
        ('[repos."a/b".topics]\nnpu = {}\n', "repos.'a/b'.topics.npu: give keywords"),
        ('[repos."ab"]\n', "repository must be written owner/name"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "irc"\nid = "x"\nrepo = "a/b"\n',
         "channels[0].platform: unknown platform 'irc'"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepo = "c/d"\n',
         "channels[0].repo: 'c/d' is not under [repos]"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepo = "a/b"\n'
         'schedule = "every monday"\n', "channels[0].schedule: not a cron expression"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepo = "a/b"\n'
         'lang = "fr"\n', "channels[0].lang: invalid value 'fr'"),
        ("[github]\ntoken = 'ghp_secret'\n", "github: unknown field 'token'"),
        ("not toml at all [", "not valid TOML"),
        ('[repos."../x"]\n', "repos.'../x': repository must be written owner/name"),
        ('[repos."x/.."]\n', "repos.'x/..': repository must be written owner/name"),
        ('[repos."a/b c"]\n', "repos.'a/b c': repository must be written owner/name"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepos = ["a/b", "./b"]\n',
         "channels[0].repos[1]: repository must be written owner/name"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = ""\nrepo = "a/b"\n',
         "channels[0].id: must name the chat"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = " C1"\nrepo = "a/b"\n',
         "channels[0].id: must name the chat"),
        ('[llm]\nbase_url = "http://"\nmodel = "m"\n', "llm.base_url: expected an http(s) URL"),
        ('[llm]\nbase_url = "https:///v1"\nmodel = "m"\n',
         "llm.base_url: expected an http(s) URL"),
    ],
)
def test_bad_config_names_the_field(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert message in str(caught.value)


def test_secret_values_never_appear_in_config_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[github]\ntoken = 'ghp_supersecretvalue'\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "ghp_supersecretvalue" not in str(caught.value)


NEVER_EVERY_YEAR = ["0 9 30 2 *", "0 9 31 4,6,9,11 *", "0 9 29 2 *"]


@pytest.mark.parametrize("schedule", NEVER_EVERY_YEAR)
def test_a_cron_that_does_not_fire_every_year_is_refused_by_name(
        tmp_path: Path, schedule: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\n'
                    f'repo = "a/b"\n[[channels]]\nplatform = "slack"\nid = "C2"\n'
                    f'repo = "a/b"\nschedule = "{schedule}"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "channels[1].schedule:" in str(caught.value)
    assert schedule in str(caught.value)


@pytest.mark.parametrize("schedule", ["0 9 * * MON", "0 0 1 1 *", "59 23 31 12 *",
                                      "0 9 28 2 *", "*/5 * * * *"])
def test_a_cron_that_fires_every_year_is_taken(tmp_path: Path, schedule: str) -> None:
    path = tmp_path / "ok.toml"
    path.write_text('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\n'
                    f'repo = "a/b"\nschedule = "{schedule}"\n')
    assert load_config(path).channels[0].schedule == schedule


@pytest.mark.parametrize(("section", "name", "value"), [
    ("server", "catch_up_hours", "inf"), ("server", "catch_up_hours", "nan"),
    ("server", "catch_up_hours", "-1"), ("server", "catch_up_hours", "0"),
    ("server", "catch_up_hours", "1e9"),
    ("server", "prefetch_hours", "-1"), ("server", "prefetch_hours", "nan"),
    ("server", "prefetch_hours", "200"),
    ("github", "poll_minutes", "0"), ("github", "poll_minutes", "10000000000000"),
    ("github", "reconcile_minutes", "-1"), ("github", "reconcile_minutes", "20000"),
    ("github", "poll_concurrency", "0"), ("github", "poll_concurrency", "11"),
    ("github", "timeout_seconds", "inf"), ("github", "timeout_seconds", "-nan"),
    ("github", "timeout_seconds", "0"),
    ("cache", "past_week_ttl_seconds", "-5"),
    ("cache", "past_week_ttl_seconds", "9223372036854775807"),
    ("cache", "current_week_ttl_seconds", "0"),
    ("cache", "current_week_ttl_seconds", "100000000000"),
    ("server", "read_timeout_seconds", "0"), ("server", "read_timeout_seconds", "inf"),
    ("server", "keep_alive_seconds", "0"), ("server", "keep_alive_seconds", "100000"),
    ("server", "max_connections", "0"), ("server", "max_connections", "10000000"),
    ("server", "max_header_bytes", "10"), ("server", "max_header_bytes", "1073741824"),
    ("server", "report_requests_per_minute", "0"),
    ("server", "report_requests_per_minute", "-3"),
])
def test_every_number_out_of_range_is_refused_by_name(
        tmp_path: Path, section: str, name: str, value: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(f"[{section}]\n{name} = {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert f"{section}.{name}: must be a number from" in str(caught.value)
    assert "REDIS_URL" not in str(caught.value)


@pytest.mark.parametrize(("toml", "field"), [
    ('team_ids = ["T1", ""]', "platforms.slack.team_ids[1]"),
    ('team_ids = [" T1"]', "platforms.slack.team_ids[0]"),
    ('app_id = ""', "platforms.slack.app_id"),
    ("app_id = 5", "platforms.slack.app_id"),
])
def test_a_bad_slack_app_check_is_refused_by_name(tmp_path: Path, toml: str, field: str
                                                  ) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(f"[platforms.slack]\n{toml}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert field in str(caught.value)


def test_the_connection_limits_have_defaults_and_are_read(tmp_path: Path) -> None:
    assert load_config(None).server.max_connections > 0
    path = tmp_path / "limits.toml"
    path.write_text("[server]\nmax_connections = 64\nread_timeout_seconds = 2.5\n"
                    "[platforms.slack]\nteam_ids = [\"T0TEAM01\"]\napp_id = \"A0APP\"\n")
    config = load_settings(path)
    assert (config.server.max_connections, config.server.read_timeout_seconds) == (64, 2.5)
    assert slack_settings(config).team_ids == ("T0TEAM01",)
    assert slack_settings(config).app_id == "A0APP"


def test_a_range_of_whole_numbers_is_written_in_whole_numbers(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[server]\nmax_header_bytes = 100\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "server.max_header_bytes: must be a number from 1024 to 1048576, got 100" \
        in str(caught.value)


@pytest.mark.parametrize("url", ["localhost:8080", "bot.example.com", "ftp://bot.example.com",
                                 "https://", ""])
def test_a_public_url_that_is_not_http_is_refused_by_name(tmp_path: Path, url: str) -> None:
    """Chat digests link to report pages under it and Telegram registers its webhook
    there: a value without http(s) and a host would leave every link out silently."""
    path = tmp_path / "bad.toml"
    path.write_text(f'[server]\npublic_url = "{url}"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert f"server.public_url: expected an http(s) URL such as https://bot.example.com, " \
           f"got {url!r}" in str(caught.value)


@pytest.mark.parametrize(("section", "key"), [
    ("github", "api_url"), ("platforms.slack", "api_url"), ("platforms.telegram", "api_url"),
    ("platforms.feishu", "domain"),
])
def test_an_api_address_that_is_not_http_is_refused_at_load(
        tmp_path: Path, section: str, key: str) -> None:
    """Checked when the file loads, not at the first GitHub fetch or platform call."""
    path = tmp_path / "bad.toml"
    path.write_text(f'[{section}]\n{key} = "api.example.com"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert f"{section}.{key}: expected an http(s) URL such as " in str(caught.value)
    assert "got 'api.example.com'" in str(caught.value)


@pytest.mark.parametrize("url", ["http://localhost:8080", "https://bot.example.com/prdigest/"])
def test_a_public_url_over_http_is_taken(tmp_path: Path, url: str) -> None:
    path = tmp_path / "ok.toml"
    path.write_text(f'[server]\npublic_url = "{url}"\n')
    assert load_config(path).server.public_url == url


@pytest.mark.parametrize(("toml", "message"), [
    ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepo = "a/b"\n'
     'style = "short"\n', "channels[0].style: invalid value 'short' (expected full or compact)"),
    ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepo = "a/b"\n'
     'notices = "dm"\n', "channels[0].notices: invalid value 'dm' (expected channel or thread)"),
    ('[repos."a/b"]\n[[channels]]\nplatform = "irc"\nid = "C1"\nrepo = "a/b"\n',
     "channels[0].platform: unknown platform 'irc' (one of "
     f"{', '.join(sorted(PLATFORM_SCHEMAS))})"),
    ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepo = "a/b"\n'
     '[[channels]]\nplatform = "slack"\nid = "C2"\nrepo = "a/b"\nlang = "fr"\n',
     "channels[1].lang: invalid value 'fr' (expected zh or en)"),
    ('[llm]\nbase_url = "http://x"\nmodel = "m"\nresponse_format = "text"\n',
     "llm.response_format: invalid value 'text' "
     "(expected json_schema, json_object_schema or json_object)"),
])
def test_an_invalid_choice_says_which_values_are_allowed(tmp_path: Path, toml: str,
                                                         message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert message in str(caught.value)


@pytest.mark.parametrize(("toml", "message"), [
    ('[platforms.irc]\ntoken_env = "X"\n',
     f"platforms.irc: no such platform (one of {', '.join(sorted(s.name for s in PLATFORMS))})"),
    ('[platforms.slack]\nsocket_mod = true\n', "platforms.slack"),
])
def test_a_platform_the_registry_does_not_know_is_refused_by_name(
        tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert message in str(caught.value)


def test_without_the_registry_a_platform_table_is_kept_for_its_platform_to_read(
        tmp_path: Path) -> None:
    path = tmp_path / "later.toml"
    path.write_text('[platforms.slack]\napi_url = "http://127.0.0.1:9/api/"\n')
    config = load_config(path)
    assert config.platforms == {"slack": {"api_url": "http://127.0.0.1:9/api/"}}
    assert slack_settings(config).api_url == "http://127.0.0.1:9/api/"


# --- [chat]: what chats may set up for themselves -------------------------------------------


@pytest.mark.parametrize(("toml", "message"), [
    ('[chat]\nrepos = ["*/lumen"]', "chat.repos[0]: write owner/name, owner/* or */*"),
    ('[chat]\nrepos = ["acme"]', "chat.repos[0]: write owner/name, owner/* or */*, got 'acme'"),
    ('[chat]\nprivate_repos = ["../x"]', "chat.private_repos[0]: write owner/name"),
    ('[chat]\nadmins = ["U0ADMIN"]', "chat.admins[0]: write a user as platform:id"),
    ('[chat]\nchanges_by = "owners"', "chat.changes_by"),
    ('[chat]\nfile_channels = "both"', "chat.file_channels"),
    ('[chat]\nmax_channels = -1', "chat.max_channels: must be a number from 0 to 100000"),
    ('[chat]\npending_minutes = 0', "chat.pending_minutes: must be a number from 1 to 1440"),
    ('[chat]\nrepo = ["acme/*"]', "chat: unknown field 'repo'"),
])
def test_a_bad_chat_section_is_refused_by_name(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert message in str(error.value)


def test_the_chat_section_has_defaults_and_is_read(tmp_path: Path) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text('[chat]\nrepos = ["acme/*", "*/*"]\nadmins = ["slack:U1"]\n'
                    'changes_by = "listed"\nfile_channels = "chat"\n', encoding="utf-8")
    chat = load_config(path).chat
    assert (chat.repos, chat.admins, chat.changes_by, chat.file_channels) == (
        ("acme/*", "*/*"), ("slack:U1",), "listed", "chat")
    assert (chat.max_channels, chat.pending_minutes) == (1000, 10)
    assert chat.listed_admin("slack", "U1") and not chat.listed_admin("telegram", "U1")


def test_a_channel_may_have_no_weekly_post(tmp_path: Path) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text('[repos."acme/lumen"]\n[[channels]]\nplatform = "slack"\nid = "C1"\n'
                    'repo = "acme/lumen"\nschedule = "off"\n', encoding="utf-8")
    [channel] = load_config(path).channels
    assert not channel.weekly
