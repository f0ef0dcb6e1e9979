"""Slack outbound against the fake Slack: weekly digests and replies posted within Slack's
limits, rate limits waited out, refusals and unreachable Slack reported without a secret,
and the adapter built only from the secrets it needs."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from adapters.base import DeliveryError
from adapters.slack import adapter as slack_adapter_module
from adapters.slack import settings as slack_settings
from adapters.slack.adapter import EVENTS_PATH, SlackAdapter
from adapters.slack.render import SlackMessage
from adapters.slack.settings import SlackSecrets, SlackSettings
from bot.config import Config
from bot.models import Digest, Reply
from bot.snapshot import read_snapshot
from bot.store.claims import Claims
from testkit import EXAMPLES
from testkit.clock import VirtualClock
from testkit.coordination import local_claims
from testkit.fakes.slack import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack
from testkit.fakes.slack_payloads import SlackPayloads
from testkit.slack_checks import assert_valid, example_digest, markup_problems, texts_of
from testkit.slack_http import (
    CHANNEL,
    FORM,
    JSON,
    OPEN_ADAPTERS,
    RecordingHandler,
    http_client,
    make_adapter,
    post_signed,
    shown,
    slash,
)

# --- posting digests and replies ----------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_the_example_digest_arrives_whole_within_slacks_limits(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None, lang: str
) -> None:
    adapter = make_adapter(config, RecordingHandler(), deduper, fake_slack)
    digest = example_digest(lang)  # type: ignore[arg-type]
    ids = await adapter.post_digest(CHANNEL, digest)
    posts = fake_slack.posted()
    assert len(ids) == len(posts) >= 1 and all(ids)
    snapshot_numbers = {p.number for p in read_snapshot(EXAMPLES / "snapshot.json").pulls}
    everything = ""
    for post in posts:
        assert post["channel"] == CHANNEL
        assert post["unfurl_links"] is False
        assert_valid(post)
        everything += shown(post) + "\n"
        for text in texts_of(post["blocks"]):
            assert markup_problems(text) == []
    numbers = {int(n) for n in re.findall(r"#(\d+)", everything)}
    numbers |= {int(n) for n in re.findall(r"/pull/(\d+)", json.dumps(posts))}
    assert numbers and numbers <= snapshot_numbers
    assert "<!channel>" not in json.dumps(posts)
    # Exactly what the renderer produced went over the wire: the chat form, whole.
    from adapters.slack.render import render_digest_messages
    from testkit.slack_checks import assert_chat_form
    messages = render_digest_messages(digest)
    assert [p["blocks"] for p in posts] == [list(m.blocks) for m in messages]
    assert_chat_form(messages, digest, snapshot_numbers)


async def test_a_rate_limited_post_is_retried_after_retry_after(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, RecordingHandler(), deduper, fake_slack)
    fake_slack.fail_next("chat.postMessage", status=429, headers={"Retry-After": "0"},
                         body={"ok": False, "error": "ratelimited"})
    reply = Reply(kind="subscribed", lang="en", topics=("npu",))
    ids = await adapter.send_reply(CHANNEL, reply)
    calls = fake_slack.calls("chat.postMessage")
    assert [c.status for c in calls] == [429, 200]
    assert calls[0].body == calls[1].body
    assert len(ids) == 1


async def test_a_rate_limited_response_url_is_retried(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    """Its `Retry-After` waited out on the adapter's clock, then the answer again."""
    clock = VirtualClock()
    adapter = make_adapter(config, RecordingHandler(), deduper, fake_slack, clock=clock)
    fake_slack.fail_next("response", status=429, headers={"Retry-After": "7"})
    async with http_client(adapter) as client:
        await post_signed(client, slash(SlackPayloads(), fake_slack, "subscribe npu"), FORM)
        await adapter.drain()
    assert [c.status for c in fake_slack.calls("response")] == [429, 200]
    assert clock.slept == [7.0]


async def test_a_dropped_connection_is_tried_again_after_a_back_off_on_the_clock() -> None:
    """slack_sdk's connection retry, its back-off waited out on the adapter's clock."""
    from slack_sdk.http_retry.builtin_interval_calculators import (
        FixedValueRetryIntervalCalculator,
    )
    from slack_sdk.http_retry.request import HttpRequest
    from slack_sdk.http_retry.state import RetryState

    from adapters.slack.outbound import ConnectionRetry

    clock = VirtualClock()
    retry = ConnectionRetry(clock=clock,
                            interval_calculator=FixedValueRetryIntervalCalculator(0.75))
    state = RetryState()
    request = HttpRequest(method="POST", url="https://slack.example/api/views.publish",
                          headers={})
    await retry.prepare_for_next_attempt_async(state=state, request=request,
                                               error=ConnectionResetError())
    assert clock.slept == [0.75]
    assert state.current_attempt == 1 and state.next_attempt_requested


