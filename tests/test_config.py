"""The config file: validated at load, every error names its field."""

from __future__ import annotations

from pathlib import Path

import pytest

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
         "channels[0].platform: invalid value 'irc'"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepo = "c/d"\n',
         "channels[0].repo: 'c/d' is not under [repos]"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepo = "a/b"\n'
         'schedule = "every monday"\n', "channels[0].schedule: not a cron expression"),
        ('[repos."a/b"]\n[[channels]]\nplatform = "slack"\nid = "C1"\nrepo = "a/b"\n'
         'lang = "fr"\n', "channels[0].lang: invalid value 'fr'"),
        ("[github]\ntoken = 'ghp_secret'\n", "github: unknown field 'token'"),
        ("not toml at all [", "not valid TOML"),
    ],
)
def test_bad_config_names_the_field(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert message in str(caught.value)


def test_secret_values_never_appear_in_config_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[github]\ntoken = 'ghp_supersecretvalue'\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "ghp_supersecretvalue" not in str(caught.value)
