"""One model call through the official `openai` SDK, with prdigest's own retry policy.

The SDK's retries are off (`max_retries=0`): this module decides, in one place, that a
429 is retried only when its `Retry-After` fits both `RETRY_AFTER_MAX_S` and the
digest's remaining budget, a 5xx or a dropped connection is retried after a short
backoff, and a timeout is not retried at all. The deadline and the retries' waits are
on the client's `Clock`; every attempt runs under
`asyncio.timeout(min(remaining, timeout_seconds))`: the SDK's own timeout bounds each
read, so an endpoint that trickles a byte every few seconds would never trip it.
Whatever fails raises `CallFailed` with a reason word that ends up in the digest's
`narration.fallbacks` and in `/metrics`; `outage` says whether it speaks of the
endpoint (transport errors, timeouts, 5xx), which the circuit counts, or only of that
call's answer (a schema error, a refusal).

Endpoints differ in how they take the answer's shape (`bot.narrate.schema.SHAPES`): one
that refuses the configured `response_format` (a 4xx or 5xx whose error names it, as
llama-cpp-python's server answers `json_schema`) is asked again at once in the next
shape; the client keeps the shape that worked and logs one line saying what to set.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import LLMConfig, secret
from bot.narrate.schema import SHAPES, Answer, ResponseMode, SchemaError, decode, response_format

if TYPE_CHECKING:
    import openai

RETRIES = 2
RETRY_AFTER_MAX_S = 10.0
BACKOFF_S = 0.5
NO_KEY = "unset"
"""Sent as the key to endpoints that need none (Ollama, llama.cpp, a local vLLM)."""

log = logging.getLogger(__name__)

A = TypeVar("A", bound=Answer)
OUTAGES = frozenset({"timeout", "connection", "server-error"})
"""Failures that speak of the endpoint rather than of one answer."""


class CallFailed(Exception):
    """A call that gave no usable answer; `reason` is a short fixed word."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason

    @property
    def outage(self) -> bool:
        return self.reason in OUTAGES


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Reply:
    answer: Any
    usage: Usage


def make_client(llm: LLMConfig) -> openai.AsyncOpenAI:
    """The SDK's client. `openai` is imported when a `ModelClient` is made, not with
    this module: a service without `[llm]` never pays its import (~18 MiB, ~0.3 s)."""
    import openai

    return openai.AsyncOpenAI(base_url=llm.base_url, api_key=secret(llm.api_key_env) or NO_KEY,
                              timeout=llm.timeout_seconds, max_retries=0)