DELIVERY_FAILURES = {
    "channel_not_found": ({"status": 200, "body": {"ok": False, "error": "channel_not_found"}},
                          "channel_not_found"),
    "not_in_channel": ({"status": 200, "body": {"ok": False, "error": "not_in_channel"}},
                       "not_in_channel"),
    "server error": ({"status": 500, "body": "oops"}, "HTTP 500"),
    "rate limited past the retries": (
        {"status": 429, "headers": {"Retry-After": "0"}, "times": 3,
         "body": {"ok": False, "error": "ratelimited"}}, "ratelimited"),
}


@pytest.mark.parametrize("case", DELIVERY_FAILURES)
async def test_a_post_slack_refuses_raises_delivery_error_without_secrets(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None, case: str
) -> None:
    adapter = make_adapter(config, RecordingHandler(), deduper, fake_slack)
    failure, reason = DELIVERY_FAILURES[case]
    fake_slack.fail_next("chat.postMessage", **failure)
    with pytest.raises(DeliveryError) as raised:
        await adapter.post_digest(CHANNEL, example_digest("en"))
    assert reason in str(raised.value)
    assert BOT_TOKEN not in str(raised.value) and SIGNING_SECRET not in str(raised.value)


async def test_posts_go_through_the_proxy_the_environment_names(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # slack_sdk reads the proxy variables itself. The fake answers as the proxy too:
    # only through it can the name resolve.
    api = fake_slack.base_url.replace("127.0.0.1", "slack-api.invalid")
    monkeypatch.setenv("HTTP_PROXY", fake_slack.base_url.split("/api")[0])
    adapter = SlackAdapter.from_config(config, RecordingHandler(), deduper, api_url=api)
    assert adapter is not None
    OPEN_ADAPTERS.append(adapter)
    await adapter.send_reply(CHANNEL, Reply(kind="subscribed", lang="en", topics=("npu",)))
    assert [r.json["channel"] for r in fake_slack.calls("chat.postMessage")] == [CHANNEL]


async def test_slack_unreachable_raises_delivery_error(
    config: Config, deduper: Claims, slack_env: None
) -> None:
    with FakeSlack() as fake:
        url = fake.base_url
    adapter = SlackAdapter.from_config(config, RecordingHandler(), deduper, api_url=url)
    assert adapter is not None
    OPEN_ADAPTERS.append(adapter)
    with pytest.raises(DeliveryError, match="could not be reached"):
        await adapter.send_reply(CHANNEL, Reply(kind="subscribed", lang="en", topics=("a",)))


@pytest.fixture
def small_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slack messages made small, so that a chat digest takes several: how a digest in
    parts is delivered, whatever the chat budget keeps it to."""
    from adapters.slack import render as slack_render

    real = slack_render.render_digest_messages

    def small(digest: Digest, **_: object) -> list[SlackMessage]:
        return real(digest, max_chars=900)

    monkeypatch.setattr(slack_adapter_module, "render_digest_messages", small)
    monkeypatch.setattr(slack_render, "render_digest_messages", small)


async def test_a_failed_later_part_says_how_far_it_got(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
    small_messages: None,
) -> None:
    from testkit.slack_checks import huge_digest as _huge_digest

    adapter = make_adapter(config, RecordingHandler(), deduper, fake_slack)
    fake_slack.fail_next("chat.postMessage", after=1,
                         body={"ok": False, "error": "is_archived"})
    with pytest.raises(DeliveryError) as raised:
        await adapter.post_digest(CHANNEL, _huge_digest("en"))
    assert "is_archived" in str(raised.value)
    # How far it got, as every platform says it (`adapters.delivering.stopped_post`).
    assert re.search(rf"^slack: 1 of \d+ messages posted to {CHANNEL};", str(raised.value))
    assert len(fake_slack.posted()) == 1


# --- configuration -------------------------------------------------------------------------


def test_without_secrets_there_is_no_adapter_and_healthz_names_what_is_missing(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    deduper = local_claims()
    assert SlackAdapter.from_config(config, RecordingHandler(), deduper) is None
    assert slack_settings.missing_env(config) == ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"]
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    assert SlackAdapter.from_config(config, RecordingHandler(), deduper) is None
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    adapter = SlackAdapter.from_config(config, RecordingHandler(), deduper)
    assert adapter is not None
    assert slack_settings.missing_env(config) == []
    status = json.dumps(adapter.status())
    assert adapter.status()["configured"] is True and adapter.status()["mode"] == "http"
    for value in (BOT_TOKEN, SIGNING_SECRET, APP_TOKEN):
        assert value not in status
    assert [route.path for route in adapter.routes()] == [EVENTS_PATH]  # type: ignore[attr-defined]


@pytest.mark.parametrize("socket_mode", [False, True])
@pytest.mark.parametrize("outbound_only", [False, True])
def test_the_adapter_and_from_config_need_the_same_secrets(
    config: Config, monkeypatch: pytest.MonkeyPatch, socket_mode: bool, outbound_only: bool
) -> None:
    """A bot token always; unless only posting, the app-level token in Socket Mode or the
    signing secret over HTTP - whether read from the environment or handed over."""
    values = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
              "SLACK_APP_TOKEN": APP_TOKEN}
    for present in itertools.product([False, True], repeat=3):
        given = {name: values[name] for name, on in zip(values, present, strict=True) if on}
        for name in values:
            monkeypatch.delenv(name, raising=False)
        for name, value in given.items():
            monkeypatch.setenv(name, value)
        needed = ["SLACK_BOT_TOKEN"] + ([] if outbound_only else
                                        ["SLACK_APP_TOKEN" if socket_mode
                                         else "SLACK_SIGNING_SECRET"])
        missing = [name for name in needed if name not in given]
        built = SlackAdapter.from_config(config, RecordingHandler(), local_claims(),
                                         socket_mode=socket_mode, outbound_only=outbound_only)
        assert (built is not None) == (not missing), given
        secrets = SlackSecrets(given.get("SLACK_BOT_TOKEN", ""),
                               given.get("SLACK_SIGNING_SECRET"), given.get("SLACK_APP_TOKEN"))
        if missing:
            with pytest.raises(ValueError, match=f"set {' and '.join(missing)}$"):
                SlackAdapter(config, RecordingHandler(), local_claims(), secrets,
                             SlackSettings(socket_mode=socket_mode), outbound_only=outbound_only)
        else:
            SlackAdapter(config, RecordingHandler(), local_claims(), secrets,
                         SlackSettings(socket_mode=socket_mode), outbound_only=outbound_only)
        if not socket_mode:
            check = slack_settings.missing_post_env if outbound_only else slack_settings.missing_env
            assert check(config) == missing


async def test_an_answer_longer_than_a_response_url_takes_goes_to_the_channel(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
    small_messages: None,
) -> None:
    """A response_url takes 5 messages; a longer answer is posted to the channel whole."""
    from adapters.slack.render import render_digest_messages
    from testkit.slack_checks import huge_digest as _huge_digest

    digest = _huge_digest("en")
    parts = render_digest_messages(digest)
    assert len(parts) > 5
    adapter = make_adapter(config, RecordingHandler(Reply(kind="digest", lang="en",
                                                          digest=digest)),
                           deduper, fake_slack)
    async with http_client(adapter) as client:
        await post_signed(client, slash(SlackPayloads(), fake_slack, "digest"), FORM)
        await adapter.drain()
    assert fake_slack.calls("response") == []
    posts = fake_slack.posted()
    assert [p["blocks"] for p in posts] == [list(m.blocks) for m in parts]
    assert {p["channel"] for p in posts} == {CHANNEL}


@pytest.mark.parametrize("shape", ["file_share", "thread_broadcast"])
async def test_user_authored_message_subtypes_are_answered(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None, shape: str
) -> None:
    """A DM with a file attached, or a thread reply also sent to the conversation, is a
    person asking: its text is answered (in the thread, for the thread reply)."""
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    payloads = SlackPayloads()
    event = (payloads.direct_message_with_file("topics") if shape == "file_share"
             else payloads.thread_broadcast("topics"))
    async with http_client(adapter) as client:
        await post_signed(client, json.dumps(payloads.event_callback(event)), JSON)
        await adapter.drain()
    [(command, _, user)] = handler.asked
    assert command.kind == "topics" and user == "U0USER01"
    [post] = fake_slack.posted()
    assert post["channel"] == "D0DIRECT1"
    if shape == "thread_broadcast":
        assert post["thread_ts"] == "1700000100.000100"
