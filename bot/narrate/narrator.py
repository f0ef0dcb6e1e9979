"""The narrator: map (one call per PR, cached), reduce (one call for the week, cached),
verify, apply, all inside the digest's budget and behind a circuit breaker.

The engine's digest goes in and a digest comes out that is never worse: any section
the model could not word faithfully, in time, is the engine's own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

import msgspec
from cachetools import LRUCache

from bot.config import LLMConfig
from bot.models import Digest, Lang, Narration, PullAnswer, PullRequest
from bot.narrate.apply import (
    Outcome,
    PullWords,
    apply_pulls,
    apply_week,
    narrated_answer,
    verify_pull,
)
from bot.narrate.breaker import Breaker
from bot.narrate.client import CallFailed, ModelClient, Usage
from bot.narrate.facts import (
    PullFacts,
    PullLine,
    content_hash,
    pull_facts,
    pull_grounds,
    week_facts,
    week_grounds,
)
from bot.narrate.prompts import (
    CONTEXT_TOKENS,
    PROMPT_VERSION,
    map_max_tokens,
    map_messages,
    message_tokens,
    reduce_max_tokens,
    reduce_messages,
)
from bot.narrate.schema import Answer, PullNarration, WeekNarration

log = logging.getLogger(__name__)

KEEP_SECONDS = 30 * 24 * 3600
MAP_SHARE = 0.7
"""Share of the budget the map step may use; the rest is kept for the reduce call."""
MEMORY_ENTRIES = 4096

A = TypeVar("A", bound=Answer)


class NarrationStore(Protocol):
    """Where answers are kept by input hash (`bot.store.cache.Cache` has these two)."""

    def get_narration(self, kind: str, digest: str) -> bytes | None: ...

    def put_narration(self, kind: str, digest: str, data: bytes, ttl: int) -> None: ...


class MemoryNarrations:
    """The store of a process without Redis (the CLI with `REDIS_URL` unset)."""

    def __init__(self, size: int = MEMORY_ENTRIES) -> None:
        self._entries: LRUCache[tuple[str, str], bytes] = LRUCache(maxsize=size)

    def get_narration(self, kind: str, digest: str) -> bytes | None:
        return self._entries.get((kind, digest))

    def put_narration(self, kind: str, digest: str, data: bytes, ttl: int) -> None:
        self._entries[(kind, digest)] = data


class NarrationEvents(Protocol):
    """What `/metrics` counts (`bot.web.metrics.Metrics` has these)."""

    def llm_call(self, step: str, outcome: str, usage: Usage) -> None: ...

    def llm_dropped(self, section: str, count: int) -> None: ...

    def llm_fallback(self, section: str, reason: str) -> None: ...


class Narrator:
    """Words digests and PR answers with `llm.model`; one per process (its breaker and
    its counts are the process's)."""

    def __init__(self, llm: LLMConfig, store: NarrationStore | None = None, *,
                 client: ModelClient | None = None, events: NarrationEvents | None = None,
                 breaker: Breaker | None = None) -> None:
        self.llm = llm
        self.store: NarrationStore = store if store is not None else MemoryNarrations()
        self.client = client or ModelClient(llm)
        self.events = events
        self.breaker = breaker or Breaker()
        self.calls = 0
        self.usage = Usage()

    @property
    def model(self) -> str:
        return self.llm.model

    async def close(self) -> None:
        await self.client.close()

    def status(self) -> dict[str, Any]:
        """`/healthz`'s view: the model, its last failure, the circuit."""
        return {"model": self.llm.model, "base_url": self.llm.base_url, "calls": self.calls,
                **self.breaker.status()}

    # --- the week -------------------------------------------------------------------

    async def narrate(self, digest: Digest, pulls: Sequence[PullRequest],
                      answers: Mapping[int, PullAnswer]) -> Digest:
        """`digest` with its sections in the model's words where they hold up."""
        start = time.monotonic()
        deadline = start + self.llm.budget_s
        lang = digest.lang
        outcome = Outcome(model=self.llm.model)
        week = [p.number for p in pulls]
        ranked = _ranked(digest, pulls)
        facts = {p.number: pull_facts(p, answers[p.number]) for p in ranked}
        words, failures = await self._map(facts, week, lang,
                                          start + self.llm.budget_s * MAP_SHARE)
        narrated = apply_pulls(digest, words, failures, answers, outcome)
        lines = [PullLine(number=n, title=(w.title if (w := words.get(n)) and w.title
                                           else f.title),
                          area=w.area if w else "", summary=(w.summary if w and w.summary
                                                             else f.summary))
                 for n, f in facts.items()]
        risk_texts = {i: r.summary for i, r in enumerate(narrated.risks)}
        week_in = _fit(week_facts(digest, lines, risk_texts), lang)
        answer: WeekNarration | None = None
        failure: str | None = None
        try:
            answer = await self._ask("week", content_hash(self._tag(lang), week_in),
                                     reduce_messages(week_in, lang), WeekNarration,
                                     reduce_max_tokens(week_in, lang), deadline)
        except CallFailed as exc:
            failure = exc.reason
        narrated = apply_week(narrated, answer, failure,
                              week_grounds(digest, week_in, facts), lang, outcome)
        sections, dropped, fallbacks, prose = outcome.record()
        if self.events is not None:
            for section, count in outcome.dropped.items():
                if count:
                    self.events.llm_dropped(section, count)
            for fallback in fallbacks:
                self.events.llm_fallback(fallback.section, fallback.reason)
        log.info("narrated %s %s in %.1fs: %s; fallbacks %s", digest.repository, digest.week,
                 time.monotonic() - start, ",".join(sections) or "nothing",
                 ",".join(f"{f.section}={f.reason}" for f in fallbacks) or "none")
        return msgspec.structs.replace(narrated, narration=Narration(
            model=self.llm.model, sections_narrated=sections, sentences_dropped=dropped,
            fallbacks=fallbacks, prose=prose))

    async def _map(self, facts: Mapping[int, PullFacts], week: list[int], lang: Lang,
                   deadline: float) -> tuple[dict[int, PullWords], dict[int, str]]:
        gate = asyncio.Semaphore(self.llm.max_concurrency)
        words: dict[int, PullWords] = {}
        failures: dict[int, str] = {}

        async def one(f: PullFacts) -> None:
            async with gate:
                try:
                    answer = await self._ask("pull", self._pull_key(f, lang),
                                             map_messages(f, lang), PullNarration,
                                             map_max_tokens(f, lang), deadline)
                except CallFailed as exc:
                    failures[f.number] = exc.reason
                    return
            words[f.number] = verify_pull(answer, f, pull_grounds(f, week), lang)

        await asyncio.gather(*(one(f) for f in facts.values()))
        return words, failures

    # --- one PR ---------------------------------------------------------------------

    def cached_answer(self, pull: PullRequest, answer: PullAnswer, lang: Lang) -> PullAnswer:
        """A chat answer in the PR's cached narration (verified again); the engine's
        own answer when none is cached. Never calls the model: chat must be quick."""
        facts = pull_facts(pull, answer)
        raw = self.store.get_narration("pull", self._pull_key(facts, lang))
        if raw is None:
            return answer
        try:
            cached = msgspec.json.decode(raw, type=PullNarration)
        except msgspec.DecodeError:
            return answer
        words = verify_pull(cached, facts, pull_grounds(facts, [pull.number]), lang)
        return narrated_answer(answer, words) if words.summary else answer

    # --- calls ----------------------------------------------------------------------

    def _tag(self, lang: Lang) -> tuple[str, str, str]:
        return (PROMPT_VERSION, self.llm.model, lang)

    def _pull_key(self, facts: PullFacts, lang: Lang) -> str:
        return content_hash(self._tag(lang), facts)

    async def _ask(self, step: str, key: str, messages: list[dict[str, Any]], kind: type[A],
                   max_tokens: int, deadline: float) -> A:
        """The cached answer for `key`, else the model's (kept when it decodes)."""
        raw = await asyncio.to_thread(self.store.get_narration, step, key)
        if raw is not None:
            try:
                return msgspec.json.decode(raw, type=kind)
            except msgspec.DecodeError:
                log.warning("dropping an unreadable cached %s narration", step)
        if not self.breaker.allow():
            raise CallFailed("circuit-open")
        self.calls += 1
        try:
            answer, usage = await self.client.ask(messages, kind, max_tokens=max_tokens,
                                                  deadline=deadline)
        except CallFailed as exc:
            if exc.reason != "budget":
                self.breaker.failure(exc.reason)
            self._count(step, exc.reason, Usage())
            raise
        self.breaker.success()
        self.usage = Usage(self.usage.prompt_tokens + usage.prompt_tokens,
                           self.usage.completion_tokens + usage.completion_tokens)
        self._count(step, "ok", usage)
        await asyncio.to_thread(self.store.put_narration, step, key,
                                msgspec.json.encode(answer), KEEP_SECONDS)
        return answer

    def _count(self, step: str, outcome: str, usage: Usage) -> None:
        if self.events is not None:
            self.events.llm_call(step, outcome, usage)


def _ranked(digest: Digest, pulls: Sequence[PullRequest]) -> list[PullRequest]:
    """Key PRs in the digest's order first (they are mapped first within the budget)."""
    by_number = {p.number: p for p in pulls}
    order = [k.number for k in digest.key_pulls if k.number in by_number]
    seen = set(order)
    order += [p.number for p in sorted(pulls, key=lambda p: p.number) if p.number not in seen]
    return [by_number[n] for n in order]


def _fit(facts: Any, lang: Lang) -> Any:
    """The week's facts cut (least important PR lines first) to fit `CONTEXT_TOKENS`."""
    room = CONTEXT_TOKENS - reduce_max_tokens(facts, lang)
    while message_tokens(reduce_messages(facts, lang)) > room and facts.pulls:
        keep = max(0, len(facts.pulls) - max(1, len(facts.pulls) // 10))
        facts = msgspec.structs.replace(facts, pulls=facts.pulls[:keep])
    return facts
