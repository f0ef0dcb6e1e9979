"""The narrator: the PRs the digest shows (in batches, cached per PR) and the week (one
call, cached), side by side; then the rules, the optional second pass, and the words
into the digest, all inside one deadline per digest and behind a circuit breaker.

The engine's digest goes in and a digest comes out that is never worse: any section
the model could not word faithfully, in time, is the engine's own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

import msgspec
from cachetools import LRUCache

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import LLMConfig
from bot.engine.classify import is_security
from bot.events import Events, ModelCalled, NarrationFellBack, SentencesDropped
from bot.i18n import Translator
from bot.models import Digest, Lang, Narration, PullAnswer, PullRequest
from bot.narrate.apply import (
    Candidate,
    Drop,
    PullWords,
    Seen,
    apply_pulls,
    apply_week,
    fallbacks_for,
    narrated_answer,
    verify_pull,
    verify_week,
)
from bot.narrate.breaker import Breaker
from bot.narrate.client import CallFailed, ModelClient, Usage
from bot.narrate.facts import (
    PullFacts,
    WeekFacts,
    content_hash,
    pull_facts,
    shown_pulls,
    week_facts,
)
from bot.narrate.grounds import Evidence, evidence
from bot.narrate.injection import aimed_at_model
from bot.narrate.ledger import Outcome
from bot.narrate.prompts import (
    CONTEXT_TOKENS,
    PROMPT_VERSION,
    check_max_tokens,
    message_tokens,
    messages,
    pulls_max_tokens,
    week_max_tokens,
)
from bot.narrate.schema import Answer, CheckAnswer, PullBatch, PullNarration, WeekNarration
from bot.narrate.second import CHECK_BATCH, check_data, claims_of, rejected, without
from bot.render.view import QUICK_VIEW

log = logging.getLogger(__name__)

KEEP_SECONDS = 30 * 24 * 3600
BATCH = 10
"""PRs per call: one call for the few a digest shows, the instructions paid once."""
MAIN_SHARE = 0.7
"""With the second pass on, the share of the budget the first calls may use."""
MEMORY_ENTRIES = 4096

A = TypeVar("A", bound=Answer)


class NarrationStore(Protocol):
    """Where answers are kept by input hash (`bot.store.redis.cache.Cache` has these two)."""

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


class Budget:
    """One digest's time for narration, shared by all its repositories: the deadline (a
    `clock.monotonic()` moment) is fixed when the first of them starts narrating."""

    def __init__(self, seconds: float, clock: Clock = SYSTEM_CLOCK) -> None:
        self.seconds = seconds
        self.clock = clock
        self._deadline: float | None = None

    @property
    def deadline(self) -> float:
        if self._deadline is None:
            self._deadline = self.clock.monotonic() + self.seconds
        return self._deadline

    @property
    def spent(self) -> bool:
        """Whether the repositories narrated before have used all of it."""
        return self._deadline is not None and self.clock.monotonic() >= self._deadline


class Narrator:
    """Words digests and PR answers with `llm.model`; one per process (its breaker and
    its counts are the process's). Its deadlines, retries and circuit are on `clock`
    (the process's)."""

    def __init__(self, llm: LLMConfig, store: NarrationStore | None = None, *,
                 client: ModelClient | None = None, events: Events | None = None,
                 breaker: Breaker | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        self.llm = llm
        self.clock = clock
        self.store: NarrationStore = store if store is not None else MemoryNarrations()
        self.client = client or ModelClient(llm, clock=clock)
        self.events = events
        self.breaker = breaker or Breaker(clock=clock)
        self.calls = 0
        self.usage = Usage()
        self._gate: asyncio.Semaphore | None = None
        self._gate_loop: asyncio.AbstractEventLoop | None = None

    @property
    def model(self) -> str:
        return self.llm.model

    def budget(self) -> Budget:
        """A new digest's budget (`llm.budget_seconds`)."""
        return Budget(self.llm.budget_seconds, self.clock)

    async def close(self) -> None:
        await self.client.close()

    def status(self) -> dict[str, Any]:
        """`/healthz`'s view: the model, its last failure, the circuit."""
        return {"model": self.llm.model, "base_url": self.llm.base_url, "calls": self.calls,
                **self.breaker.status()}

    # --- the week -------------------------------------------------------------------

    async def narrate(self, digest: Digest, pulls: Sequence[PullRequest],
                      answers: Mapping[int, PullAnswer], *, budget: Budget | None = None,
                      reviews_recorded: bool = True, latest: int | None = None) -> Digest:
        """`digest` with its sections in the model's words where they hold up.
        `latest`: the newest PR number the data knows (a reference beyond it is no PR)."""
        started = self.clock.monotonic()
        budget = budget or self.budget()
        if budget.spent:
            return self.unnarrated(digest, "budget")
        deadline = budget.deadline
        main = deadline if self.llm.check == "rules" else \
            started + (deadline - started) * MAIN_SHARE
        lang = digest.lang
        outcome = Outcome(model=self.llm.model)
        # Screening and the fact pack read every PR of the week: off the event loop.
        withheld, facts, quick, wanted, week_in, grounds = await asyncio.to_thread(
            _prepare, digest, pulls, answers, reviews_recorded, latest)
        (words, failures), (answer, failure) = await asyncio.gather(
            self._pulls([facts[n] for n in wanted], grounds, answers, lang, main),
            self._week(week_in, lang, main))
        for n in withheld:
            failures.setdefault(n, "withheld")
        candidates, drops = verify_week(answer, grounds, lang) if answer is not None \
            else (None, [])
        if self.llm.check == "model":
            words, candidates, rejected_week = await self._second(
                words, candidates, facts, week_in, lang, deadline)
            drops += rejected_week
        narrated = apply_pulls(digest, words, failures, answers, quick, outcome)
        written = 0 if answer is None else sum(len(getattr(answer, s)) for s in (
            "summary", "changes", "trends", "suggestions"))
        narrated = apply_week(narrated, candidates, drops, written, failure, outcome, Seen())
        sections, fallbacks, prose, dropped = outcome.record()
        self._report(outcome, fallbacks)
        for d in dropped:
            log.info("narration of %s %s dropped %s: %s", digest.repository, digest.week,
                     d.where, d.rule)
        log.info("narrated %s %s in %.1fs: %s; fallbacks %s", digest.repository, digest.week,
                 self.clock.monotonic() - started, ",".join(sections) or "nothing",
                 ",".join(f"{f.section}={f.reason}" for f in fallbacks) or "none")
        notes = (*narrated.notes, *_withheld_note(sorted(withheld), lang))
        return msgspec.structs.replace(narrated, notes=notes, narration=Narration(
            model=self.llm.model, sections_narrated=sections, sentences_dropped=len(dropped),
            fallbacks=fallbacks, prose=prose, dropped=dropped))

    def unnarrated(self, digest: Digest, reason: str) -> Digest:
        """`digest` as the engine wrote it, each of its sections recorded as fallen back
        for `reason` (no call made: the budget was spent before it started)."""
        fallbacks = fallbacks_for(digest, reason)
        self._report(Outcome(model=self.llm.model), fallbacks)
        return msgspec.structs.replace(digest, narration=Narration(
            model=self.llm.model, sections_narrated=(), sentences_dropped=0,
            fallbacks=fallbacks, prose=(), dropped=()))

    def _report(self, outcome: Outcome, fallbacks: Sequence[Any]) -> None:
        if self.events is None:
            return
        for section, count in outcome.dropped.items():
            if count:
                self.events.emit(SentencesDropped(section, count))
        for fallback in fallbacks:
            self.events.emit(NarrationFellBack(fallback.section, fallback.reason))

    async def _pulls(self, wanted: Sequence[PullFacts], grounds: Evidence,
                     answers: Mapping[int, PullAnswer], lang: Lang, deadline: float
                     ) -> tuple[dict[int, PullWords], dict[int, str]]:
        """The shown PRs' narrations: each from the cache, the rest asked in batches."""
        found: dict[int, PullNarration] = {}
        failures: dict[int, str] = {}
        missing: list[PullFacts] = []
        for f in wanted:
            cached = await self._cached("pull", self._pull_key(f, lang), PullNarration)
            if cached is not None and cached.number == f.number:
                found[f.number] = cached
            else:
                missing.append(f)

        async def batch(group: list[PullFacts]) -> None:
            try:
                answer = await self._call(
                    "pull", messages("pulls", {"pulls": group}, lang), PullBatch,
                    pulls_max_tokens([len(f.risks) for f in group], lang), deadline)
            except CallFailed as exc:
                failures.update({f.number: exc.reason for f in group})
                return
            by_number = {a.number: a for a in answer.pulls}
            for f in group:
                got = by_number.get(f.number)
                if got is None:
                    # Kept as an empty answer: the answer is cached whatever it holds,
                    # so a rerun asks no more than the first run did.
                    got = PullNarration(number=f.number, summary="", risks=[])
                found[f.number] = got
                await self._keep("pull", self._pull_key(f, lang), got)

        await asyncio.gather(*(batch(missing[i:i + BATCH])
                               for i in range(0, len(missing), BATCH)))
        asked = {f.number: f.summarize for f in wanted}
        words = {n: verify_pull(a, grounds, answers[n].risks, lang, summarize=asked[n])
                 for n, a in found.items()}
        for n, w in words.items():
            if w.summary is None and asked[n] and not found[n].summary.strip():
                failures.setdefault(n, "missing")
        return words, failures

    async def _week(self, week_in: WeekFacts, lang: Lang, deadline: float
                    ) -> tuple[WeekNarration | None, str | None]:
        key = content_hash(self._tag(lang), week_in)
        cached = await self._cached("week", key, WeekNarration)
        if cached is not None:
            return cached, None
        try:
            answer = await self._call(
                "week", messages("week", week_in, lang), WeekNarration,
                week_max_tokens(len(week_in.themes), len(week_in.suggestions), lang), deadline)
        except CallFailed as exc:
            return None, exc.reason
        await self._keep("week", key, answer)
        return answer, None

    async def _second(self, words: dict[int, PullWords],
                      week: dict[str, list[Candidate]] | None, facts: Mapping[int, PullFacts],
                      week_in: WeekFacts, lang: Lang, deadline: float
                      ) -> tuple[dict[int, PullWords], dict[str, list[Candidate]] | None,
                                 list[Drop]]:
        """The model's yes/no on every kept sentence; a failed check leaves them all."""
        claims = claims_of(words, week)
        dropped: set[str] = set()
        for start in range(0, len(claims), CHECK_BATCH):
            part = claims[start:start + CHECK_BATCH]
            data = check_data(part, facts, week_in)
            key = content_hash(self._tag(lang), data)
            answer = await self._cached("check", key, CheckAnswer)
            if answer is None:
                try:
                    answer = await self._call("check", messages("check", data, lang),
                                              CheckAnswer, check_max_tokens(len(part)), deadline)
                except CallFailed as exc:
                    log.warning("the second check failed (%s); the rules' verdicts stand",
                                exc.reason)
                    continue
                await self._keep("check", key, answer)
            dropped |= rejected(part, answer)
        return without(words, week, dropped)

    # --- one PR ---------------------------------------------------------------------

    def cached_answer(self, pull: PullRequest, answer: PullAnswer, lang: Lang, *,
                      reviews_recorded: bool = True) -> PullAnswer:
        """A chat answer in the PR's cached narration (verified again); the engine's
        own answer when none is cached. Never calls the model: chat must be quick."""
        if aimed_at_model(pull):
            return answer
        facts = pull_facts(pull, answer, reviews_recorded=reviews_recorded,
                           security=is_security(pull))
        # A key PR's narration, or a risk PR's (its risk lines alone).
        for told in (facts, msgspec.structs.replace(facts, summarize=False)):
            raw = self.store.get_narration("pull", self._pull_key(told, lang))
            if raw is None:
                continue
            try:
                cached = msgspec.json.decode(raw, type=PullNarration)
            except msgspec.DecodeError:
                return answer
            grounds = evidence([pull.number], {pull.number: told}, None, pull.number)
            words = verify_pull(cached, grounds, answer.risks, lang,
                                summarize=told.summarize)
            return narrated_answer(answer, words) if words.summary or words.risks else answer
        return answer

    # --- calls ----------------------------------------------------------------------

    def _tag(self, lang: Lang) -> tuple[str, str, str]:
        return (PROMPT_VERSION, self.llm.model, lang)

    def _pull_key(self, facts: PullFacts, lang: Lang) -> str:
        return content_hash(self._tag(lang), facts)

    async def _cached(self, step: str, key: str, kind: type[A]) -> A | None:
        raw = await asyncio.to_thread(self.store.get_narration, step, key)
        if raw is None:
            return None
        try:
            return msgspec.json.decode(raw, type=kind)
        except msgspec.DecodeError:
            log.warning("dropping an unreadable cached %s narration", step)
            return None

    async def _keep(self, step: str, key: str, answer: Answer) -> None:
        await asyncio.to_thread(self.store.put_narration, step, key,
                                msgspec.json.encode(answer), KEEP_SECONDS)

    def _limit(self) -> asyncio.Semaphore:
        """`llm.max_concurrency` calls in flight at once, in this event loop."""
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate_loop is not loop:
            self._gate = asyncio.Semaphore(self.llm.max_concurrency)
            self._gate_loop = loop
        return self._gate

    async def _call(self, step: str, request: list[dict[str, Any]], kind: type[A],
                    max_tokens: int, deadline: float) -> A:
        """The model's answer (the circuit allowing); `CallFailed` otherwise."""
        async with self._limit():
            if not self.breaker.allow():
                raise CallFailed("circuit-open")
            self.calls += 1
            try:
                answer, usage = await self.client.ask(request, kind, max_tokens=max_tokens,
                                                      deadline=deadline)
            except CallFailed as exc:
                if exc.outage:
                    self.breaker.failure(exc.reason)
                self._count(step, exc.reason, Usage())
                raise
        self.breaker.success()
        self.usage = Usage(self.usage.prompt_tokens + usage.prompt_tokens,
                           self.usage.completion_tokens + usage.completion_tokens)
        self._count(step, "ok", usage)
        return answer

    def _count(self, step: str, outcome: str, usage: Usage) -> None:
        if self.events is not None:
            self.events.emit(ModelCalled(step, outcome, usage.prompt_tokens,
                                         usage.completion_tokens))


def _withheld_note(numbers: Sequence[int], lang: Lang) -> tuple[str, ...]:
    """The data note saying which PRs were narrated from the engine's facts alone."""
    if not numbers:
        return ()
    t = Translator(lang)
    refs = t.sep.join(f"#{n}" for n in numbers)
    return (t.n("%(num)s PR's text carries instructions aimed at a language model; it is "
                "described from the engine's facts only: %(list)s.",
                "%(num)s PRs' text carries instructions aimed at a language model; they "
                "are described from the engine's facts only: %(list)s.",
                len(numbers), list=refs),)


def _prepare(digest: Digest, pulls: Sequence[PullRequest], answers: Mapping[int, PullAnswer],
             reviews_recorded: bool, latest: int | None
             ) -> tuple[frozenset[int], dict[int, PullFacts], list[int], list[int], WeekFacts,
                        Evidence]:
    """What the calls need: the withheld PRs, every PR's facts, the key PRs shown first,
    the PRs to narrate, the week's facts and the grounds the verifier reads."""
    week = [p.number for p in pulls]
    withheld = frozenset(p.number for p in pulls if aimed_at_model(p))
    facts = {p.number: pull_facts(p, answers[p.number], withheld=p.number in withheld,
                                  reviews_recorded=reviews_recorded,
                                  security=is_security(p)) for p in pulls}
    quick = [k.number for k in digest.key_pulls[:QUICK_VIEW]]
    wanted = [n for n in dict.fromkeys([*quick, *(r.pull for r in digest.risks)])
              if n in facts and n not in withheld]
    for n in wanted:
        if n not in quick:
            facts[n] = msgspec.structs.replace(facts[n], summarize=False)
    week_in = _fit(week_facts(digest, shown_pulls(digest, QUICK_VIEW), withheld), digest.lang)
    return (withheld, facts, quick, wanted, week_in,
            evidence(week, facts, week_in, max([*week, latest or 0])))


def _fit(facts: WeekFacts, lang: Lang) -> WeekFacts:
    """The week's facts cut (least important PR lines first) to fit `CONTEXT_TOKENS`."""
    room = CONTEXT_TOKENS - week_max_tokens(len(facts.themes), len(facts.suggestions), lang)
    while message_tokens(messages("week", facts, lang)) > room and facts.pulls:
        keep = max(0, len(facts.pulls) - max(1, len(facts.pulls) // 10))
        facts = msgspec.structs.replace(facts, pulls=facts.pulls[:keep])
    return facts
