"""A fake OpenAI-compatible endpoint on 127.0.0.1:<free port> that the real `openai` SDK
talks to (`POST /v1/chat/completions`).

By default it answers like a well-behaved model: it reads the data block of the
request and writes template prose from it (`testkit.fakes.openai_writer`); `answer`
replaces that writer (a scripted or hostile model). Modes make it misbehave, for all
requests (`mode`) or for the next few (`queue`): invented PR numbers and figures,
mentions, links, the wrong language, one bad sentence per list, malformed JSON, blank
content, `finish_reason = "length"`, a refusal, a content filter, a stall past the
client's timeout, 429 with a short or long `Retry-After`, 500s and a dropped
connection; real endpoints' habits (`<think>` first, a fence inside prose, a wrapper
object, extra fields, forty sentences per section); an endpoint that trickles its
answer a byte at a time, or never answers. `refused` names the ways of asking for
JSON it refuses as llama-cpp-python's server refuses `json_schema` (a 500 naming the
types it takes). `latency` adds a delay to every call (benches). Every request body is
recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot.narrate.hygiene import read_blocks
from bot.narrate.prompts import estimate_tokens
from testkit.fakes.aiohttp_server import ThreadedAiohttpServer
from testkit.fakes.openai_writer import write_check, write_pulls, write_week

MODES = ("good", "invent-pull", "invent-figure", "mention", "link", "wrong-language",
         "one-bad", "malformed", "blank", "length", "refusal", "filtered", "stall",
         "429-short", "429-long", "500", "drop", "think", "prose-fence", "wrapper",
         "extra-fields", "forty", "schema", "trickle", "hang")
Writer = Callable[[dict[str, Any], str], dict[str, Any]]
"""(the request's data blocks, its language) -> the answer object."""
_HAN = re.compile(r"[\u4e00-\u9fff]")


def write_answer(blocks: dict[str, Any], lang: str) -> dict[str, Any]:
    """The well-behaved model: template prose from the data block it was given."""
    if "pulls" in blocks:
        return write_pulls(blocks["pulls"], lang)
    if "check" in blocks:
        return write_check(blocks["check"])
    return write_week(blocks["week"], lang)


def request_lang(body: dict[str, Any]) -> str:
    """The language the system prompt asks for: Chinese when it is written in Chinese."""
    return "zh" if _HAN.search(body["messages"][0]["content"]) else "en"


def shape_of(body: dict[str, Any]) -> str:
    """How a request asks for JSON: `json_schema`, `json_object_schema`, `json_object`."""
    asked = body.get("response_format") or {}
    if asked.get("type") == "json_object" and "schema" in asked:
        return "json_object_schema"
    return str(asked.get("type", "text"))


class FakeOpenAI(ThreadedAiohttpServer):
    thread_name = "fake-openai"

    def __init__(self, *, latency: float = 0.0, stall_seconds: float = 30.0,
                 trickle_seconds: float = 2.0, answer: Writer = write_answer) -> None:
        super().__init__()
        self.latency = latency
        self.stall_seconds = stall_seconds
        self.trickle_seconds = trickle_seconds
        self.answer = answer
        self.mode = "good"
        self.queue: list[str] = []
        self.refused: set[str] = set()
        self.requests: list[dict[str, Any]] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._lock = threading.Lock()
        self._stopping: asyncio.Event | None = None

    async def on_start(self) -> None:
        self._stopping = asyncio.Event()

    async def on_stop(self) -> None:
        if self._stopping is not None:  # a hung or trickling answer gives up
            self._stopping.set()

    async def _sleep(self, seconds: float) -> bool:
        """Sleep, or stop early when the server stops; whether it slept the whole time."""
        assert self._stopping is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)
            return False
        return True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.queue.clear()
            self.mode = "good"
            self.refused = set()
            self.prompt_tokens = self.completion_tokens = 0

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._complete)
        return app

    def _next_mode(self) -> str:
        with self._lock:
            return self.queue.pop(0) if self.queue else self.mode

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
        if shape_of(body) in self.refused:
            return web.json_response({"error": {
                "message": "1 validation error: response_format.type: Input should be "
                           "'text' or 'json_object'", "type": "internal_server_error"}},
                status=500)
        mode = self._next_mode()
        if self.latency:
            await asyncio.sleep(self.latency)
        if mode == "stall":
            await asyncio.sleep(self.stall_seconds)
        if mode == "hang":
            await self._sleep(3600)
            return web.Response(status=504)
        if mode == "429-short":
            return web.json_response({"error": {"message": "slow down"}}, status=429,
                                     headers={"Retry-After": "0.2"})
        if mode == "429-long":
            return web.json_response({"error": {"message": "quota"}}, status=429,
                                     headers={"Retry-After": "3600"})
        if mode == "500":
            return web.json_response({"error": {"message": "boom"}}, status=500)
        if mode == "drop":
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        completion = json.dumps(self._completion(body, mode), ensure_ascii=False).encode()
        if mode == "trickle":
            return await self._trickle(request, completion)
        return web.Response(body=completion, content_type="application/json")

    async def _trickle(self, request: web.Request, payload: bytes) -> web.StreamResponse:
        """The whole answer, one byte every `trickle_seconds` (headers at once)."""
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        for i in range(len(payload)):
            transport = request.transport
            if transport is None or transport.is_closing():
                return response  # the client gave up
            await response.write(payload[i:i + 1])
            if not await self._sleep(self.trickle_seconds):
                return response
        await response.write_eof()
        return response

    def _completion(self, body: dict[str, Any], mode: str) -> dict[str, Any]:
        messages = body["messages"]
        lang = request_lang(body)
        blocks = read_blocks(messages[-1]["content"])
        answer = _spoiled(self.answer(blocks, _lang_for(lang, mode)), lang, mode)
        content: str | None = json.dumps(answer, ensure_ascii=False)
        finish, refusal = "stop", None
        content = _dressed(content, mode)
        if mode == "malformed":
            content = '{"summary": [{"text": "本周'
        elif mode == "blank":
            content = ""
        elif mode == "length":
            finish = "length"
            content = (content or "")[:40]
        elif mode == "refusal":
            content, refusal = None, "I can't help with that."
        elif mode == "filtered":
            finish = "content_filter"
        prompt = sum(estimate_tokens(m["content"]) for m in messages)
        completion = estimate_tokens(content or "")
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
        return {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion",
            "created": 1_780_000_000, "model": body.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                         "message": {"role": "assistant", "content": content,
                                     "refusal": refusal}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }


