"""A fake Feishu Open API: an aiohttp server (HTTP, and the WebSocket of the long
connection) on 127.0.0.1, on its own event loop in its own thread, recording every
request.

The real lark-oapi client is pointed at it with `.domain(fake.base_url)`. Its token
fetch is synchronous (`requests`), so the server must never share the test's event
loop. Also here: the inbound side as Feishu does it - events signed with
sha256(timestamp + nonce + encrypt_key + body), bodies AES-256-CBC encrypted with
SHA-256(encrypt_key) as the key - and a factory for `im.message.receive_v1` events.

It keeps the card of each message the bot sent, so `PATCH /open-apis/im/v1/messages/:id`
(`im.v1.message.patch`) changes that card in place, refused as Feishu refuses it: a
message that is not one of the app's, one recalled, a card not declared shared
(`config.update_multi`) before and after.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from aiohttp import WSMsgType, web
from Crypto.Cipher import AES
from lark_oapi.ws.pb.pbbp2_pb2 import Frame

from testkit.fakes.aiohttp_server import ThreadedAiohttpServer
from testkit.fakes.rate_limit import FakeRateLimit

_RESPONSE = web.RequestKey("response", web.Response)
TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
MESSAGES_PATH = "/open-apis/im/v1/messages"
CHATS_PATH = "/open-apis/im/v1/chats"
BOT_INFO_PATH = "/open-apis/bot/v3/info"
WS_ENDPOINT_PATH = "/callback/ws/endpoint"
SERVICE_ID = 7


@dataclass(frozen=True)
class Recorded:
    """One request as it arrived."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    # The client's port: requests on one kept-alive connection share it.
    peer: int = 0

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class SentCard:
    """An interactive message the bot sent, decoded: where to, and the card itself."""

    endpoint: str  # "create" or "reply"
    target: str  # chat id (create) or the message replied to (reply)
    receive_id_type: str | None
    uuid: str | None
    content: str  # the `content` string exactly as sent
    card: dict[str, Any]
    request: Recorded
    in_thread: bool = False  # a reply with `reply_in_thread`
    message_id: str = ""  # the id the fake gave it

    def markdown(self) -> str:
        """Every markdown element's text, in order, one per line."""
        return "\n".join(e["content"] for e in self.card["body"]["elements"]
                         if e.get("tag") == "markdown")

    def buttons(self) -> list[tuple[str, str]]:
        """(label, url) of every button that opens a page."""
        found: list[tuple[str, str]] = []

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if node.get("tag") == "button":
                    found.extend((node["text"]["content"], b["default_url"])
                                 for b in node["behaviors"] if b["type"] == "open_url")
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(self.card)
        return found


@dataclass
class _Failure:
    path_contains: str
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    times: int


