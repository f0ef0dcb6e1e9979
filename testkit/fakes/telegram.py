"""A fake Telegram Bot API: an aiohttp server on 127.0.0.1:0 on its own loop and thread.

It speaks the subset prdigest uses (getMe, sendMessage, editMessageText,
answerCallbackQuery, getChatMember, setWebhook, deleteWebhook, getUpdates,
setMyCommands), records every request with its decoded form fields, and checks
`sendMessage` and `editMessageText` the way Telegram does: HTML parse mode must hold
only Telegram's tags, properly nested, with `& < >` escaped, and at most 4096 characters
after parsing. It keeps the messages the bot sent, so an edit changes one of them - and
is refused, as Telegram refuses it, for a message that is not the bot's, one deleted,
or one left as it was ("message is not modified").
Failures can be scripted per method (`fail_next`), e.g. a 429 with `retry_after`;
`rate_limit` (a `FakeRateLimit`) refuses `sendMessage` beyond a rate as Telegram's flood
control does, 429 with `retry_after`.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from testkit.fakes.aiohttp_server import ThreadedAiohttpServer
from testkit.fakes.rate_limit import FakeRateLimit

MAX_TEXT_LENGTH = 4096
TOKEN = "123456:TEST-token_AbCdEf"

# Tags Telegram's HTML parse mode accepts, with the attributes each may carry.
_ALLOWED_TAGS: dict[str, set[str]] = {
    "b": set(), "strong": set(), "i": set(), "em": set(), "u": set(), "ins": set(),
    "s": set(), "strike": set(), "del": set(), "tg-spoiler": set(), "span": {"class"},
    "a": {"href"}, "code": {"class"}, "pre": set(), "blockquote": {"expandable"},
    "tg-emoji": {"emoji-id"},
}
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s+[A-Za-z-]+(?:=\"[^\"<>]*\")?)*)\s*>")
_ATTRIBUTE = re.compile(r"([A-Za-z-]+)(?:=\"([^\"<>]*)\")?")
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#[0-9]+|#x[0-9A-Fa-f]+);")
_PLAIN = re.compile(r"[^<>&]+")
# The entity type Telegram reports for each tag.
_ENTITY_TYPES = {
    "b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline",
    "ins": "underline", "s": "strikethrough", "strike": "strikethrough",
    "del": "strikethrough", "tg-spoiler": "spoiler", "span": "spoiler", "a": "text_link",
    "code": "code", "pre": "pre", "blockquote": "blockquote", "tg-emoji": "custom_emoji",
}


class EntityError(ValueError):
    """Text that Telegram would refuse with "can't parse entities"."""


def parse_html(text: str) -> tuple[str, list[dict[str, Any]]]:
    """The plain text and entities of an HTML-mode message, or `EntityError`."""
    plain: list[str] = []
    entities: list[dict[str, Any]] = []
    stack: list[tuple[str, int, dict[str, str]]] = []
    offset = 0  # in UTF-16 code units, as Telegram counts
    i = 0
    while i < len(text):
        char = text[i]
        if char == "<":
            match = _TAG.match(text, i)
            if match is None:
                raise EntityError(f"unsupported start tag at byte offset {i}")
            closing, name, raw_attributes = match[1], match[2].lower(), match[3]
            if name not in _ALLOWED_TAGS:
                raise EntityError(f'unsupported start tag "{name}" at byte offset {i}')
            if closing:
                if not stack or stack[-1][0] != name:
                    raise EntityError(f'can\'t find start tag for end tag "{name}"')
                opened, start, attributes = stack.pop()
                entity: dict[str, Any] = {"type": _ENTITY_TYPES[opened], "offset": start,
                                          "length": offset - start}
                if opened == "a":
                    entity["url"] = attributes.get("href", "")
                entities.append(entity)
            else:
                attributes = {}
                for attribute in _ATTRIBUTE.finditer(raw_attributes):
                    key = attribute[1].lower()
                    if key not in _ALLOWED_TAGS[name]:
                        raise EntityError(f'unsupported attribute "{key}" of tag "{name}"')
                    attributes[key] = html.unescape(attribute[2] or "")
                stack.append((name, offset, attributes))
            i = match.end()
            continue
        if char == ">":
            raise EntityError(f"unescaped > at byte offset {i}")
        if char == "&":
            entity_match = _ENTITY.match(text, i)
            if entity_match is None:
                raise EntityError(f"unsupported entity at byte offset {i}")
            decoded = html.unescape(entity_match[0])
            i = entity_match.end()
        else:
            run = _PLAIN.match(text, i)  # text up to the next markup character
            assert run is not None
            decoded = run[0]
            i = run.end()
        plain.append(decoded)
        offset += utf16_length(decoded)
    if stack:
        raise EntityError(f'can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    return "".join(plain), entities


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class RecordedRequest:
    """One request as the fake received it."""

    method: str  # Bot API method, e.g. "sendMessage"
    path: str
    token: str
    headers: dict[str, str]
    fields: dict[str, str]
    body: bytes
    status: int = 0  # what the fake answered
    reply_to: int | None = None  # the message Telegram attached it to as a reply

    @property
    def accepted(self) -> bool:
        return self.status == 200

    def json_field(self, name: str) -> Any:
        return json.loads(self.fields[name])


@dataclass
class _Failure:
    status: int
    description: str
    parameters: dict[str, Any] | None = None
    after: int = 0  # calls still to answer normally before this failure


@dataclass
class _State:
    requests: list[RecordedRequest] = field(default_factory=list)
    failures: dict[str, deque[_Failure]] = field(default_factory=dict)
    updates: list[dict[str, Any]] = field(default_factory=list)
    webhook: dict[str, str] = field(default_factory=dict)
    next_message_id: int = 1000
    # Messages deleted (`delete_message`), by chat: a reply to one is refused.
    deleted: set[tuple[str, int]] = field(default_factory=set)
    # Seconds to keep the answer of the next calls of a method after doing what they ask.
    stalls: dict[str, deque[float]] = field(default_factory=dict)
    # The callback queries answered (`answerCallbackQuery`): each may be answered once.
    answered_queries: set[str] = field(default_factory=set)
    # The bot's messages as they are now (text as sent, keyboard), by chat and id.
    messages: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)


class FakeTelegram(ThreadedAiohttpServer):
    """`with FakeTelegram() as tg:` then `Application.builder().base_url(tg.base_url)`."""

    thread_name = "fake-telegram"

    def __init__(self, token: str = TOKEN, *, bot_id: int = 777000111,
                 username: str = "prdigest_bot", long_poll_seconds: float = 0.2,
                 rate_limit: FakeRateLimit | None = None) -> None:
        super().__init__()
        # The bot's limit on sendMessage across its chats, when one is enforced.
        self.rate_limit = rate_limit
        self.token = token
        self.bot_id = bot_id
        self.username = username
        self.long_poll_seconds = long_poll_seconds
        # Each chat's creator and administrators (`getChatMember`), by chat id.
        self.chat_admins: dict[str, set[int]] = {}
        self._state = _State()
        self._changed = threading.Condition()

    # --- lifecycle -----------------------------------------------------------------

    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=4 << 20)
        for method in ("GET", "POST"):
            app.router.add_route(method, "/{tail:.*}", self._handle)
        return app

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    # --- scripting -----------------------------------------------------------------

    def fail_next(self, method: str, status: int, description: str, *,
                  retry_after: int | None = None, times: int = 1, after: int = 0,
                  parameters: dict[str, Any] | None = None) -> None:
        """After `after` normal answers, the next `times` calls of `method` get this
        error; `retry_after` (a 429) and `parameters` become the error's `parameters`."""
        if retry_after is not None:
            parameters = {**(parameters or {}), "retry_after": retry_after}
        with self._changed:
            queue = self._state.failures.setdefault(method, deque())
            for index in range(times):
                queue.append(_Failure(status, description, parameters,
                                      after=after if index == 0 else 0))

    def stall_after_accepting(self, method: str, seconds: float, *, times: int = 1) -> None:
        """The next `times` calls of `method` are carried out (a message is posted) and
        their answer is held back `seconds`: a client that stops waiting before then
        cannot tell whether Telegram took them."""
        with self._changed:
            self._state.stalls.setdefault(method, deque()).extend([seconds] * times)

    def delete_message(self, chat_id: str, message_id: int) -> None:
        """Delete a message, as a chat admin would: replies to it are refused from now on
        ("message to be replied not found"), or sent unattached when the sender allows."""
        with self._changed:
            self._state.deleted.add((str(chat_id), int(message_id)))

    def replies_to(self, message_id: int) -> list[dict[str, str]]:
        """The sent messages that Telegram attached as replies to `message_id`."""
        return [r.fields for r in self.calls("sendMessage")
                if r.accepted and r.reply_to == message_id]

    def push_update(self, update: dict[str, Any]) -> None:
        """An update for `getUpdates` (long polling) to hand out."""
        with self._changed:
            self._state.updates.append(update)
            self._changed.notify_all()

    # --- what arrived ----------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._changed:
            return list(self._state.requests)

    def calls(self, method: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == method]

    def sent(self) -> list[dict[str, str]]:
        """The form fields of every `sendMessage` Telegram accepted (answered 200)."""
        return [r.fields for r in self.calls("sendMessage") if r.accepted]

    def edits(self) -> list[dict[str, str]]:
        """The form fields of every `editMessageText` Telegram accepted."""
        return [r.fields for r in self.calls("editMessageText") if r.accepted]

    def message(self, chat_id: str, message_id: int) -> dict[str, str] | None:
        """One of the bot's messages as the chat shows it now: `text` (as sent, HTML)
        and `reply_markup` (its keyboard, "" for none); None for another's."""
        with self._changed:
            kept = self._state.messages.get((str(chat_id), int(message_id)))
            return None if kept is None else dict(kept)

    @property
    def webhook(self) -> dict[str, str]:
        with self._changed:
            return dict(self._state.webhook)

    def wait_for(self, method: str, count: int = 1, timeout: float = 10.0,
                 *, accepted: bool = True) -> list[RecordedRequest]:
        """Block until `count` calls of `method` arrived (accepted ones only, by default)."""
        deadline = time.monotonic() + timeout

        def matching() -> list[RecordedRequest]:
            found = [r for r in self._state.requests if r.method == method]
            return [r for r in found if r.accepted] if accepted else found

        with self._changed:
            while len(matching()) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        f"expected {count} {method} call(s), got {len(matching())}"
                    )
                self._changed.wait(remaining)
            return matching()

    # --- the API ---------------------------------------------------------------------

    def _answer(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        if request.token != self.token:
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        with self._changed:
            queue = self._state.failures.get(request.method)
            failure = None
            if queue and queue[0].after > 0:
                queue[0].after -= 1
            elif queue:
                failure = queue.popleft()
        if failure is not None:
            body: dict[str, Any] = {"ok": False, "error_code": failure.status,
                                    "description": failure.description}
            if failure.parameters:
                body["parameters"] = failure.parameters
            return failure.status, body
        if request.method == "sendMessage" and self.rate_limit is not None:
            wait = self.rate_limit.take()
            if wait is not None:
                return 429, {"ok": False, "error_code": 429,
                             "description": f"Too Many Requests: retry after {wait}",
                             "parameters": {"retry_after": wait}}
        handler = getattr(self, f"_api_{request.method}", None)
        if handler is None:
            return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        result: tuple[int, dict[str, Any]] = handler(request)
        return result

    def _api_getMe(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        return 200, {"ok": True, "result": {
            "id": self.bot_id, "is_bot": True, "first_name": "prdigest",
            "username": self.username, "can_join_groups": True,
            "can_read_all_group_messages": False, "supports_inline_queries": False,
        }}

    def _api_getChatMember(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        fields = request.fields
        chat, user_id = str(fields.get("chat_id", "")), int(fields.get("user_id", 0))
        status = "administrator" if user_id in self.chat_admins.get(chat, set()) else "member"
        member: dict[str, Any] = {"status": status, "user": {
            "id": user_id, "is_bot": False, "first_name": "someone"}}
        if status == "administrator":
            member.update(can_be_edited=False, is_anonymous=False, can_manage_chat=True,
                          can_delete_messages=True, can_manage_video_chats=True,
                          can_restrict_members=True, can_promote_members=False,
                          can_change_info=True, can_invite_users=True,
                          can_post_stories=False, can_edit_stories=False,
                          can_delete_stories=False)
        return 200, {"ok": True, "result": member}

    def _api_sendMessage(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        fields = request.fields
        if "chat_id" not in fields:
            return _bad("Bad Request: chat_id is empty")
        checked = _checked_text(fields)
        if isinstance(checked, str):
            return _bad(checked)
        text, entities = checked
        reply_to: int | None = None
        if "reply_parameters" in fields:
            asked = json.loads(fields["reply_parameters"])
            reply_to = int(asked["message_id"])
            with self._changed:
                gone = (fields["chat_id"], reply_to) in self._state.deleted
            if gone and not asked.get("allow_sending_without_reply"):
                return _bad("Bad Request: message to be replied not found")
            reply_to = None if gone else reply_to
        request.reply_to = reply_to
        with self._changed:
            self._state.next_message_id += 1
            message_id = self._state.next_message_id
            self._state.messages[(fields["chat_id"], message_id)] = _shown(fields)
        result = self._message(fields["chat_id"], message_id, text, entities)
        if reply_to is not None:
            result["reply_to_message"] = {"message_id": reply_to, "date": int(time.time()),
                                          "chat": result["chat"]}
        return 200, {"ok": True, "result": result}

    def _message(self, chat_id: str, message_id: int, text: str,
                 entities: list[dict[str, Any]]) -> dict[str, Any]:
        """A message of the bot's as the Bot API returns it."""
        numeric = int(chat_id) if re.fullmatch(r"-?[0-9]+", chat_id) else -1001
        result: dict[str, Any] = {
            "message_id": message_id, "date": int(time.time()),
            "chat": {"id": numeric, "type": "private" if numeric > 0 else "supergroup"},
            "from": {"id": self.bot_id, "is_bot": True, "first_name": "prdigest",
                     "username": self.username},
            "text": text,
        }
        if entities:
            result["entities"] = entities
        return result

    def _api_editMessageText(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        """One of the bot's messages given new text and keyboard (none: the keyboard
        removed); refused for a message deleted, not the bot's, or left unchanged."""
        fields = request.fields
        if "chat_id" not in fields or "message_id" not in fields:
            return _bad("Bad Request: message identifier is not specified")
        checked = _checked_text(fields)
        if isinstance(checked, str):
            return _bad(checked)
        key = (fields["chat_id"], int(fields["message_id"]))
        with self._changed:
            kept = self._state.messages.get(key)
            if key in self._state.deleted:
                return _bad("Bad Request: message to edit not found")
            if kept is None:
                return _bad("Bad Request: message can't be edited")
            if kept == _shown(fields):
                return _bad("Bad Request: message is not modified: specified new message "
                            "content and reply markup are exactly the same as a current "
                            "content and reply markup of the message")
            self._state.messages[key] = _shown(fields)
        result = self._message(key[0], key[1], *checked)
        result["edit_date"] = int(time.time())
        return 200, {"ok": True, "result": result}

    def _api_answerCallbackQuery(self, request: RecordedRequest
                                 ) -> tuple[int, dict[str, Any]]:
        """A click's query answered; Telegram refuses a second answer to one query."""
        query = request.fields.get("callback_query_id", "")
        if not query:
            return _bad("Bad Request: query_id is empty")
        with self._changed:
            if query in self._state.answered_queries:
                return _bad("Bad Request: query is too old and response timeout expired "
                            "or query ID is invalid")
            self._state.answered_queries.add(query)
        return 200, {"ok": True, "result": True}

    def _api_setWebhook(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        secret = request.fields.get("secret_token", "")
        if secret and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", secret):
            return _bad("Bad Request: secret token contains unallowed characters")
        if not request.fields.get("url", "").startswith("https://"):
            return _bad("Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        with self._changed:
            self._state.webhook = dict(request.fields)
        return 200, {"ok": True, "result": True, "description": "Webhook was set"}

    def _api_deleteWebhook(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        with self._changed:
            self._state.webhook = {}
            if request.fields.get("drop_pending_updates") == "true":
                self._state.updates.clear()
        return 200, {"ok": True, "result": True, "description": "Webhook was deleted"}

    def _api_setMyCommands(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        return 200, {"ok": True, "result": True}

    def _api_getUpdates(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        if self.webhook:
            return 409, {"ok": False, "error_code": 409, "description":
                         "Conflict: can't use getUpdates method while webhook is active"}
        offset = int(request.fields.get("offset", "0") or 0)
        limit = int(request.fields.get("limit", "100") or 100)
        wait = min(float(request.fields.get("timeout", "0") or 0), self.long_poll_seconds)
        deadline = time.monotonic() + wait
        with self._changed:
            # An offset confirms every update below it, as Telegram forgets them.
            self._state.updates = [u for u in self._state.updates if u["update_id"] >= offset]
            while not self._state.updates and time.monotonic() < deadline:
                self._changed.wait(deadline - time.monotonic())
            batch = self._state.updates[:limit]
        return 200, {"ok": True, "result": batch}

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        path = request.rel_url.raw_path
        match = re.fullmatch(r"/bot([^/]*)/([A-Za-z]+)", path)
        if match is None:
            return _json(404, {"ok": False, "error_code": 404, "description": "Not Found"})
        fields = dict(parse_qsl(request.rel_url.raw_query_string))
        content_type = request.headers.get("Content-Type", "")
        if content_type.startswith("application/x-www-form-urlencoded"):
            fields.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        elif content_type.startswith("application/json") and body:
            fields.update({k: v if isinstance(v, str) else json.dumps(v)
                           for k, v in json.loads(body).items()})
        recorded = RecordedRequest(
            method=match[2], path=path, token=match[1],
            headers={k.lower(): v for k, v in request.headers.items()},
            fields=fields, body=body,
        )
        with self._changed:
            self._state.requests.append(recorded)
        if recorded.method == "getUpdates":
            # The long poll waits on `_changed`: off the loop, so other calls go on.
            status, answer = await asyncio.get_running_loop().run_in_executor(
                None, self._answer, recorded)
        else:
            status, answer = self._answer(recorded)
        with self._changed:
            recorded.status = status
            self._changed.notify_all()
            queue = self._state.stalls.get(recorded.method)
            stall = queue.popleft() if queue else 0.0
        if stall:
            await asyncio.sleep(stall)
        return _json(status, answer)


def _json(status: int, answer: dict[str, Any]) -> web.Response:
    return web.Response(status=status, body=json.dumps(answer).encode(),
                        content_type="application/json")


def _bad(description: str) -> tuple[int, dict[str, Any]]:
    return 400, {"ok": False, "error_code": 400, "description": description}


def _checked_text(fields: dict[str, str]) -> tuple[str, list[dict[str, Any]]] | str:
    """A message's plain text and entities, or why Telegram refuses it."""
    text = fields.get("text", "")
    entities: list[dict[str, Any]] = []
    if fields.get("parse_mode") == "HTML":
        try:
            text, entities = parse_html(text)
        except EntityError as exc:
            return f"Bad Request: can't parse entities: {exc}"
    if not text.strip():
        return "Bad Request: message text is empty"
    if utf16_length(text) > MAX_TEXT_LENGTH:
        return "Bad Request: message is too long"
    if "reply_markup" in fields:
        problem = _check_keyboard(fields["reply_markup"])
        if problem:
            return f"Bad Request: {problem}"
    return text, entities


def _shown(fields: dict[str, str]) -> dict[str, str]:
    """What a chat shows of a message: its text and keyboard."""
    return {"text": fields.get("text", ""), "reply_markup": fields.get("reply_markup", "")}


def _check_keyboard(raw: str) -> str | None:
    """Why an inline keyboard would be refused, or None."""
    try:
        markup = json.loads(raw)
    except ValueError:
        return "can't parse reply keyboard markup JSON object"
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    if not isinstance(rows, list):
        return "field \"inline_keyboard\" of the InlineKeyboardMarkup should be an Array"
    for row in rows:
        if not isinstance(row, list):
            return "inline keyboard row should be an Array"
        for button in row:
            if not isinstance(button, dict) or not button.get("text"):
                return "text buttons are unallowed in the inline keyboard"
            url = button.get("url")
            if url is not None and not re.match(r"(https?|tg)://", url):
                return f"inline keyboard button URL '{url}' is invalid: Wrong HTTP URL"
    return None


# --- factories for updates ----------------------------------------------------------

def user(user_id: int = 4242, *, language_code: str = "en",
         username: str = "ann") -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": "Ann", "username": username,
            "language_code": language_code}


# The sender Telegram names for a group admin who posts anonymously (as the group).
ANONYMOUS_ADMIN_ID = 1087968824


def anonymous_admin() -> dict[str, Any]:
    """`GroupAnonymousBot`, as Telegram sends it: a bot account speaking for the group,
    with the group itself in the message's `sender_chat`."""
    return {"id": ANONYMOUS_ADMIN_ID, "is_bot": True, "first_name": "Group",
            "username": "GroupAnonymousBot"}


def private_chat(chat_id: int = 4242) -> dict[str, Any]:
    return {"id": chat_id, "type": "private", "first_name": "Ann"}


def group_chat(chat_id: int = -1001234567890) -> dict[str, Any]:
    return {"id": chat_id, "type": "supergroup", "title": "lumen devs"}


def message_update(update_id: int, text: str, *, chat: dict[str, Any] | None = None,
                   sender: dict[str, Any] | None = None, message_id: int = 1,
                   reply_to_bot: dict[str, Any] | None = None,
                   thread_id: int | None = None,
                   sender_chat: dict[str, Any] | None = None) -> dict[str, Any]:
    """A `message` update; `/commands` and `@mentions` get the entities Telegram adds.
    `sender_chat`: the chat a message is sent on behalf of (an anonymous admin's group,
    a linked channel)."""
    entities: list[dict[str, Any]] = []
    command = re.match(r"/[A-Za-z0-9_]+(?:@[A-Za-z0-9_]+)?", text)
    if command:
        entities.append({"type": "bot_command", "offset": 0,
                         "length": utf16_length(command[0])})
    for mention in re.finditer(r"(?<![A-Za-z0-9_])@[A-Za-z0-9_]{5,32}", text):
        entities.append({"type": "mention", "offset": utf16_length(text[: mention.start()]),
                         "length": utf16_length(mention[0])})
    message: dict[str, Any] = {
        "message_id": message_id, "date": int(time.time()),
        "chat": chat or private_chat(), "from": sender or user(), "text": text,
    }
    if entities:
        message["entities"] = entities
    if reply_to_bot is not None:
        message["reply_to_message"] = reply_to_bot
    if thread_id is not None:
        message["message_thread_id"] = thread_id
        message["is_topic_message"] = True
    if sender_chat is not None:
        message["sender_chat"] = sender_chat
    return {"update_id": update_id, "message": message}


def click_update(update_id: int, data: str, *, query_id: str,
                 chat: dict[str, Any] | None = None, sender: dict[str, Any] | None = None,
                 message_id: int = 1, bot_id: int = 777000111) -> dict[str, Any]:
    """A `callback_query` update: `sender` clicked a button with `callback_data` `data`
    on the bot's message `message_id`."""
    message = {"message_id": message_id, "date": int(time.time()),
               "chat": chat or private_chat(), "text": "digest",
               "from": {"id": bot_id, "is_bot": True, "first_name": "prdigest",
                        "username": "prdigest_bot"}}
    return {"update_id": update_id, "callback_query": {
        "id": query_id, "from": sender or user(), "message": message,
        "chat_instance": "-8123456789", "data": data}}
