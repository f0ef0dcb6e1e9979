"""A fake Slack on 127.0.0.1:<free port> that the real slack_sdk and Bolt talk to.

It speaks the parts of Slack the bot uses: the Web API under `/api/` (`auth.test`,
`chat.postMessage`, `conversations.history`, `conversations.replies`,
`apps.connections.open`, `users.info`, `conversations.info`, `chat.unfurl`,
`views.publish`, `users.conversations`), slash-command and click `response_url`s under
`/response/<name>` (a click's may replace the message clicked, `replace_original`), and
a Socket Mode WebSocket under `/link`.
Like Slack it checks the bearer token and rejects blocks over Slack's limits (`invalid_blocks`,
`msg_blocks_too_long`), so a contract test fails where Slack would.

Every HTTP request is recorded (method, path, query, headers, raw body); every message
a Socket Mode client sends is recorded too. Failures are scripted per endpoint with
`fail_next` (status, body, headers - e.g. a 429 with `Retry-After`); `rate_limit` (a
`FakeRateLimit`) refuses `chat.postMessage` beyond a rate as Slack does, 429 with
`Retry-After`. The server runs an aiohttp app on its own event loop in its own thread,
never in the test's loop.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from aiohttp import WSMsgType, web

from testkit.fakes.aiohttp_server import ThreadedAiohttpServer
from testkit.fakes.rate_limit import FakeRateLimit
from testkit.fakes.slack_blocks import (
    MAX_CUMULATIVE_BLOCK_TEXT,
    MAX_MESSAGE_TEXT,
    block_errors,
    block_texts,
    slack_length,
)

BOT_TOKEN = "xoxb-fake-bot-token"
APP_TOKEN = "xapp-fake-app-token"
SIGNING_SECRET = "fake-signing-secret-0123456789abcdef"

RESPONSE_URL_USES = 5


@dataclass(frozen=True)
class Recorded:
    """One request as the fake received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    status: int = 200
    ok: bool = True  # False when the fake refused the call (scripted or invalid)

    @property
    def api_method(self) -> str:
        """`chat.postMessage` for `/api/chat.postMessage`, `response` for a response_url."""
        if self.path.startswith("/api/"):
            return self.path[len("/api/"):]
        if self.path.startswith("/response/"):
            return "response"
        return self.path

    @property
    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))

    @property
    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode("utf-8")).items()}

    def params(self) -> dict[str, Any]:
        """The call's arguments, whatever way slack_sdk encoded them."""
        content_type = self.headers.get("content-type", "")
        if "json" in content_type:
            data = self.json
            return data if isinstance(data, dict) else {}
        params: dict[str, Any] = {k: v[0] for k, v in self.query.items()}
        if self.body:
            params.update(self.form)
        return params


@dataclass
class _Failure:
    status: int
    body: Any
    headers: dict[str, str]


def _shown(messages: list[dict[str, Any]], params: dict[str, Any]) -> list[dict[str, Any]]:
    """Messages as a history call shows them: the metadata only with
    `include_all_metadata`, a reply's `thread_ts` kept, the fake's own fields left out."""
    with_metadata = str(params.get("include_all_metadata", "")).lower() in {"1", "true"}
    for message in messages:
        message.pop("channel")
        message.pop("at")
        if not message["thread_ts"]:
            message.pop("thread_ts")
        if not with_metadata or message["metadata"] is None:
            message.pop("metadata")
        if message["blocks"] is None:
            message.pop("blocks")
    return messages


