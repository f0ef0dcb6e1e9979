"""Pasted PR links unfurled on Slack: the real Bolt app and slack_sdk against the fake
Slack, `link_shared` signed as Slack signs it. A channel following the repository gets
one `chat.unfurl` per delivery, with what the fixture says of the PR and the risks its
`risks for #N` answer gives; a channel not following it gets no call at all."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest

from adapters.slack.adapter import EVENTS_PATH, SlackAdapter
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import ChannelConfig, Config, RepoConfig
from bot.digests import Digests
from bot.errors import SourceError
from bot.models import PullRequest, Snapshot
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.claims import Claims
from bot.store.coordination import Coordination
from testkit import EXAMPLES
from testkit.coordination import claims_on
from testkit.fakes.chat import InMemorySubscriptionStore
from testkit.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from testkit.fakes.slack_payloads import SlackPayloads, envelope_for, signed_headers
from testkit.slack_checks import markup_problems, texts_of
from testkit.slack_http import (
    CHANNEL,
    FORM,
    JSON,
    NOW,
    http_client,
    make_adapter,
    post_signed,
    shown,
    slash,
)

SECRET_CHANNEL = "C0SECRET1"
LUMEN = read_snapshot(EXAMPLES / "snapshot.json")
SECRET = Snapshot(repository="acme/secret", pulls=(PullRequest(
    number=7, title="Rotate the payment gateway keys", url="https://github.com/acme/secret/pull/7",
    author="spy", state="merged"),))


def pull_of(snapshot: Snapshot, number: int) -> PullRequest:
    return next(p for p in snapshot.pulls if p.number == number)


class LookedUp(SnapshotSource):
    """The snapshots, recording every PR asked for."""

    def __init__(self, *snapshots: Snapshot) -> None:
        super().__init__(*snapshots)
        self.asked: list[tuple[str, int]] = []

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        self.asked.append((repo.lower(), number))
        return super().fetch_pull(repo, number)


def with_secret(config: Config, *, lang: str = "en") -> Config:
    """The example config with the Slack channel in `lang`, and a private repository
    another Slack channel follows."""
    channels = tuple(msgspec.structs.replace(c, lang=lang) if c.key == f"slack:{CHANNEL}"
                     else c for c in config.channels)
    secret = ChannelConfig(platform="slack", id=SECRET_CHANNEL, repo="acme/secret", lang="en")
    return msgspec.structs.replace(config, channels=(*channels, secret),
                                   repos={**config.repos, "acme/secret": RepoConfig(private=True)})


def handler_on(config: Config, source: SnapshotSource) -> CommandHandler:
    return CommandHandler(Digests(config, source, subscriptions=InMemorySubscriptionStore(),
                                  clock=HeldClock(NOW)))


def event(urls: list[str], *, channel: str = CHANNEL, event_id: str | None = None) -> str:
    payloads = SlackPayloads()
    return json.dumps(payloads.event_callback(payloads.link_shared(urls, channel=channel),
                                              event_id=event_id))


def unfurl_calls(fake: FakeSlack) -> list[dict[str, Any]]:
    return fake.posted("chat.unfurl")


def unfurled_text(call: dict[str, Any], url: str) -> str:
    return "\n".join(texts_of(call["unfurls"][url]["blocks"]))


async def paste(adapter: Any, body: str, **headers: str) -> int:
    async with http_client(adapter) as client:
        signed = {**signed_headers(body, content_type=JSON), **headers}
        response = await client.post(EVENTS_PATH, content=body.encode(), headers=signed)
        await adapter.drain()
    return response.status_code


URL = "https://github.com/acme/lumen/pull/1201"


async def test_a_pasted_link_in_a_following_channel_unfurls_once_with_the_prs_facts(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = with_secret(config)
    adapter = make_adapter(config, handler_on(config, LookedUp(LUMEN, SECRET)), deduper,
                           fake_slack)
    assert await paste(adapter, event([URL])) == 200
    [call] = unfurl_calls(fake_slack)
    assert call["channel"] == CHANNEL and call["ts"] == "1700000300.000300"
    assert list(call["unfurls"]) == [URL]
    text = unfurled_text(call, URL)
    pull = pull_of(LUMEN, 1201)
    assert "acme/lumen#1201" in text
    assert "paged KV cache for the Ascend rollout engine" in text
    assert pull.author is not None and pull.author in text
    assert pull.state in text
    for topic in ("rollout", "npu"):  # the title's own tags
        assert f"`{topic}`" in text
    # The unresolved review thread of the fixture is the risk, with its evidence.
    unresolved = [t for t in pull.review_threads or () if not t.resolved]
    assert unresolved and unresolved[0].comments[0].url in text
    assert "kv_cache.py" in text
    assert all(markup_problems(t) == [] for t in texts_of(call["unfurls"][URL]["blocks"]))


async def test_the_risks_shown_are_those_the_risks_answer_gives(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = with_secret(config)
    adapter = make_adapter(config, handler_on(config, LookedUp(LUMEN)), deduper, fake_slack)
    assert await paste(adapter, event([URL])) == 200
    async with http_client(adapter) as client:
        await post_signed(client, slash(SlackPayloads(), fake_slack, "risks for #1201"), FORM)
        await adapter.drain()
    [answer] = fake_slack.posted("response")
    risk_lines = [line for line in shown(answer).splitlines() if line.startswith("• ")]
    assert risk_lines
    text = unfurled_text(unfurl_calls(fake_slack)[0], URL)
    for line in risk_lines[:3]:
        assert line in text


async def test_a_channel_in_chinese_gets_chinese_labels(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = with_secret(config, lang="zh")
    adapter = make_adapter(config, handler_on(config, LookedUp(LUMEN)), deduper, fake_slack)
    await paste(adapter, event([URL]))
    text = unfurled_text(unfurl_calls(fake_slack)[0], URL)
    assert re.search(r"[\u4e00-\u9fff]", text)
    assert "By lin-q" not in text and "lin-q" in text
    assert "risk found" not in text and "risks found" not in text


async def test_files_and_discussion_links_unfurl_under_their_own_address(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = with_secret(config)
    adapter = make_adapter(config, handler_on(config, LookedUp(LUMEN)), deduper, fake_slack)
    files = "https://github.com/acme/lumen/pull/1202/files"
    discussion = "https://github.com/ACME/Lumen/pull/1201#discussion_r120100"
    await paste(adapter, event([files, discussion, "https://example.com/pull/3"]))
    [call] = unfurl_calls(fake_slack)
    assert set(call["unfurls"]) == {files, discussion}
    assert pull_of(LUMEN, 1202).title.split("] ", 1)[1] in unfurled_text(call, files)


@pytest.mark.parametrize("url", [
    "https://github.com/acme/secret/pull/7",          # private, followed by another channel
    "https://github.com/verl-project/verl/pull/1201",  # configured, not followed here
    "https://github.com/someone/else/pull/1201",      # not configured at all
])
async def test_a_link_of_a_repository_the_channel_does_not_follow_shows_nothing(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None, url: str
) -> None:
    config = with_secret(config)
    source = LookedUp(LUMEN, SECRET)
    adapter = make_adapter(config, handler_on(config, source), deduper, fake_slack)
    assert await paste(adapter, event([url])) == 200
    assert fake_slack.calls("chat.unfurl") == []
    assert source.asked == []  # never even looked up


async def test_the_private_repository_unfurls_in_the_channel_that_follows_it(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    """The control for the test above: the data is there, and only the follow keeps it
    out of the other channel."""
    config = with_secret(config)
    adapter = make_adapter(config, handler_on(config, LookedUp(LUMEN, SECRET)), deduper,
                           fake_slack)
    secret_url = "https://github.com/acme/secret/pull/7"
    await paste(adapter, event([secret_url, URL], channel=SECRET_CHANNEL))
    [call] = unfurl_calls(fake_slack)
    assert list(call["unfurls"]) == [secret_url]
    assert SECRET.pulls[0].title in unfurled_text(call, secret_url)
    assert call["channel"] == SECRET_CHANNEL


async def test_a_mixed_message_unfurls_only_the_followed_links(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = with_secret(config)
    adapter = make_adapter(config, handler_on(config, LookedUp(LUMEN, SECRET)), deduper,
                           fake_slack)
    await paste(adapter, event(["https://github.com/acme/secret/pull/7", URL]))
    [call] = unfurl_calls(fake_slack)
    assert list(call["unfurls"]) == [URL]
    assert "payment" not in json.dumps(call)


async def test_links_in_a_channel_not_set_up_or_the_composer_are_left_alone(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = with_secret(config)
    source = LookedUp(LUMEN)
    adapter = make_adapter(config, handler_on(config, source), deduper, fake_slack)
    await paste(adapter, event([URL], channel="C0NOTSET1"))
    await paste(adapter, event([URL], channel="COMPOSER"))
    assert fake_slack.calls("chat.unfurl") == [] and source.asked == []


async def test_a_redelivered_event_unfurls_once_across_replicas(
    fake_slack: FakeSlack, config: Config, port: Coordination, slack_env: None
) -> None:
    config = with_secret(config)
    first = make_adapter(config, handler_on(config, LookedUp(LUMEN)), claims_on(port),
                         fake_slack)
    second = make_adapter(config, handler_on(config, LookedUp(LUMEN)), claims_on(port),
                          fake_slack)
    body = event([URL], event_id="Ev0UNFURL1")
    assert await paste(first, body) == 200
    retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    assert await paste(first, body, **retry) == 200
    assert await paste(second, body, **retry) == 200
    assert len(unfurl_calls(fake_slack)) == 1


async def test_a_forged_link_shared_gets_401_and_causes_nothing(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = with_secret(config)
    source = LookedUp(LUMEN)
    adapter = make_adapter(config, handler_on(config, source), deduper, fake_slack)
    body = event([URL])
    async with http_client(adapter) as client:
        forged = signed_headers(body, secret="not-the-signing-secret", content_type=JSON)
        response = await client.post(EVENTS_PATH, content=body.encode(), headers=forged)
        unsigned = await client.post(EVENTS_PATH, content=body.encode(),
                                     headers={"Content-Type": JSON})
        await adapter.drain()
    assert response.status_code == 401 and unsigned.status_code == 401
    assert fake_slack.requests == [] and source.asked == []


HOSTILE = ("<!channel> <@U0ADMIN1> <!subteam^S1|@oncall> *urgent* "
           "<https://evil.example/x|click me> & `rm -rf` @here")


async def test_a_hostile_title_and_author_are_escaped(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = with_secret(config)
    hostile = msgspec.structs.replace(pull_of(LUMEN, 1201), title=HOSTILE,
                                      author="<!everyone>")
    snapshot = msgspec.structs.replace(LUMEN, pulls=tuple(
        hostile if p.number == 1201 else p for p in LUMEN.pulls))
    adapter = make_adapter(config, handler_on(config, LookedUp(snapshot)), deduper,
                           fake_slack)
    await paste(adapter, event([URL]))
    [call] = unfurl_calls(fake_slack)
    sent = json.dumps(call)
    for raw in ("<!channel>", "<@U0ADMIN1>", "<!subteam", "<https://evil.example",
                "<!everyone>"):
        assert raw not in sent
    texts = list(texts_of(call["unfurls"][URL]["blocks"]))
    assert "&lt;!channel&gt;" in "\n".join(texts)
    assert all(markup_problems(t) == [] for t in texts)
    blocks = call["unfurls"][URL]["blocks"]
    assert all(b.get("text", {}).get("verbatim") is True for b in blocks if b["type"] == "section")


async def test_links_beyond_the_bound_are_not_unfurled(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = with_secret(config)
    source = LookedUp(LUMEN)
    adapter = make_adapter(config, handler_on(config, source), deduper, fake_slack)
    urls = [f"https://github.com/acme/lumen/pull/{p.number}" for p in LUMEN.pulls[:9]]
    await paste(adapter, event(urls))
    [call] = unfurl_calls(fake_slack)
    assert list(call["unfurls"]) == urls[:5]
    assert len(source.asked) == 5


async def test_a_failing_unfurl_call_is_logged_without_a_traceback(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
    caplog: pytest.LogCaptureFixture
) -> None:
    config = with_secret(config)
    adapter = make_adapter(config, handler_on(config, LookedUp(LUMEN)), deduper, fake_slack)
    fake_slack.fail_next("chat.unfurl", body={"ok": False, "error": "cannot_unfurl_url"})
    assert await paste(adapter, event([URL])) == 200
    assert "cannot_unfurl_url" in caplog.text
    assert "Traceback" not in caplog.text


class Unreachable(LookedUp):
    """GitHub not answering for one PR."""

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        self.asked.append((repo.lower(), number))
        if number == 1201:
            raise SourceError("GitHub said 502 (token GITHUB_TOKEN)")
        return super().fetch_pull(repo, number)


async def test_a_pr_github_cannot_give_now_is_left_out_and_the_others_shown(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
    caplog: pytest.LogCaptureFixture
) -> None:
    config = with_secret(config)
    adapter = make_adapter(config, handler_on(config, Unreachable(LUMEN)), deduper,
                           fake_slack)
    other = "https://github.com/acme/lumen/pull/1203"
    missing = "https://github.com/acme/lumen/pull/99999"
    assert await paste(adapter, event([URL, missing, other])) == 200
    [call] = unfurl_calls(fake_slack)
    assert list(call["unfurls"]) == [other]
    assert "Traceback" not in caplog.text


async def test_socket_mode_unfurls_a_re_sent_envelope_once(
    fake_slack: FakeSlack, config: Config, deduper: Claims, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    monkeypatch.delenv("SLACK_SIGNING_SECRET", raising=False)
    config = with_secret(config)
    adapter = SlackAdapter.from_config(config, handler_on(config, LookedUp(LUMEN)), deduper,
                                       api_url=fake_slack.base_url, socket_mode=True)
    assert adapter is not None
    payloads = SlackPayloads()
    body = payloads.event_callback(payloads.link_shared([URL]))
    await adapter.start()
    try:
        await fake_slack.wait_for_async(lambda: fake_slack.socket_connections == 1)
        fake_slack.send_envelope(envelope_for(body, "events_api", envelope_id="env-u1"))
        fake_slack.send_envelope(envelope_for(body, "events_api", envelope_id="env-u2",
                                              retry_attempt=1, retry_reason="timeout"))
        await fake_slack.wait_for_async(lambda: {"env-u1", "env-u2"} <= {
            m.get("envelope_id") for m in fake_slack.socket_received})
        await fake_slack.wait_for_async(lambda: len(unfurl_calls(fake_slack)) >= 1)
        await adapter.drain()
    finally:
        await adapter.close()
    [call] = unfurl_calls(fake_slack)
    assert list(call["unfurls"]) == [URL]