def _lang_for(lang: str, mode: str) -> str:
    if mode == "wrong-language":
        return "en" if lang == "zh" else "zh"
    return lang


def _dressed(content: str, mode: str) -> str:
    """The answer as real endpoints wrap it."""
    if mode == "think":
        return f"<think>\nThe user wants JSON. {{not json}} Let me write it.\n</think>\n{content}"
    if mode == "prose-fence":
        return f"Here is the JSON:\n```json\n{content}\n```\nLet me know if you need more."
    if mode == "wrapper":
        return json.dumps({"result": json.loads(content)}, ensure_ascii=False)
    return content


_LISTS = ("summary", "changes", "trends", "suggestions")


def _spoiled(answer: dict[str, Any], lang: str, mode: str) -> dict[str, Any]:
    """How a mode changes a good answer."""
    if mode == "schema":
        return {"sentences": ["not the shape asked for"]}
    if mode == "extra-fields":
        answer = {**answer, "confidence": 0.9, "notes": "extra"}
        for key in _LISTS:
            answer[key] = [{**s, "tone": "neutral"} for s in answer.get(key, [])] \
                if key in answer else answer.get(key)
        answer = {k: v for k, v in answer.items() if v is not None}
        if "pulls" in answer and isinstance(answer["pulls"], list):
            answer["pulls"] = [{**p, "area": "x", "score": 1} for p in answer["pulls"]]
        return answer
    if mode == "forty":
        return _forty(answer, lang)
    spoil = _spoiler(mode, lang)
    if "pulls" in answer and isinstance(answer["pulls"], list):
        for p in answer["pulls"]:
            p["summary"] = spoil(p["summary"], 1)
            p["risks"] = [{**r, "text": spoil(r["text"], i)} for i, r in enumerate(p["risks"])]
        return answer
    for key in _LISTS:
        if key in answer:
            answer[key] = [_spoil_sentence(s, spoil, i, mode)
                           for i, s in enumerate(answer[key])]
    return answer


def _forty(answer: dict[str, Any], lang: str) -> dict[str, Any]:
    """Forty sentences per section, all different, every one of them long."""
    if "pulls" in answer:
        return answer
    zh = lang == "zh"
    for key in _LISTS:
        items = answer.get(key) or [{"text": "", "pulls": []}]
        grown = []
        for i in range(40):
            base = dict(items[i % len(items)])
            tag = "甲乙丙丁戊己庚辛壬癸"[i % 10] + "子丑寅卯"[i // 10] if zh else \
                "abcdefghij"[i % 10] + "wxyz"[i // 10]
            tail = (f"另补充说明{tag}：本周的改动与模块分布情况，内容与前文不同。" if zh else
                    f" Addendum {tag} on this week's changes and their spread, unlike the "
                    "others.")
            base["text"] = (base.get("text", "") + tail)[:230]
            grown.append(base)
        answer[key] = grown
    return answer


def _spoil_sentence(sentence: dict[str, Any], spoil: Any, index: int, mode: str
                    ) -> dict[str, Any]:
    text = spoil(sentence["text"], index)
    pulls = list(sentence["pulls"])
    if mode == "invent-pull" or (mode == "one-bad" and index == 0):
        pulls.append(999_999)
    return {**sentence, "text": text, "pulls": pulls}


def _spoiler(mode: str, lang: str) -> Any:
    """How a mode spoils a sentence (its position in its list as the second argument)."""
    zh = lang == "zh"

    def spoil(text: str, index: int) -> str:
        if mode == "invent-pull" or (mode == "one-bad" and index == 0):
            return text + ("另见 #999999。" if zh else " See also #999999.")
        if mode == "invent-figure":
            return text + ("速度提升了 73.5 倍。" if zh else " It is 73.5x faster.")
        if mode == "mention":
            return text + " @everyone <!channel>"
        if mode == "link":
            return text + " https://evil.example.com/x"
        return text

    return spoil