@dataclass
class FakeFeishu(ThreadedAiohttpServer):
    """Feishu's Open API for one app. Start with `with FakeFeishu(...) as fake:`."""

    app_id: str
    app_secret: str
    bot_open_id: str = "ou_fake_bot"
    bot_name: str = "prdigest"
    # The app's limit on sending messages, when one is enforced: beyond it a 429 with
    # code 99991400 and `x-ogw-ratelimit-reset`, as Feishu's gateway answers.
    rate_limit: FakeRateLimit | None = None
    requests: list[Recorded] = field(default_factory=list)
    accepted: list[Recorded] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    # Chat of every message the fake took, by id; ids recalled (`recall`).
    chats: dict[str, str] = field(default_factory=dict)
    recalled: set[str] = field(default_factory=set)
    # Each chat's owner and managers (open_ids), for the chat's information.
    chat_owners: dict[str, str] = field(default_factory=dict)
    chat_managers: dict[str, list[str]] = field(default_factory=dict)
    # Chats that are one person's chat with the bot (`chat_mode` "p2p"); others are groups.
    direct_chats: set[str] = field(default_factory=set)
    _answered: dict[int, str] = field(default_factory=dict)
    # The content of every card message the app sent, as it is now, by message id.
    contents: dict[str, str] = field(default_factory=dict)
    _failures: list[_Failure] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _ws: _FakeLongConnection = field(default_factory=lambda: _FakeLongConnection())

    thread_name = "fake-feishu"

    def __post_init__(self) -> None:
        super().__init__()

    # --- lifecycle -------------------------------------------------------------------

    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=4 << 20)
        app.router.add_get("/ws", self._ws.session)
        for method in ("GET", "POST", "PATCH"):
            app.router.add_route(method, "/{tail:.*}", self._handle)
        return app

    async def on_stop(self) -> None:
        await self._ws.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- what arrived ----------------------------------------------------------------

    def calls(self, path_prefix: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path.startswith(path_prefix)]

    def sent_cards(self) -> list[SentCard]:
        """Every message create/reply the fake accepted, in arrival order."""
        cards: list[SentCard] = []
        with self._lock:
            accepted = [r for r in self.accepted if r.method == "POST"]
        for r in accepted:
            body = r.json()
            if r.path == MESSAGES_PATH:
                endpoint, target = "create", body["receive_id"]
                id_type = r.query.get("receive_id_type", [None])[0]
            else:
                endpoint, target, id_type = "reply", r.path.split("/")[-2], None
            cards.append(SentCard(endpoint=endpoint, target=target, receive_id_type=id_type,
                                  uuid=body.get("uuid"), content=body["content"],
                                  card=json.loads(body["content"]), request=r,
                                  in_thread=bool(body.get("reply_in_thread")),
                                  message_id=self._answered.get(id(r), "")))
        return cards

    def card(self, message_id: str) -> dict[str, Any] | None:
        """The card a message of the app's shows now (after any patch), else None."""
        with self._lock:
            content = self.contents.get(message_id)
        return None if content is None else json.loads(content)

    def patches(self) -> list[Recorded]:
        """The card updates (`im.v1.message.patch`) the fake accepted, in order."""
        with self._lock:
            return [r for r in self.accepted if r.method == "PATCH"]

    def recall(self, message_id: str) -> None:
        """Recall a message, as its sender would: replies to it are refused from now on
        (code 230011, as Feishu's reply API answers)."""
        with self._lock:
            self.recalled.add(message_id)

    def thread_replies(self, message_id: str) -> list[SentCard]:
        """The cards sent in reply to `message_id`, in order."""
        return [c for c in self.sent_cards() if c.endpoint == "reply" and c.target == message_id]

    def wait_for_cards(self, count: int, timeout: float = 5.0) -> list[SentCard]:
        """The sent cards once at least `count` arrived; fails after `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            cards = self.sent_cards()
            if len(cards) >= count:
                return cards
            time.sleep(0.01)
        raise AssertionError(f"expected {count} cards, got {len(self.sent_cards())}")

    def fail_next(self, path_contains: str, *, status: int, body: dict[str, Any],
                  headers: dict[str, str] | None = None, times: int = 1) -> None:
        """Answer the next `times` requests whose path contains `path_contains` so."""
        with self._lock:
            self._failures.append(_Failure(path_contains, status, body, headers or {}, times))

    # --- the API ---------------------------------------------------------------------

    def _respond(self, request: web.Request, status: int, body: dict[str, Any],
                 headers: dict[str, str] | None = None) -> None:
        """Set the answer to `request` (subclasses hook here to watch answers)."""
        request[_RESPONSE] = web.json_response(body, status=status, headers=headers)

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        path = request.rel_url.raw_path
        peer = request.transport.get_extra_info("peername") if request.transport else None
        recorded = Recorded(method=request.method, path=path,
                            query=parse_qs(request.rel_url.raw_query_string),
                            headers={k.lower(): v for k, v in request.headers.items()},
                            body=body, peer=peer[1] if peer else 0)
        with self._lock:
            self.requests.append(recorded)
            failure = next((f for f in self._failures if f.path_contains in path), None)
            if failure is not None:
                failure.times -= 1
                if failure.times <= 0:
                    self._failures.remove(failure)
        if failure is not None:
            self._respond(request, failure.status, failure.body, failure.headers)
        elif path == TOKEN_PATH:
            self._token(request, recorded)
        elif path == WS_ENDPOINT_PATH:
            self._ws_endpoint(request, recorded)
        elif not self._authorised(recorded):
            self._respond(request, 400, {"code": 99991663, "msg": "Invalid access token"})
        elif path == BOT_INFO_PATH:
            self._respond(request, 200, {"code": 0, "msg": "ok", "bot": {
                "activate_status": 2, "app_name": self.bot_name, "avatar_url": "",
                "ip_white_list": [], "open_id": self.bot_open_id}})
        elif path.startswith(CHATS_PATH + "/") and request.method == "GET":
            chat = path[len(CHATS_PATH) + 1:].split("?", 1)[0]
            self._respond(request, 200, {"code": 0, "msg": "ok", "data": {
                "chat_id": chat, "owner_id_type": "open_id",
                "chat_mode": "p2p" if chat in self.direct_chats else "group",
                "owner_id": self.chat_owners.get(chat, "ou_someone_else"),
                "user_manager_id_list": self.chat_managers.get(chat, [])}})
        elif path.startswith(MESSAGES_PATH + "/") and request.method == "PATCH":
            self._patch(request, recorded)
        elif path == MESSAGES_PATH or (path.startswith(MESSAGES_PATH + "/")
                                       and path.endswith("/reply")):
            wait = self.rate_limit.take() if self.rate_limit is not None else None
            if wait is None:
                self._message(request, recorded)
            else:
                self._respond(request, 429, {"code": 99991400,
                                             "msg": "request trigger frequency limit"},
                              {"x-ogw-ratelimit-reset": str(wait)})
        else:
            self._respond(request, 404, {"code": 404, "msg": f"no route {path}"})
        return request[_RESPONSE]

    def _authorised(self, recorded: Recorded) -> bool:
        header = recorded.headers.get("authorization", "")
        with self._lock:
            return header.startswith("Bearer ") and header[7:] in self.tokens

    def _token(self, request: web.Request, recorded: Recorded) -> None:
        asked = recorded.json()
        if asked.get("app_id") != self.app_id or asked.get("app_secret") != self.app_secret:
            self._respond(request, 400, {"code": 10014, "msg": "app secret invalid"})
            return
        token = f"t-{uuid.uuid4().hex}"
        with self._lock:
            self.tokens.append(token)
        self._respond(request, 200, {"code": 0, "msg": "ok", "tenant_access_token": token,
                                     "expire": 7200})

    def _message(self, request: web.Request, recorded: Recorded) -> None:
        body = recorded.json()
        if body.get("msg_type") != "interactive" or not isinstance(body.get("content"), str):
            self._respond(request, 400, {"code": 230001, "msg": "invalid message content"})
            return
        if len(recorded.body) > 30 * 1024:
            self._respond(request, 400, {"code": 230025, "msg": "The length of the message "
                                         "content reaches its limit"})
            return
        card = json.loads(body["content"])
        if card.get("schema") != "2.0":
            self._respond(request, 400, {"code": 200621, "msg": "card schema"})
            return
        parent = None if recorded.path == MESSAGES_PATH else recorded.path.split("/")[-2]
        with self._lock:
            if parent in self.recalled:
                gone = True
            else:
                gone = False
                self.accepted.append(recorded)
                message_id = f"om_fake_{next(self._ids)}"
                self._answered[id(recorded)] = message_id
                self.contents[message_id] = body["content"]
                chat_id = body.get("receive_id") or self.chats.get(parent or "", "oc_reply_chat")
                self.chats[message_id] = chat_id
        if gone:
            self._respond(request, 400, {"code": 230011, "msg": "The message is recalled."})
            return
        self._respond(request, 200, {"code": 0, "msg": "success", "data": {
            "message_id": message_id, "chat_id": chat_id, "msg_type": "interactive",
            "create_time": str(int(time.time() * 1000)), "deleted": False, "updated": False,
            "sender": {"id": self.app_id, "id_type": "app_id", "sender_type": "app"},
            "body": {"content": body["content"]}}})

    def _patch(self, request: web.Request, recorded: Recorded) -> None:
        """A card message of the app's given a new card, as `im.v1.message.patch` does."""
        message_id = recorded.path[len(MESSAGES_PATH) + 1:]
        body = recorded.json()
        content = body.get("content")
        if not isinstance(content, str) or len(recorded.body) > 30 * 1024:
            self._respond(request, 400, {"code": 230001, "msg": "invalid message content"})
            return
        with self._lock:
            before = self.contents.get(message_id)
            recalled = message_id in self.recalled
        if recalled:
            self._respond(request, 400, {"code": 230011, "msg": "The message is recalled."})
        elif before is None:
            self._respond(request, 400, {"code": 231003, "msg": "The message is not found"})
        elif not (_shared(before) and _shared(content)):
            self._respond(request, 400, {"code": 230001, "msg": "invalid message content, "
                                         "ext=update_multi of the card is not true"})
        else:
            with self._lock:
                self.contents[message_id] = content
                self.accepted.append(recorded)
            self._respond(request, 200, {"code": 0, "msg": "success", "data": {}})

    # --- the long connection ---------------------------------------------------------

    def _ws_endpoint(self, request: web.Request, recorded: Recorded) -> None:
        asked = recorded.json()
        if asked.get("AppID") != self.app_id or asked.get("AppSecret") != self.app_secret:
            self._respond(request, 200, {"code": 1000040351, "msg": "invalid credentials"})
            return
        self._respond(request, 200, {"code": 0, "msg": "ok", "data": {
            "URL": f"ws://127.0.0.1:{self.port}/ws?device_id=fake-device"
                   f"&service_id={SERVICE_ID}",
            "ClientConfig": {"ReconnectCount": 0, "ReconnectInterval": 1,
                             "ReconnectNonce": 0, "PingInterval": 120}}})

    def push_event(self, event: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
        """Deliver `event` over the long connection; returns the client's answer."""
        deadline = time.monotonic() + timeout
        while not self._ws.connected():
            if time.monotonic() > deadline:
                raise AssertionError("no long connection was opened")
            time.sleep(0.01)
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(self._ws.push(event),
                                                self._loop).result(timeout)


class _FakeLongConnection:
    """The WebSocket side, on the fake's app: protobuf frames as Feishu's gateway sends
    them."""

    def __init__(self) -> None:
        self._connection: web.WebSocketResponse | None = None  # the latest
        self._open: list[web.WebSocketResponse] = []
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._seq = itertools.count(1)

    async def session(self, request: web.Request) -> web.WebSocketResponse:
        connection = web.WebSocketResponse()
        await connection.prepare(request)
        self._connection = connection
        self._open.append(connection)
        try:
            async for message in connection:
                if message.type != WSMsgType.BINARY:
                    continue
                frame = Frame()
                frame.ParseFromString(message.data)
                headers = {h.key: h.value for h in frame.headers}
                if frame.method == 1 and headers.get("message_id") in self._answers:
                    answer = self._answers.pop(headers["message_id"])
                    if not answer.done():
                        answer.set_result(json.loads(frame.payload))
        finally:
            self._open.remove(connection)
        return connection

    def connected(self) -> bool:
        return self._connection is not None

    async def push(self, event: dict[str, Any]) -> dict[str, Any]:
        assert self._connection is not None
        message_id = f"ws-msg-{next(self._seq)}"
        frame = Frame()
        frame.SeqID = next(self._seq)
        frame.LogID = frame.SeqID
        frame.service = SERVICE_ID
        frame.method = 1
        for key, value in (("type", "event"), ("message_id", message_id),
                           ("trace_id", f"trace-{message_id}"), ("sum", "1"), ("seq", "0")):
            header = frame.headers.add()
            header.key, header.value = key, value
        frame.payload = json.dumps(event).encode()
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[message_id] = answer
        await self._connection.send_bytes(frame.SerializeToString())
        return await answer

    async def close(self) -> None:
        for connection in list(self._open):
            await connection.close()


def _shared(content: str) -> bool:
    """Whether a card is declared shared (`config.update_multi`): only such a card can be
    updated for everyone."""
    try:
        card = json.loads(content)
    except ValueError:
        return False
    return isinstance(card, dict) and card.get("config", {}).get("update_multi") is True


# --- the inbound side, as Feishu signs and encrypts it ----------------------------------


def encrypt(encrypt_key: str, payload: dict[str, Any]) -> bytes:
    """`{"encrypt": ...}` as Feishu sends an event when an encrypt key is set."""
    plain = json.dumps(payload).encode()
    pad = 16 - len(plain) % 16
    iv = os.urandom(16)
    cipher = AES.new(hashlib.sha256(encrypt_key.encode()).digest(), AES.MODE_CBC, iv)
    blob = base64.b64encode(iv + cipher.encrypt(plain + bytes([pad]) * pad)).decode()
    return json.dumps({"encrypt": blob}).encode()


def signature(timestamp: str, nonce: str, encrypt_key: str, body: bytes) -> str:
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode() + body).hexdigest()


