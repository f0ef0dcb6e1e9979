"""A fake OpenAI-compatible endpoint on 127.0.0.1:<free port> that the real `openai` SDK
talks to (`POST /v1/chat/completions`).

By default it answers like a well-behaved model: it reads the data block of the
request and writes template prose from it (`testkit.fakes.openai_writer`). Modes make
it misbehave, for all requests (`mode`) or for the next few (`queue`): invented PR
numbers and figures, mentions, links, the wrong language, one bad sentence per list,
malformed JSON, blank content, `finish_reason = "length"`, a refusal, a content filter,
a stall past the client's timeout, 429 with a short or long `Retry-After`, 500s and a
dropped connection. `latency` adds a delay to every call (benches). Every request body
is recorded.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from aiohttp import web

from bot.narrate.hygiene import read_blocks
from bot.narrate.prompts import estimate_tokens
from testkit.fakes.aiohttp_server import ThreadedAiohttpServer
from testkit.fakes.openai_writer import write_pull, write_week

MODES = ("good", "invent-pull", "invent-figure", "mention", "link", "wrong-language",
         "one-bad", "malformed", "blank", "length", "refusal", "filtered", "stall",
         "429-short", "429-long", "500", "drop")


class FakeOpenAI(ThreadedAiohttpServer):
    thread_name = "fake-openai"

    def __init__(self, *, latency: float = 0.0, stall_seconds: float = 30.0) -> None:
        super().__init__()
        self.latency = latency
        self.stall_seconds = stall_seconds
        self.mode = "good"
        self.queue: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._lock = threading.Lock()

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
        mode = self._next_mode()
        if self.latency:
            await asyncio.sleep(self.latency)
        if mode == "stall":
            await asyncio.sleep(self.stall_seconds)
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
        return web.json_response(self._completion(body, mode))

    def _completion(self, body: dict[str, Any], mode: str) -> dict[str, Any]:
        messages = body["messages"]
        system, user = messages[0]["content"], messages[-1]["content"]
        lang = "zh" if "简体中文" in system else "en"
        content: str | None = json.dumps(_answer(read_blocks(user), lang, mode),
                                          ensure_ascii=False)
        finish, refusal = "stop", None
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


def _answer(blocks: dict[str, Any], lang: str, mode: str) -> dict[str, Any]:
    write_lang = ("en" if lang == "zh" else "zh") if mode == "wrong-language" else lang
    if "pull" in blocks:
        answer = write_pull(blocks["pull"], write_lang)
        number = blocks["pull"]["number"]
        spoil = _spoiler(mode, lang, number)
        answer["summary"] = spoil(answer["summary"], 1)
        answer["risks"] = [{**r, "text": spoil(r["text"], i)}
                           for i, r in enumerate(answer["risks"])]
        return answer
    answer = write_week(blocks["week"], write_lang)
    spoil = _spoiler(mode, lang, None)
    for section in ("summary", "changes", "trends", "suggestions"):
        answer[section] = [_spoil_sentence(s, spoil, i, mode)
                           for i, s in enumerate(answer[section])]
    return answer


def _spoil_sentence(sentence: dict[str, Any], spoil: Any, index: int, mode: str
                    ) -> dict[str, Any]:
    text = spoil(sentence["text"], index)
    pulls = list(sentence["pulls"])
    if mode == "invent-pull" or (mode == "one-bad" and index == 0):
        pulls.append(999_999)
    return {"text": text, "pulls": pulls}


def _spoiler(mode: str, lang: str, number: int | None) -> Any:
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