class FakeSlack(ThreadedAiohttpServer):
    """The fake server; use as a context manager or call `start()` and `stop()`."""

    thread_name = "fake-slack"

    def __init__(self, *, bot_token: str = BOT_TOKEN, app_token: str = APP_TOKEN,
                 bot_user_id: str = "UBOT0001", bot_id: str = "BBOT0001",
                 team_id: str = "T0TEAM01", rate_limit: FakeRateLimit | None = None) -> None:
        super().__init__()
        # The workspace's limit on chat.postMessage, when one is enforced.
        self.rate_limit = rate_limit
        self.bot_token = bot_token
        self.app_token = app_token
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.team_id = team_id
        self.requests: list[Recorded] = []
        self.socket_received: list[dict[str, Any]] = []
        # Every message chat.postMessage took, for conversations.history.
        self.messages: list[dict[str, Any]] = []
        # `ts` of messages deleted (`delete_message`): a reply in their thread is refused.
        self.deleted: set[str] = set()
        self.socket_connections = 0
        # The workspace's admins and owners (`users.info`), each channel's creator
        # (`conversations.info`).
        self.workspace_admins: set[str] = set()
        self.channel_creators: dict[str, str] = {}
        # Who is in which channel (the bot's own user id among them), which channels
        # are private, and each user's locale (`users.info` with `include_locale`).
        self.members: dict[str, set[str]] = {}
        self.private_channels: set[str] = set()
        self.locales: dict[str, str] = {}
        self._failures: dict[str, deque[_Failure | None]] = {}
        self._response_uses: dict[str, int] = {}
        # The message (channel, ts) a click's response_url belongs to, by its name.
        self._clicked: dict[str, tuple[str, str]] = {}
        # response_urls past Slack's 30 minutes: every answer on them is refused.
        self._expired: set[str] = set()
        # Messages only one person sees (`chat.postEphemeral`): channel, user, text.
        self.ephemerals: list[dict[str, Any]] = []
        self._ts = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._sockets: list[web.WebSocketResponse] = []

    # --- lifecycle ----------------------------------------------------------------

    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=4 << 20)
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/response/{name}", self._response_url)
        app.router.add_get("/link", self._socket)
        return app

    async def on_stop(self) -> None:
        for ws in list(self._sockets):
            await ws.close()

    # --- addresses ----------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The Web API base URL to give slack_sdk (`base_url=`)."""
        return f"http://127.0.0.1:{self.port}/api/"

    def response_url(self, name: str = "r1", *, clicked: tuple[str, str] | None = None
                     ) -> str:
        """A slash command's response_url that lands on this fake; with `clicked`
        (channel, ts), a click's on that message: an answer to it with `replace_original`
        takes its place, one in the channel is a message of its own."""
        if clicked is not None:
            with self._lock:
                self._clicked[name] = clicked
        return f"http://127.0.0.1:{self.port}/response/{name}"

    def expire_response_url(self, name: str) -> None:
        """Let a response_url lapse, as Slack's do 30 minutes after the click:
        every answer on it is refused from now on (404 `expired_url`)."""
        with self._lock:
            self._expired.add(name)

    # --- scripting and reading ----------------------------------------------------

    def fail_next(self, endpoint: str, *, status: int = 200, body: Any = None,
                  headers: dict[str, str] | None = None, times: int = 1,
                  after: int = 0) -> None:
        """Answer `times` calls of `endpoint` (`chat.postMessage`, `response`) with this
        failure instead of success, once `after` calls have gone through."""
        with self._lock:
            queue = self._failures.setdefault(endpoint, deque())
            for _ in range(after):
                queue.append(None)
            for _ in range(times):
                queue.append(_Failure(status, body, dict(headers or {})))

    def calls(self, endpoint: str) -> list[Recorded]:
        """Recorded requests of one endpoint (`chat.postMessage`, `response`, ...)."""
        with self._lock:
            return [r for r in self.requests if r.api_method == endpoint]

    def posted(self, endpoint: str = "chat.postMessage") -> list[dict[str, Any]]:
        """The arguments of the successful calls of `endpoint`, in order."""
        return [r.params() for r in self.calls(endpoint) if r.ok]

    def channel_messages(self, channel: str) -> list[dict[str, Any]]:
        """The messages in `channel` as they are now (`ts`, `text`, `blocks`), oldest
        first."""
        with self._lock:
            return [dict(m) for m in self.messages if m["channel"] == channel]

    def delete_message(self, ts: str) -> None:
        """Delete a message, as a person in the channel would: replies in its thread are
        refused from now on (`thread_not_found`, as Slack answers)."""
        with self._lock:
            self.deleted.add(ts)
            self.messages = [m for m in self.messages if m["ts"] != ts]

    def wait_for(self, condition: Callable[[], bool], timeout: float = 10.0) -> None:
        """Block until `condition()` holds (checked whenever a request arrives)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError("fake Slack: condition not met in time")
                self._changed.wait(remaining)

    async def wait_for_async(self, condition: Callable[[], bool], timeout: float = 10.0) -> None:
        """`wait_for` from a test's event loop, without blocking it."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError("fake Slack: condition not met in time")
            await asyncio.sleep(0.01)

    def send_envelope(self, envelope: dict[str, Any]) -> None:
        """Push a Socket Mode envelope to every connected client."""
        if self._loop is None:
            raise RuntimeError("fake Slack is not running")

        async def send() -> None:
            for ws in list(self._sockets):
                await ws.send_str(json.dumps(envelope))

        asyncio.run_coroutine_threadsafe(send(), self._loop).result(10)

    # --- handlers -----------------------------------------------------------------

    def _record(self, request: web.Request, body: bytes, status: int, ok: bool) -> None:
        with self._changed:
            self.requests.append(Recorded(
                method=request.method, path=request.path,
                query={k: request.query.getall(k) for k in request.query},
                headers={k.lower(): v for k, v in request.headers.items()},
                body=body, status=status, ok=ok,
            ))
            self._changed.notify_all()

    def _take_failure(self, endpoint: str) -> _Failure | None:
        with self._lock:
            queue = self._failures.get(endpoint)
            return queue.popleft() if queue else None

    @staticmethod
    def _failure_response(failure: _Failure) -> web.Response:
        body = failure.body
        if isinstance(body, dict):
            return web.json_response(body, status=failure.status, headers=failure.headers)
        return web.Response(text=str(body or ""), status=failure.status, headers=failure.headers)

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        body = await request.read()
        failure = self._take_failure(method)
        if failure is not None:
            self._record(request, body, failure.status, ok=False)
            return self._failure_response(failure)
        if method == "chat.postMessage" and self.rate_limit is not None:
            wait = self.rate_limit.take()
            if wait is not None:
                self._record(request, body, 429, ok=False)
                return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                         headers={"Retry-After": str(wait)})
        answer = self._answer(method, request, body)
        self._record(request, body, 200, ok=bool(answer.get("ok")))
        return web.json_response(answer)

    def _answer(self, method: str, request: web.Request, body: bytes) -> dict[str, Any]:
        auth = request.headers.get("Authorization", "")
        expected = self.app_token if method == "apps.connections.open" else self.bot_token
        if auth != f"Bearer {expected}":
            return {"ok": False, "error": "invalid_auth"}
        if method == "auth.test":
            return {"ok": True, "url": "https://fake.slack.com/", "team": "Fake",
                    "user": "prdigest", "team_id": self.team_id, "user_id": self.bot_user_id,
                    "bot_id": self.bot_id, "is_enterprise_install": False}
        if method == "apps.connections.open":
            return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link?ticket=t1"}
        if method == "chat.postMessage":
            headers = {k.lower(): v for k, v in request.headers.items()}
            params = Recorded(request.method, request.path, {}, headers, body).params()
            problem = self._message_problem(params)
            if problem:
                return {"ok": False, "error": problem}
            metadata = params.get("metadata")
            if isinstance(metadata, str):
                metadata = json.loads(metadata)
            thread_ts = params.get("thread_ts") or None
            with self._lock:
                if thread_ts in self.deleted:
                    return {"ok": False, "error": "thread_not_found"}
                ts = self._keep(params, metadata=metadata, thread_ts=thread_ts)
            return {"ok": True, "channel": params.get("channel"), "ts": ts,
                    "message": {"text": params.get("text"), "ts": ts}}
        if method in ("chat.update", "chat.postEphemeral"):
            headers = {k.lower(): v for k, v in request.headers.items()}
            params = Recorded(request.method, request.path, {}, headers, body).params()
            problem = self._message_problem(params)
            if problem:
                return {"ok": False, "error": problem}
            if method == "chat.update":
                return self._update(params)
            with self._lock:
                self.ephemerals.append({"channel": params.get("channel"),
                                        "user": params.get("user"),
                                        "text": params.get("text"),
                                        "blocks": params.get("blocks"),
                                        "thread_ts": params.get("thread_ts")})
            return {"ok": True, "message_ts": "1700000000.999999"}
        if method in ("chat.unfurl", "views.publish", "users.conversations"):
            return self._surface(method, request, body)
        if method in ("conversations.history", "conversations.replies", "users.info",
                      "conversations.info"):
            params = Recorded(request.method, request.path,
                              {k: request.query.getall(k) for k in request.query},
                              {k.lower(): v for k, v in request.headers.items()}, body).params()
            if method == "conversations.history":
                return self._history(params)
            if method == "users.info":
                user = str(params.get("user") or "")
                admin = user in self.workspace_admins
                person = {"id": user, "is_admin": admin, "is_owner": False,
                          "is_primary_owner": False}
                if str(params.get("include_locale", "")).lower() in {"1", "true"} \
                        and user in self.locales:
                    person["locale"] = self.locales[user]
                return {"ok": True, "user": person}
            if method == "conversations.info":
                channel = str(params.get("channel") or "")
                return {"ok": True, "channel": {"id": channel,
                                                "creator": self.channel_creators.get(channel)}}
            return self._replies(params)
        return {"ok": False, "error": "unknown_method"}

    def _keep(self, params: dict[str, Any], *, channel: str | None = None,
              metadata: Any = None, thread_ts: str | None = None) -> str:
        """A new message of the bot's in the channel (the lock held); its `ts`."""
        blocks = params.get("blocks")
        self._ts += 1
        ts = f"1700000000.{self._ts:06d}"
        self.messages.append({"type": "message", "channel": channel or params.get("channel"),
                              "ts": ts, "text": params.get("text"),
                              "blocks": json.loads(blocks) if isinstance(blocks, str)
                              else blocks, "bot_id": self.bot_id, "metadata": metadata,
                              "thread_ts": thread_ts, "at": time.time()})
        return ts

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        """`chat.update` of one of the bot's messages (any age), as Slack allows; another
        message is `message_not_found` (or `cant_update_message` when not the bot's)."""
        blocks = params.get("blocks")
        with self._lock:
            found = [m for m in self.messages
                     if (m["channel"], m["ts"]) == (params.get("channel"), params.get("ts"))]
            if not found:
                return {"ok": False, "error": "message_not_found"}
            if found[0].get("bot_id") != self.bot_id:
                return {"ok": False, "error": "cant_update_message"}
            found[0].update(text=params.get("text"),
                            blocks=json.loads(blocks) if isinstance(blocks, str) else blocks)
        return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}

    def _answer_click(self, name: str, params: dict[str, Any]) -> bool:
        """An answer on a click's response_url, in its channel as Slack shows it: in
        place of the message clicked (`replace_original`), or a message of its own (an
        ephemeral one is the clicker's alone). False: no message to replace."""
        with self._lock:
            clicked = self._clicked.get(name)
            if params.get("replace_original") in (True, "true"):
                found = [m for m in self.messages
                         if clicked is not None and (m["channel"], m["ts"]) == clicked]
                for message in found:
                    message.update(text=params.get("text"), blocks=params.get("blocks"))
                return bool(found)
            if clicked is not None and params.get("response_type") == "in_channel":
                self._keep(params, channel=clicked[0])
        return True

    def _surface(self, method: str, request: web.Request, body: bytes) -> dict[str, Any]:
        """`chat.unfurl`, `views.publish` and `users.conversations`, checked as Slack
        checks them."""
        params = Recorded(request.method, request.path,
                          {k: request.query.getall(k) for k in request.query},
                          {k.lower(): v for k, v in request.headers.items()}, body).params()
        if method == "chat.unfurl":
            return self._unfurl(params)
        if method == "views.publish":
            return self._publish(params)
        return self._memberships(params)

    @staticmethod
    def _unfurl(params: dict[str, Any]) -> dict[str, Any]:
        """Slack takes `channel` and `ts`, or `unfurl_id` and `source`; `unfurls` maps
        each link to its attachment."""
        if not (params.get("channel") and params.get("ts")) and \
                not (params.get("unfurl_id") and params.get("source")):
            return {"ok": False, "error": "invalid_arguments"}
        unfurls = params.get("unfurls")
        if isinstance(unfurls, str):
            unfurls = json.loads(unfurls)
        if not isinstance(unfurls, dict) or not unfurls:
            return {"ok": False, "error": "invalid_unfurls_format"}
        for attachment in unfurls.values():
            if not isinstance(attachment, dict):
                return {"ok": False, "error": "invalid_unfurls_format"}
            if "blocks" in attachment and block_errors(attachment["blocks"]):
                return {"ok": False, "error": "invalid_blocks"}
        return {"ok": True}

    @staticmethod
    def _publish(params: dict[str, Any]) -> dict[str, Any]:
        """A Home view: type `home`, at most 100 blocks, each valid."""
        view = params.get("view")
        if isinstance(view, str):
            view = json.loads(view)
        if not params.get("user_id") or not isinstance(view, dict):
            return {"ok": False, "error": "invalid_arguments"}
        blocks = view.get("blocks")
        if view.get("type") != "home" or not isinstance(blocks, list):
            return {"ok": False, "error": "invalid_arguments"}
        errors = [e for e in block_errors(blocks) if "blocks, more than" not in e]
        if len(blocks) > 100 or errors:
            return {"ok": False, "error": "invalid_blocks"}
        return {"ok": True, "view": {"id": "V0HOME01", "type": "home"}}

    def _memberships(self, params: dict[str, Any]) -> dict[str, Any]:
        """The channels `user` is in, as the bot's token sees them: public ones, and
        private ones only where the bot is a member too; paged by `limit`/`cursor`."""
        user = str(params.get("user") or self.bot_user_id)
        types = set(str(params.get("types") or "public_channel").split(","))
        with self._lock:
            found = sorted(
                channel for channel, people in self.members.items()
                if user in people and (
                    ("private_channel" in types and channel in self.private_channels
                     and self.bot_user_id in people)
                    or ("public_channel" in types and channel not in self.private_channels)))
        start = int(params.get("cursor") or 0)
        limit = int(params.get("limit") or 100)
        page = found[start:start + limit]
        following = str(start + limit) if start + limit < len(found) else ""
        return {"ok": True, "channels": [{"id": c, "is_private": c in self.private_channels}
                                         for c in page],
                "response_metadata": {"next_cursor": following}}

    def _history(self, params: dict[str, Any]) -> dict[str, Any]:
        """A channel's messages, newest first, since `oldest`; the message metadata only
        with `include_all_metadata` (as Slack does)."""
        channel = params.get("channel")
        oldest = float(params.get("oldest") or 0)
        with self._lock:
            # The ts here are fixed-epoch; `at` is when the message really arrived.
            # Like Slack's, the history holds no thread replies (only their parents).
            found = [dict(m) for m in self.messages
                     if m["channel"] == channel and m["at"] >= oldest and not m["thread_ts"]]
        found = _shown(found, params)
        limit = int(params.get("limit") or 100)
        return {"ok": True, "messages": list(reversed(found))[:limit],
                "has_more": len(found) > limit}

    def _replies(self, params: dict[str, Any]) -> dict[str, Any]:
        """A thread, oldest first: its parent, then the replies since `oldest`;
        `thread_not_found` when the parent is gone (as Slack answers)."""
        channel, ts = params.get("channel"), params.get("ts")
        oldest = float(params.get("oldest") or 0)
        with self._lock:
            parent = [dict(m) for m in self.messages
                      if m["channel"] == channel and m["ts"] == ts]
            if not parent:
                return {"ok": False, "error": "thread_not_found"}
            replies = [dict(m) for m in self.messages if m["channel"] == channel
                       and m["thread_ts"] == ts and m["at"] >= oldest]
        found = _shown(parent + replies, params)
        limit = int(params.get("limit") or 1000)
        return {"ok": True, "messages": found[:limit], "has_more": len(found) > limit}

    @staticmethod
    def _message_problem(params: dict[str, Any]) -> str | None:
        blocks = params.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        if not params.get("channel") and "response_type" not in params:
            return "channel_not_found"
        if not params.get("text") and not blocks:
            return "no_text"
        if slack_length(str(params.get("text") or "")) > MAX_MESSAGE_TEXT:
            return "msg_too_long"
        if blocks is not None:
            if block_errors(blocks):
                return "invalid_blocks"
            if sum(slack_length(t) for t in block_texts(blocks)) > MAX_CUMULATIVE_BLOCK_TEXT:
                return "msg_blocks_too_long"
        return None

    async def _response_url(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = await request.read()
        failure = self._take_failure("response")
        if failure is not None:
            self._record(request, body, failure.status, ok=False)
            return self._failure_response(failure)
        with self._lock:
            uses = self._response_uses[name] = self._response_uses.get(name, 0) + 1
            expired = name in self._expired
        if expired:
            self._record(request, body, 404, ok=False)
            return web.Response(text="expired_url", status=404)
        if uses > RESPONSE_URL_USES:
            self._record(request, body, 404, ok=False)
            return web.Response(text="used_url", status=404)
        try:
            params = json.loads(body)
        except ValueError:
            self._record(request, body, 400, ok=False)
            return web.Response(text="invalid_payload", status=400)
        problem = self._message_problem(params)
        if problem:
            self._record(request, body, 400, ok=False)
            return web.Response(text=problem, status=400)
        if not self._answer_click(name, params):
            self._record(request, body, 404, ok=False)
            return web.Response(text="message_not_found", status=404)
        self._record(request, body, 200, ok=True)
        return web.Response(text="ok")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        with self._changed:
            self.socket_connections += 1
            self._changed.notify_all()
        await ws.send_str(json.dumps({
            "type": "hello", "num_connections": 1,
            "debug_info": {"host": "fake", "approximate_connection_time": 3600},
            "connection_info": {"app_id": "A0FAKE01"},
        }))
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    with self._changed:
                        self.socket_received.append(json.loads(message.data))
                        self._changed.notify_all()
        finally:
            self._sockets.remove(ws)
        return ws
