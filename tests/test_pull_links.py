"""Which pasted links are PRs of the repositories a chat follows (`bot.chat.previews`):
only whole GitHub PR addresses, only of the chat's repositories, each once, bounded."""

from __future__ import annotations

import pytest

from bot.chat.previews import MAX_PREVIEWS, followed_links, pull_link
from bot.config import ChannelConfig

CHANNEL = ChannelConfig(platform="slack", id="C1", repos=("acme/lumen", "Org/Tool.js"))


@pytest.mark.parametrize(("url", "repo", "number"), [
    ("https://github.com/acme/lumen/pull/1201", "acme/lumen", 1201),
    ("https://github.com/acme/lumen/pull/1201/files", "acme/lumen", 1201),
    ("https://github.com/acme/lumen/pull/1201/files#diff-abc123", "acme/lumen", 1201),
    ("https://github.com/acme/lumen/pull/1201#discussion_r120100", "acme/lumen", 1201),
    ("https://github.com/acme/lumen/pull/1201/commits/0a1b2c?w=1", "acme/lumen", 1201),
    ("http://www.github.com/org/tool.js/pull/9", "org/tool.js", 9),
    ("HTTPS://GitHub.com/acme/lumen/pull/3", "acme/lumen", 3),
])
def test_a_pr_address_is_read(url: str, repo: str, number: int) -> None:
    link = pull_link(url)
    assert link is not None and (link.repo, link.number, link.url) == (repo, number, url)


@pytest.mark.parametrize("url", [
    "https://github.com/acme/lumen/issues/1201",
    "https://github.com/acme/lumen/pull/",
    "https://github.com/acme/lumen/pull/0",
    "https://github.com/acme/lumen/pull/12345678901",
    "https://github.com.evil.example/acme/lumen/pull/1",
    "https://evil.example/github.com/acme/lumen/pull/1",
    "https://gist.github.com/acme/lumen/pull/1",
    "javascript://github.com/acme/lumen/pull/1",
    "https://github.com/acme/lumen/pull/1 <!channel>",
    "https://github.com/-acme/lumen/pull/1",
    "https://github.com/acme/lumen/pull/1" + "/x" * 2000,
    "",
])
def test_anything_else_is_not_a_pr(url: str) -> None:
    assert pull_link(url) is None


def test_only_the_chats_repositories_each_address_once_in_its_spelling() -> None:
    urls = ["https://github.com/other/repo/pull/1",
            "https://github.com/ACME/LUMEN/pull/2",
            "https://github.com/ACME/LUMEN/pull/2",
            "https://github.com/acme/lumen/pull/2/files",
            "https://github.com/org/tool.js/pull/3"]
    found = followed_links(urls, CHANNEL)
    assert [(link.url, repo, link.number) for link, repo in found] == [
        (urls[1], "acme/lumen", 2), (urls[3], "acme/lumen", 2), (urls[4], "Org/Tool.js", 3)]


def test_the_links_of_one_message_are_bounded() -> None:
    urls = [f"https://github.com/acme/lumen/pull/{n}" for n in range(1, 20)]
    assert len(followed_links(urls, CHANNEL)) == MAX_PREVIEWS
    unfollowed = [f"https://github.com/other/repo/pull/{n}" for n in range(1, 60)]
    assert followed_links([*unfollowed, urls[0]], CHANNEL) == []  # past the links read