def signed_headers(body: bytes, encrypt_key: str, *, timestamp: int | None = None,
                   nonce: str = "nonce-1") -> dict[str, str]:
    """The headers Feishu adds; Starlette and httpx pass them on lower-cased."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    return {"X-Lark-Request-Timestamp": ts, "X-Lark-Request-Nonce": nonce,
            "X-Lark-Signature": signature(ts, nonce, encrypt_key, body),
            "Content-Type": "application/json"}


def message_event(
    text: str,
    *,
    token: str,
    event_id: str | None = None,
    chat_id: str = "oc_0123456789abcdef",
    chat_type: str = "group",
    message_id: str = "om_question_1",
    sender_open_id: str = "ou_alice",
    sender_type: str = "user",
    mentions: list[dict[str, Any]] | None = None,
    message_type: str = "text",
    content: dict[str, Any] | None = None,
    app_id: str = "cli_fake",
) -> dict[str, Any]:
    """An `im.message.receive_v1` event (schema 2.0) as Feishu delivers it."""
    return {
        "schema": "2.0",
        "header": {"event_id": event_id or uuid.uuid4().hex, "token": token,
                   "create_time": str(int(time.time() * 1000)),
                   "event_type": "im.message.receive_v1", "tenant_key": "tenant-1",
                   "app_id": app_id},
        "event": {
            "sender": {"sender_id": {"open_id": sender_open_id, "union_id": "on_alice",
                                     "user_id": "alice"},
                       "sender_type": sender_type, "tenant_key": "tenant-1"},
            "message": {"message_id": message_id, "root_id": "", "parent_id": "",
                        "create_time": str(int(time.time() * 1000)),
                        "chat_id": chat_id, "chat_type": chat_type,
                        "message_type": message_type,
                        "content": json.dumps(content if content is not None
                                              else {"text": text}),
                        "mentions": mentions or []},
        },
    }


def bot_mention(key: str = "@_user_1", open_id: str = "ou_fake_bot",
                name: str = "prdigest") -> dict[str, Any]:
    return {"key": key, "id": {"open_id": open_id, "union_id": "on_bot", "user_id": ""},
            "name": name, "tenant_key": "tenant-1"}



def card_action_event(data: str, *, token: str, event_id: str | None = None,
                      chat_id: str = "oc_0123456789abcdef", message_id: str = "om_card_1",
                      operator_open_id: str = "ou_alice", app_id: str = "cli_fake"
                      ) -> dict[str, Any]:
    """A `card.action.trigger` callback (schema 2.0) as Feishu delivers it: a click on
    a card 2.0 button whose callback value is `{"action": data}`."""
    return {
        "schema": "2.0",
        "header": {"event_id": event_id or uuid.uuid4().hex, "token": token,
                   "create_time": str(int(time.time() * 1000)),
                   "event_type": "card.action.trigger", "tenant_key": "tenant-1",
                   "app_id": app_id},
        "event": {
            "operator": {"tenant_key": "tenant-1", "user_id": "alice",
                         "open_id": operator_open_id, "union_id": "on_alice"},
            "token": "c-" + uuid.uuid4().hex,  # the card's update token
            "action": {"value": {"action": data}, "tag": "button"},
            "host": "im_message",
            "context": {"open_message_id": message_id, "open_chat_id": chat_id},
        },
    }
