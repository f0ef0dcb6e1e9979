"""Asking a running `prdigest serve` as Slack does: a signed `/prdigest` slash command to
its URL, the answer read where Slack would receive it (the command's response_url on the
fake Slack)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

import httpx

from testkit.fakes.slack_payloads import SlackPayloads, signed_headers
from testkit.reliability.world import World

_T = TypeVar("_T")
PAYLOADS = SlackPayloads()


def wait_for(found: Callable[[], _T], timeout: float) -> _T:
    """What `found` gives once it gives something; an AssertionError after `timeout`."""
    deadline = time.monotonic() + timeout
    while not (value := found()):
        if time.monotonic() > deadline:
            raise AssertionError("nothing arrived in time")
        time.sleep(0.1)
    return value


def ask_slack(fakes: World, url: str, text: str, *, channel: str, user: str = "U0USER01",
              timeout: float = 60.0) -> str:
    """The answer to `/prdigest text` asked in `channel` by `user` of the server at `url`,
    as the JSON Slack received on the response_url."""
    name = uuid.uuid4().hex[:12]
    body = urlencode(PAYLOADS.slash_command(text, channel_id=channel, user_id=user,
                                            response_url=fakes.slack.response_url(name)))
    answer = httpx.post(f"{url}/slack/events", content=body, headers=signed_headers(body),
                        timeout=30)
    assert answer.status_code == 200, answer.text
    found: list[Any] = wait_for(lambda: [r.json for r in fakes.slack.calls("response")
                                         if r.path.endswith(f"/{name}") and r.ok], timeout)
    return json.dumps(found, ensure_ascii=False)