class ModelClient:
    """Asks `llm.model` for an answer of a given type, within a deadline on `clock`
    (`deadline` is a `clock.monotonic()` moment)."""

    def __init__(self, llm: LLMConfig, *, clock: Clock = SYSTEM_CLOCK) -> None:
        # The SDK is loaded with the narrator (only with `[llm]`), not at its first
        # call, which would block the event loop for the import.
        importlib.import_module("openai")
        self.llm = llm
        self.clock = clock
        self.shape: ResponseMode = llm.response_format
        """How the answer's shape is asked for: the configured one, or the next one
        after the endpoint refused it."""
        self._client: openai.AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client of the running event loop (its connections belong to one loop;
        a CLI run or a test may use several in turn)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = make_client(self.llm)
            self._loop = loop
        return self._client

    async def close(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None

    async def ask(self, messages: list[dict[str, Any]], kind: type[A], *, max_tokens: int,
                  deadline: float) -> tuple[A, Usage]:
        """The decoded answer and the tokens it cost; `CallFailed` otherwise."""
        try:
            return await self._attempts(messages, kind, max_tokens, deadline)
        except _RefusedShape as refused:
            if not self._next_shape(refused.shape):
                raise CallFailed("refused-shape") from None
        try:
            return await self._attempts(messages, kind, max_tokens, deadline)
        except _RefusedShape:
            raise CallFailed("refused-shape") from None

    def _next_shape(self, refused: ResponseMode) -> bool:
        """Moves on from the shape the endpoint refused (once per shape, whichever call
        saw it first); False when there is none left to try."""
        if self.shape != refused:
            return True  # another call moved on already
        later = SHAPES[SHAPES.index(refused) + 1:]
        if not later:
            return False
        self.shape = later[0]
        log.warning("the model endpoint %s refused response_format %r; asking with %r "
                    "instead: set [llm] response_format = %r to skip the refusal",
                    self.llm.base_url, refused, self.shape, self.shape)
        return True

    async def _attempts(self, messages: list[dict[str, Any]], kind: type[A], max_tokens: int,
                        deadline: float) -> tuple[A, Usage]:
        for attempt in range(RETRIES + 1):
            remaining = deadline - self.clock.monotonic()
            if remaining <= 0:
                raise CallFailed("budget")
            limit = min(remaining, self.llm.timeout_seconds)
            try:
                try:
                    # Real time: this bounds the HTTP call in flight, which a virtual
                    # clock's timer would cut short before any real answer came.
                    async with asyncio.timeout(limit):
                        return await self._once(messages, kind, max_tokens, limit)
                except TimeoutError:
                    raise CallFailed("timeout" if limit < remaining else "budget") from None
            except CallFailed as failure:
                wait = _retry_wait(failure, attempt)
                if wait is None or attempt == RETRIES or \
                        self.clock.monotonic() + wait >= deadline:
                    raise
                await self.clock.sleep(wait)
        raise CallFailed("error")  # pragma: no cover - the loop returns or raises

    async def _once(self, messages: list[dict[str, Any]], kind: type[A], max_tokens: int,
                    timeout: float) -> tuple[A, Usage]:
        import openai  # loaded by `make_client` already: a lookup, not an import

        shape = self.shape
        try:
            # Messages and response_format are plain dicts of the documented shape.
            completion = await self.client.chat.completions.create(  # type: ignore[call-overload]
                model=self.llm.model, messages=messages,
                response_format=response_format(kind, shape),
                max_tokens=max_tokens, temperature=0.2, timeout=timeout,
                extra_body=dict(self.llm.extra_body) or None,
            )
        except openai.APITimeoutError:
            raise CallFailed("timeout") from None
        except openai.APIConnectionError as exc:
            raise CallFailed("connection", type(exc).__name__) from None
        except openai.RateLimitError as exc:
            raise _RateLimited(_retry_after(exc.response.headers)) from None
        except openai.APIStatusError as exc:
            if _refuses_shape(exc):
                raise _RefusedShape(shape) from None
            reason = "server-error" if exc.status_code >= 500 else f"http-{exc.status_code}"
            raise CallFailed(reason) from None
        except openai.OpenAIError as exc:
            raise CallFailed("error", type(exc).__name__) from None
        usage = Usage(completion.usage.prompt_tokens, completion.usage.completion_tokens) \
            if completion.usage else Usage()
        if not completion.choices:
            raise CallFailed("blank")
        choice = completion.choices[0]
        if choice.finish_reason == "length":
            raise CallFailed("length")
        if choice.finish_reason not in (None, "stop"):
            raise CallFailed("filtered", str(choice.finish_reason))
        if choice.message.refusal:
            raise CallFailed("refusal")
        content = (choice.message.content or "").strip()
        if not content:
            raise _Blank()
        try:
            return decode(content, kind), usage
        except SchemaError as exc:
            raise CallFailed(exc.reason) from None


class _RateLimited(CallFailed):
    def __init__(self, retry_after: float | None) -> None:
        super().__init__("rate-limited")
        self.retry_after = retry_after


class _RefusedShape(CallFailed):
    """The endpoint refused the way the answer's shape was asked for."""

    def __init__(self, shape: ResponseMode) -> None:
        super().__init__("refused-shape")
        self.shape = shape


_SHAPE_WORDS = re.compile(r"response_format|json_schema|json_object|\bschema\b", re.I)


def _refuses_shape(exc: Any) -> bool:
    """Whether an error status speaks of the request's `response_format` (a 400 from
    OpenAI-style endpoints, a 422 or 500 from servers that validate the request)."""
    if exc.status_code not in (400, 422, 500, 501):
        return False
    return bool(_SHAPE_WORDS.search(f"{exc.message} {exc.body}"))


class _Blank(CallFailed):
    """Blank content with `stop` (DeepSeek's JSON mode does this now and then)."""

    def __init__(self) -> None:
        super().__init__("blank")


def _retry_wait(failure: CallFailed, attempt: int) -> float | None:
    """Seconds to wait before trying again, None when this failure is final."""
    if isinstance(failure, _RateLimited):
        wait: float = (failure.retry_after if failure.retry_after is not None
                       else BACKOFF_S * 2.0**attempt)
        return wait if wait <= RETRY_AFTER_MAX_S else None
    if isinstance(failure, _Blank):
        return 0.0 if attempt == 0 else None
    if failure.reason in ("server-error", "connection"):
        return float(BACKOFF_S * 2.0**attempt)
    return None


def _retry_after(headers: Any) -> float | None:
    """`Retry-After` in seconds (`retry-after-ms` first); None when absent or a date."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                seconds: float = max(0.0, float(str(value)) / scale)
                return seconds
            except ValueError:
                return None
    return None
