"""Only http(s) addresses become links in Slack, as on every other platform: a
`javascript:`, `slack://` or `data:` URL in a PR (or a report address) shows as text
and gets no button."""

from __future__ import annotations

import json

import msgspec
import pytest

from adapters.slack.markup import SlackMarkup
from adapters.slack.render import render_digest_messages, render_reply_messages
from bot.models import KeyPull, Reply, Risk
from testkit.slack_checks import assert_valid, example_digest
from testkit.slack_checks import pull_answer as _answer

HOSTILE_URLS = ("javascript:alert(1)", "JavaScript:alert(document.cookie)",
                "slack://channel?team=T1&id=C1", "data:text/html,<script>x</script>",
                "vbscript:msgbox", " javascript:alert(1)", "https://a b.example/x",
                "//evil.example/x", "")


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_a_link_to_anything_but_http_is_its_label_as_text(url: str) -> None:
    slack = SlackMarkup()
    assert slack.link(url, "open <it>") == "open &lt;it&gt;"
    assert slack.pr(1206, url) == "#1206"


def test_an_http_link_is_still_a_link() -> None:
    slack = SlackMarkup()
    assert slack.link("https://github.com/a/b/pull/1", "#1") == "<https://github.com/a/b/pull/1|#1>"
    assert slack.link("http://example.com/x|y", "z") == "<http://example.com/x%7Cy|z>"


@pytest.mark.parametrize("url", ["javascript:alert(1)", "slack://open", "data:,x"])
def test_no_button_and_no_link_for_a_hostile_pull_url(url: str) -> None:
    answer = msgspec.structs.replace(_answer(), url=url, risks=(
        Risk(pull=1206, severity="high", summary="look", evidence_url=url),))
    [message] = render_reply_messages(Reply(kind="pull", lang="en", pull=answer,
                                            mode="summary"))
    assert_valid(message)
    sent = json.dumps(message.as_post())
    assert f"<{url}" not in sent  # at most shown as text, never `<url|label>`
    assert all("accessory" not in block for block in message.as_post()["blocks"])


def test_no_button_for_a_hostile_key_pull_or_report_address() -> None:
    digest = example_digest("en")
    pulls = tuple(msgspec.structs.replace(k, url="javascript:alert(1)")
                  for k in digest.key_pulls)
    digest = msgspec.structs.replace(digest, key_pulls=pulls,
                                     report_url="javascript:alert(2)")
    posts = [m.as_post() for m in render_digest_messages(digest)]
    sent = json.dumps(posts)
    assert "javascript:" not in sent
    # Only the buttons that run a command are left: none opens an address.
    assert all("url" not in element for post in posts for block in post["blocks"]
               if block["type"] == "actions" for element in block["elements"])
    assert all("accessory" not in block for post in posts for block in post["blocks"])


def test_a_key_pull_with_an_http_url_keeps_its_button() -> None:
    digest = example_digest("en")
    first = digest.key_pulls[0]
    assert isinstance(first, KeyPull) and first.url.startswith("https://")
    posts = [m.as_post() for m in render_digest_messages(digest)]
    buttons = [block["accessory"]["url"] for post in posts for block in post["blocks"]
               if "accessory" in block]
    assert first.url in buttons
