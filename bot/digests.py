"""The one path from (repository, week, language, focus topics) to a `Digest`, and from a
PR to its answer.

Chat, the weekly schedule, report pages, the CLI, notices and `prdigest post` all come
here, so a week's digest is assembled the same way wherever it is asked for: the week
and the week before (for the trends), built off the event loop, a note first when the
data is a stale cached copy, the link to its report page where it goes to chat. Where
the week's data comes from differs by caller (the schedule fetches once across
replicas), so the fetch may be passed in; everything after it is decided here.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import msgspec

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import ChannelConfig, Config, ConfigView, ExcludeRule
from bot.engine import answer_pull, build_digest, reviews_recorded
from bot.engine.combine import PartFacts, combine, combined_notes
from bot.engine.digest import has_risk_data, week_pulls
from bot.engine.exclude import excluded_note, leave_out_of_week, left_out_by, left_out_note
from bot.errors import SourceError, WeekError
from bot.events import DigestBuilt, Events
from bot.i18n import translator
from bot.links import with_report_url
from bot.models import Digest, Lang, PullAnswer, PullRequest, Snapshot
from bot.narrate import Budget, Narrator
from bot.snapshot import require_week
from bot.source import ReadsTrends, SnapshotSource, Source, WeekData
from bot.store.subscriptions import SubscriptionStore, followed_topics
from bot.week import current_week, shift_week, week_period

log = logging.getLogger(__name__)

ANSWERS_KEPT = 1024
"""PR answers kept per process (a few kilobytes each): a PR version is frozen data."""

FetchWeek = Callable[[str, str], Awaitable[WeekData]]
"""How a caller reads a week of a repository: (repo, week) -> its data."""


class DigestStore(Protocol):
    """Where finished report digests are kept (`bot.store.redis.cache.Cache` has these two)."""

    def get_report(self, repo: str, week: str, lang: str) -> bytes | None: ...

    def put_report(self, repo: str, week: str, lang: str, data: bytes, ttl: int) -> None: ...


def stale_note(lang: Lang, data: WeekData) -> str | None:
    """The first line of a digest built from a cached copy while GitHub failed."""
    if not data.stale:
        return None
    minutes = round((data.age_seconds or 0) / 60)
    return translator(lang)("GitHub could not be reached; this digest uses data cached "
                            "%(minutes)s minutes ago.", minutes=minutes)


class Digests:
    """Builds digests and PR answers for one config from one source of PR data.

    One per process, built by its composition root (`bot.web.services`, the CLI
    commands, `prdigest post`) and handed to chat, the schedule, notices and report
    pages, so each gives a channel the same digest. `source` may be None where only
    PR answers are asked for (notices without a source). `subscriptions`: topics
    subscribed from chat (read here, written by chat), which come after a channel's
    configured ones in its digest. `reports`: where report-page digests are kept, with the
    cache's TTLs. Each digest built is a `DigestBuilt` on `events` (`/metrics`).
    `narrator`: the optional model that words digests and PR answers (`[llm]`); None
    keeps every digest exactly the engine's. `config` may be the service's live config
    (`bot.live.LiveConfig`): every digest is then made with the config in force.
    """

    def __init__(
        self,
        config: ConfigView,
        source: Source | None,
        *,
        subscriptions: SubscriptionStore | None = None,
        reports: DigestStore | None = None,
        clock: Clock = SYSTEM_CLOCK,
        events: Events | None = None,
        narrator: Narrator | None = None,
    ) -> None:
        self.settings = config
        self.source = source
        self.subscriptions = subscriptions
        self.reports = reports
        self.clock = clock
        self.events = events or Events()
        self.narrator = narrator
        self._decoder = msgspec.json.Decoder(Digest)
        self.answer = functools.lru_cache(maxsize=ANSWERS_KEPT)(self._answer)

    @property
    def config(self) -> Config:
        """The config in force."""
        return self.settings.current

    # --- the week -------------------------------------------------------------------

    async def build(
        self,
        repo: str,
        week: str,
        lang: Lang,
        focus: tuple[str, ...] = (),
        *,
        fetch: FetchWeek | None = None,
        trigger: str = "command",
        link: bool = False,
        trends: bool = True,
        exclude: tuple[ExcludeRule, ...] = (),
        fetch_trends: FetchWeek | None = None,
    ) -> Digest:
        """The digest of `repo`'s `week` in `lang`, `focus` topics first.

        `fetch` reads a week (default: the source, in a worker thread); the week's own
        failure (`SourceError`, `WeekError`) is the caller's to answer, the week
        before only adds trends and is left out when it cannot be read. `link` adds
        the report page's address, for digests that go to chat; `trends=False` skips
        the week before. `exclude`: a channel's own rules, on top of the repository's;
        the PRs they leave out count nowhere, and a note says how many. `fetch_trends`
        reads the week before (default: the source's read for its counts, where it has
        one, else `fetch`).
        """
        digest, _ = await self._assemble(repo, week, lang, focus, fetch=fetch, trends=trends,
                                         exclude=exclude, budget=self._budget(),
                                         fetch_trends=fetch_trends)
        self.events.emit(DigestBuilt(trigger))
        return with_report_url(digest, self.config) if link else digest

    async def build_many(
        self,
        repos: Sequence[str],
        week: str,
        lang: Lang,
        focus: tuple[str, ...] = (),
        *,
        fetch: FetchWeek | None = None,
        trigger: str = "command",
        link: bool = False,
        trends: bool = True,
        exclude: tuple[ExcludeRule, ...] = (),
        fetch_trends: FetchWeek | None = None,
    ) -> Digest:
        """One digest of the same week of several repositories (`build` of each, then
        combined: summed counts, topics and types, each repository's sections its own);
        `build` itself for one. Any repository's failure is the caller's to answer, as
        for one: a digest that silently left a repository out would read as complete."""
        if len(repos) == 1:
            return await self.build(repos[0], week, lang, focus, fetch=fetch,
                                    trigger=trigger, link=link, trends=trends, exclude=exclude,
                                    fetch_trends=fetch_trends)
        if fetch is None and isinstance(self.source, SnapshotSource):
            # One file answers for any name when it is alone: not for several repositories.
            for repo in repos:
                if not self.source.holds(repo):
                    raise SourceError(f"no snapshot file holds {repo}")
        budget = self._budget()  # one deadline for the narration of all of them
        built = [await self._assemble(repo, week, lang, focus, fetch=fetch, trends=trends,
                                      exclude=exclude, budget=budget, fetch_trends=fetch_trends)
                 for repo in repos]
        parts = [with_report_url(part, self.config) if link else part for part, _ in built]
        self.events.emit(DigestBuilt(trigger))
        return combine(parts, focus=focus,
                       notes=combined_notes([facts for _, facts in built], lang))

    def _budget(self) -> Budget | None:
        return self.narrator.budget() if self.narrator is not None else None

    async def _assemble(self, repo: str, week: str, lang: Lang, focus: tuple[str, ...], *,
                        fetch: FetchWeek | None, trends: bool,
                        exclude: tuple[ExcludeRule, ...],
                        budget: Budget | None = None,
                        fetch_trends: FetchWeek | None = None) -> tuple[Digest, PartFacts]:
        """One repository's digest, before it is counted and linked, and the facts a
        combined digest's notes are made of."""
        read = fetch or self._fetch
        data = await read(repo, week)
        previous = await self._previous(fetch_trends or self._trends_read(read), repo, week) \
            if trends else None
        settings = self.config.repo(repo)
        rules = (settings.exclude, *exclude)
        snapshot, left_out = leave_out_of_week(data.snapshot, rules, week, settings.timezone)
        if previous is not None:
            previous = leave_out_of_week(previous, rules, shift_week(week, -1),
                                         settings.timezone)[0]
        digest = await asyncio.to_thread(
            build_digest, snapshot, week, repo_config=settings,
            lang=lang, focus_topics=focus, previous=previous)
        if self.narrator is not None and settings.narrated:
            digest = await self._narrate(digest, snapshot, repo, week, lang, budget)
        notes = tuple(note for note in (stale_note(lang, data), left_out_note(left_out, lang))
                      if note is not None)
        if notes:
            digest = msgspec.structs.replace(digest, notes=(*notes, *digest.notes))
        facts = PartFacts(repository=repo, own_notes=notes,
                          pulls=tuple(p for p, _ in week_pulls(snapshot, week, settings.timezone)),
                          reviews_recorded=reviews_recorded(snapshot))
        return digest, facts

    async def for_channel(self, channel: ChannelConfig, week: str, *, lang: Lang | None = None,
                          fetch: FetchWeek | None = None, trigger: str = "command") -> Digest:
        """The digest a channel gets: its repositories, its language (or `lang`, the
        language a chat question was asked in), its followed topics first, linked, in
        the channel's chat form (`style`, `people`). Chat, the schedule, `post` and its
        preview all come here."""
        digest = await self.build_many(channel.repositories, week, lang or channel.lang,
                                       await self.focus(channel), fetch=fetch,
                                       trigger=trigger, link=True, exclude=(channel.exclude,))
        return msgspec.structs.replace(digest, chat_form=channel.chat_form)

    async def focus(self, channel: ChannelConfig) -> tuple[str, ...]:
        """The channel's configured topics, then those it subscribed to from chat; a
        store that fails leaves the configured ones (a digest beats no digest)."""
        try:
            return tuple(await asyncio.to_thread(followed_topics, channel, self.subscriptions))
        except Exception as exc:
            log.warning("subscriptions of %s unavailable: %s", channel.key, exc)
            return channel.topics

    async def report(self, repo: str, week: str, lang: Lang) -> Digest:
        """A report page's digest, kept in `reports` once built (past weeks for
        `cache.past_week_ttl_seconds`, the current one for `current_week_ttl_seconds`;
        one built from stale data is not kept, so the next visit tries again)."""
        if self.reports is not None:
            raw = await asyncio.to_thread(self.reports.get_report, repo, week, lang)
            if raw is not None:
                try:
                    return self._decoder.decode(raw)
                except msgspec.DecodeError:
                    log.warning("dropping an unreadable cached report of %s %s %s",
                                repo, week, lang)
        stale = False

        async def fetch(name: str, asked: str) -> WeekData:
            nonlocal stale
            data = await self._fetch(name, asked)
            stale = stale or (asked == week and data.stale)
            return data

        digest = await self.build(repo, week, lang, fetch=fetch, trigger="report")
        if self.reports is not None and not stale:
            await asyncio.to_thread(self.reports.put_report, repo, week, lang,
                                    msgspec.json.encode(digest), self._report_ttl(repo, week))
        return digest

    async def _narrate(self, digest: Digest, snapshot: Snapshot, repo: str, week: str,
                       lang: Lang, budget: Budget | None) -> Digest:
        """The digest in the narrator's words; the engine's when narration fails in a
        way it did not handle itself (it never makes a digest worse or late). Only a
        repository whose settings allow it is narrated (`narrated`: private ones opt in)."""
        assert self.narrator is not None
        if budget is not None and budget.spent:  # the repositories before used it all
            return self.narrator.unnarrated(digest, "budget")
        members = [p for p, _ in week_pulls(snapshot, week, self.config.repo(repo).timezone)]
        recorded = reviews_recorded(snapshot)  # as build_digest judges the week
        answers = {p.number: self._answer(p, repo, lang, recorded) for p in members}
        latest = max((p.number for p in snapshot.pulls), default=0)
        try:
            return await self.narrator.narrate(digest, members, answers, budget=budget,
                                               reviews_recorded=recorded, latest=latest)
        except Exception as exc:
            log.warning("narration of %s %s failed (%s: %s); the digest stays deterministic",
                        repo, week, type(exc).__name__, exc)
            return digest

    async def _fetch(self, repo: str, week: str) -> WeekData:
        """The week's data; a snapshot file that does not cover the week says so
        (`UncoveredWeekError`) rather than giving an empty week."""
        if self.source is None:
            raise SourceError(f"no source of PR data for {repo}")
        data = await asyncio.to_thread(self.source.fetch_week, repo, week)
        if isinstance(self.source, SnapshotSource):
            require_week(data.snapshot, week, week_period(week, self.config.repo(repo).timezone))
        return data

    def _trends_read(self, read: FetchWeek) -> FetchWeek:
        """How the week before is read by default: for its counts only where the source
        can (a first run would otherwise pay for two full weeks), else as `read`."""
        source = self.source
        if not isinstance(source, ReadsTrends):
            return read

        async def counted(repo: str, week: str) -> WeekData:
            return await asyncio.to_thread(source.fetch_trend_week, repo, week)

        return counted

    @staticmethod
    async def _previous(read: FetchWeek, repo: str, week: str) -> Snapshot | None:
        """The week before, for the trends; a digest is still worth giving without it."""
        before = week
        try:
            before = shift_week(week, -1)
            return (await read(repo, before)).snapshot
        except (SourceError, WeekError, OverflowError) as exc:
            log.info("no week %s of %s for the trends: %s", before, repo, exc)
            return None

    def _report_ttl(self, repo: str, week: str) -> int:
        settings = self.config.cache
        current = current_week(self.clock.now(), self.config.repo(repo).timezone)
        return (settings.current_week_ttl_seconds if week == current
                else settings.past_week_ttl_seconds)

    # --- one PR ---------------------------------------------------------------------

    def answer_for(self, pull: PullRequest, repo: str, lang: Lang,
                   channel: ChannelConfig | None = None) -> PullAnswer:
        """Summary and risks of one PR, kept per PR version and language; a PR the
        exclude settings leave out is still answered, saying so."""
        answer = self.answer(pull, repo, lang, self.reviews_recorded(pull, repo),
                             self.risk_data(repo))
        if self.left_out(pull, repo, channel):
            answer = msgspec.structs.replace(answer, notes=(excluded_note(lang), *answer.notes))
        return answer

    def left_out(self, pull: PullRequest, repo: str, channel: ChannelConfig | None) -> bool:
        """Whether the repository's (and the channel's) exclude settings leave `pull` out."""
        rules = (self.config.repo(repo).exclude,
                 *((channel.exclude,) if channel is not None else ()))
        return left_out_by(pull, rules) is not None

    async def pull_answer(self, pull: PullRequest, repo: str, lang: Lang,
                          channel: ChannelConfig | None = None) -> PullAnswer:
        """`answer_for`, in the PR's cached narration when a narrator is configured (no
        model call: only what a digest already paid for, verified again)."""
        answer = self.answer_for(pull, repo, lang, channel)
        if self.narrator is None or not self.config.repo(repo).narrated:
            return answer
        try:
            return await asyncio.to_thread(self.narrator.cached_answer, pull, answer, lang,
                                           reviews_recorded=self.reviews_recorded(pull, repo))
        except Exception as exc:
            log.warning("cached narration of %s#%s unavailable: %s", repo, pull.number, exc)
            return answer

    def _answer(self, pull: PullRequest, repo: str, lang: Lang,
                recorded: bool, risk_data: bool = True) -> PullAnswer:
        return answer_pull(pull, repository=repo, repo_config=self.config.repo(repo),
                           lang=lang, reviews_recorded=recorded, risk_data=risk_data)

    def _held(self, repo: str) -> Snapshot | None:
        """The snapshot the data already holds for `repo`; None from GitHub, or for a
        repository the snapshots do not hold."""
        if not isinstance(self.source, SnapshotSource):
            return None
        try:
            return self.source.snapshot_of(repo)
        except SourceError:
            return None

    def newest_pull(self, repo: str) -> int | None:
        """The newest PR of `repo` the data already holds (a snapshot's), for examples;
        None where knowing it would mean asking GitHub."""
        held = self._held(repo)
        return max((pull.number for pull in held.pulls), default=None) if held else None

    def risk_data(self, repo: str) -> bool:
        """Whether the data holds anything a risk is found in (`bot.engine.digest
        .has_risk_data`): a snapshot may hold none; GitHub always has its reviews and checks."""
        held = self._held(repo)
        return has_risk_data(held) if held is not None else True

    def reviews_recorded(self, pull: PullRequest, repo: str) -> bool:
        """Snapshot files may leave reviews out altogether (the PR then has none); GitHub
        always lists them, so there an empty list means "never reviewed"."""
        held = self._held(repo)
        return reviews_recorded(held) if held is not None else pull.reviews is not None
