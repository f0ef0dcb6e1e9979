"""The payloads Slack sends a bot - slash commands, Events API callbacks, Socket Mode
envelopes - with the fake Slack's ids filled in, and their v0 signatures."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from testkit.fakes.slack import SIGNING_SECRET


def envelope_for(payload: dict[str, Any], kind: str, *, envelope_id: str,
                 retry_attempt: int = 0, retry_reason: str = "") -> dict[str, Any]:
    """A Socket Mode envelope as Slack sends it (`events_api`, `slash_commands`,
    `interactive`)."""
    return {
        "envelope_id": envelope_id,
        "type": kind,
        "payload": payload,
        "accepts_response_payload": kind != "events_api",
        "retry_attempt": retry_attempt,
        "retry_reason": retry_reason,
    }


@dataclass
class SlackPayloads:
    """Factories for the payloads Slack sends, with the fake's ids filled in."""

    team_id: str = "T0TEAM01"
    api_app_id: str = "A0FAKE01"
    counter: list[int] = field(default_factory=lambda: [0])

    def _next(self) -> int:
        self.counter[0] += 1
        return self.counter[0]

    def slash_command(self, text: str, *, channel_id: str = "C0123456",
                      user_id: str = "U0USER01", response_url: str) -> dict[str, str]:
        n = self._next()
        return {
            "token": "legacy-verification-token", "team_id": self.team_id,
            "team_domain": "fake", "channel_id": channel_id, "channel_name": "general",
            "user_id": user_id, "user_name": "ann", "command": "/prdigest", "text": text,
            "api_app_id": self.api_app_id, "is_enterprise_install": "false",
            "response_url": response_url, "trigger_id": f"{n}.{n}.trigger{n:04d}",
        }

    def button_click(self, value: str, *, channel_id: str = "C0123456",
                     user_id: str = "U0USER01", response_url: str,
                     trigger_id: str | None = None, message_ts: str | None = None,
                     action_id: str = "prdigest.act") -> dict[str, Any]:
        """A `block_actions` interactivity payload: a click on a button whose `value` is
        `value`, on the message `message_ts` (sent form-encoded as `payload=`)."""
        n = self._next()
        user = {"id": user_id, "username": "ann", "name": "ann", "team_id": self.team_id}
        message_ts = message_ts or f"1700000300.{n:06d}"
        return {
            "type": "block_actions", "token": "legacy-verification-token",
            "team": {"id": self.team_id, "domain": "fake"}, "user": user,
            "api_app_id": self.api_app_id, "is_enterprise_install": False,
            "trigger_id": trigger_id or f"{n}.{n}.click{n:04d}",
            "container": {"type": "message", "message_ts": message_ts,
                          "channel_id": channel_id, "is_ephemeral": False},
            "channel": {"id": channel_id, "name": "general"},
            "message": {"type": "message", "ts": message_ts, "text": "digest"},
            "response_url": response_url,
            "actions": [{"type": "button", "action_id": action_id, "block_id": f"b{n}",
                         "text": {"type": "plain_text", "text": "Risks"}, "value": value,
                         "action_ts": f"1700000301.{n:06d}"}],
        }

    def event_callback(self, event: dict[str, Any], *, event_id: str | None = None
                       ) -> dict[str, Any]:
        n = self._next()
        return {
            "token": "legacy-verification-token", "team_id": self.team_id,
            "api_app_id": self.api_app_id, "event": event, "type": "event_callback",
            "event_id": event_id or f"Ev{n:08d}", "event_time": 1_700_000_000 + n,
            "authorizations": [{"team_id": self.team_id, "user_id": "UBOT0001",
                                "is_bot": True}],
        }

    def app_mention(self, text: str, *, channel: str = "C0123456", user: str = "U0USER01",
                    ts: str = "1700000100.000100", thread_ts: str | None = None
                    ) -> dict[str, Any]:
        event = {"type": "app_mention", "user": user, "text": text, "ts": ts,
                 "channel": channel, "event_ts": ts}
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    def direct_message(self, text: str, *, channel: str = "D0DIRECT1", user: str = "U0USER01",
                       ts: str = "1700000200.000200", **extra: Any) -> dict[str, Any]:
        return {"type": "message", "channel_type": "im", "user": user, "text": text,
                "ts": ts, "channel": channel, "event_ts": ts, **extra}

    def direct_message_with_file(self, text: str, **extra: Any) -> dict[str, Any]:
        """A DM with a file attached, as the Events API sends it (`subtype: file_share`)."""
        file = {"id": "F0FILE001", "name": "trace.log", "title": "trace.log",
                "mimetype": "text/plain", "filetype": "text", "size": 2048,
                "user": extra.get("user", "U0USER01"), "mode": "hosted",
                "url_private": "https://files.slack.com/files-pri/T0TEAM01-F0FILE001/trace.log"}
        return self.direct_message(text, subtype="file_share", files=[file], upload=False,
                                   display_as_bot=False, **extra)

    def thread_broadcast(self, text: str, *, thread_ts: str = "1700000100.000100",
                         **extra: Any) -> dict[str, Any]:
        """A thread reply also sent to the conversation (`subtype: thread_broadcast`)."""
        root = {"type": "message", "user": "U0USER01", "text": "earlier", "ts": thread_ts,
                "thread_ts": thread_ts, "reply_count": 1}
        return self.direct_message(text, subtype="thread_broadcast", thread_ts=thread_ts,
                                   root=root, **extra)

    def link_shared(self, urls: list[str], *, channel: str = "C0123456",
                    user: str = "U0USER01", message_ts: str = "1700000300.000300"
                    ) -> dict[str, Any]:
        """Links of the app's unfurl domains posted in a channel (`link_shared`), as the
        Events API sends them for a message already posted."""
        return {"type": "link_shared", "channel": channel, "is_bot_user_member": True,
                "user": user, "message_ts": message_ts, "thread_ts": message_ts,
                "unfurl_id": f"{channel}.{message_ts}.unfurl", "source":
                "conversations_history", "event_ts": message_ts,
                "links": [{"domain": "github.com", "url": url} for url in urls]}

    def app_home_opened(self, *, user: str = "U0USER01", channel: str = "D0DIRECT1",
                        tab: str = "home") -> dict[str, Any]:
        """A user opened the app's Home (or Messages) tab; `channel` is their direct
        conversation with the app."""
        return {"type": "app_home_opened", "user": user, "channel": channel, "tab": tab,
                "event_ts": "1700000400.000400"}


def signed_headers(body: bytes | str, *, secret: str = SIGNING_SECRET,
                   timestamp: int | None = None,
                   content_type: str = "application/x-www-form-urlencoded") -> dict[str, str]:
    """The headers Slack sends with `body`: a v0 signature made by slack_sdk's own
    `SignatureVerifier` over the exact bytes."""
    from slack_sdk.signature import SignatureVerifier

    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature,
            "Content-Type": content_type}
