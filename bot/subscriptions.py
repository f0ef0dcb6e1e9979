"""Topic subscriptions in Redis, and the notice a channel gets when a PR on its topics merges.

A channel follows its configured topics (`channels[].topics`) plus the ones it
subscribed to from chat (`RedisSubscriptionStore`, one Redis set per channel, so they
survive restarts and are shared by replicas). When a PR merges — told by the GitHub
webhook, or found by `MergePoller` where no webhook is set up — `MergeNotifier` sends
each channel of that repository whose topics the PR touches one short notice (title,
topics, risk flag, link), once: a claim in Redis per (PR, channel) makes sure of it,
whatever replica, redelivery or poll sees the merge again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import msgspec
import redis
import redis.asyncio as aioredis
import requests
from github.GithubException import GithubException
from github.Requester import Requester

from bot.config import ChannelConfig, Config
from bot.engine import answer_pull
from bot.errors import SourceError
from bot.models import PullAnswer, PullRequest, PullState, Reply
from bot.source import ForgetsPulls, Source

log = logging.getLogger(__name__)

KEY_PREFIX = "prdigest:v1"
NOTICE_TTL_SECONDS = 90 * 24 * 3600
"""How long a sent notice is remembered: far longer than any redelivery or poll window."""

NOTICE_MODE = "merged"
"""`Reply.mode` of a merged-PR notice (a `pull` reply: title, state, topics, risks, link)."""


# --- the store --------------------------------------------------------------------------


class RedisSubscriptionStore:
    """`bot.chat.handler.SubscriptionStore` over Redis: one set of topic names per channel.

    Synchronous (redis-py), as the protocol is: handlers call it in a worker thread.
    """

    def __init__(self, client: redis.Redis, *, prefix: str = KEY_PREFIX) -> None:
        self.client = client
        self.prefix = prefix

    def _key(self, channel_key: str) -> str:
        return f"{self.prefix}:subscriptions:{channel_key}"

    def topics(self, channel_key: str) -> set[str]:
        members: Iterable[Any] = self.client.smembers(self._key(channel_key))
        return {m.decode() if isinstance(m, bytes) else str(m) for m in members}

    def add(self, channel_key: str, topics: Iterable[str]) -> None:
        names = [name for name in topics if name]
        if names:
            self.client.sadd(self._key(channel_key), *names)

    def remove(self, channel_key: str, topics: Iterable[str]) -> None:
        names = [name for name in topics if name]
        if names:
            self.client.srem(self._key(channel_key), *names)


class TopicStore(Protocol):
    def topics(self, channel_key: str) -> set[str]: ...


def followed_topics(channel: ChannelConfig, store: TopicStore | None) -> list[str]:
    """The channel's configured topics, then those added from chat (sorted)."""
    names = list(channel.topics)
    if store is not None:
        names += sorted(name for name in store.topics(channel.key) if name not in names)
    return names


# --- one-time claims ------------------------------------------------------------------------


class Claims:
    """Set-once keys with expiry, in Redis (shared by replicas) or, without Redis, in
    this process. `claim` is True for the first caller only; `release` undoes it when
    the claimed work failed, so a later attempt may try again."""

    def __init__(self, client: aioredis.Redis | None, *, prefix: str = KEY_PREFIX) -> None:
        self.client = client
        self.prefix = prefix
        self._local: dict[str, float] = {}
        self._values: dict[str, str] = {}

    def _name(self, key: str) -> str:
        return f"{self.prefix}:{key}"

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        name = self._name(key)
        if self.client is None:
            now = time.monotonic()
            if self._local.get(name, 0.0) > now:
                return False
            self._local[name] = now + ttl_seconds
            return True
        return bool(await self.client.set(name, b"1", nx=True,
                                          px=max(int(ttl_seconds * 1000), 1)))

    async def release(self, key: str) -> None:
        name = self._name(key)
        if self.client is None:
            self._local.pop(name, None)
            return
        await self.client.delete(name)

    async def get(self, key: str) -> str | None:
        name = self._name(key)
        if self.client is None:
            return self._values.get(name)
        raw = await self.client.get(name)
        return raw.decode() if isinstance(raw, bytes) else raw

    async def put(self, key: str, value: str, *, only_new: bool = False) -> None:
        name = self._name(key)
        if self.client is None:
            if not (only_new and name in self._values):
                self._values[name] = value
            return
        await self.client.set(name, value.encode(), nx=only_new)

    async def forget(self, key: str) -> None:
        name = self._name(key)
        if self.client is None:
            self._values.pop(name, None)
            return
        await self.client.delete(name)


# --- GitHub's pull-request JSON ------------------------------------------------------------


class PayloadError(ValueError):
    """A GitHub payload without the fields a merged PR needs."""


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise PayloadError(f"{field}: expected a string")
    return value


def _time(value: object, field: str) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(_text(value, field))
    except ValueError:
        raise PayloadError(f"{field}: not an ISO 8601 time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def pull_from_api(item: Mapping[str, Any]) -> PullRequest:
    """A `PullRequest` from GitHub's REST/webhook pull-request object.

    Files, reviews and threads are not in it: reviews and threads stay `None`
    (unknown), so nothing is claimed about them.
    """
    number = item.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise PayloadError("number: expected a positive integer")
    merged_at = _time(item.get("merged_at"), "merged_at")
    state: PullState = ("merged" if merged_at
                        else "open" if item.get("state") == "open" else "closed")
    user = item.get("user")
    base = item.get("base")
    labels = item.get("labels")
    return PullRequest(
        number=number,
        title=_text(item.get("title") or "", "title"),
        url=_text(item.get("html_url") or "", "html_url"),
        author=user.get("login") if isinstance(user, Mapping) and isinstance(
            user.get("login"), str) else None,
        state=state,
        draft=item.get("draft") if isinstance(item.get("draft"), bool) else None,
        created_at=_time(item.get("created_at"), "created_at"),
        updated_at=_time(item.get("updated_at"), "updated_at"),
        merged_at=merged_at,
        closed_at=_time(item.get("closed_at"), "closed_at"),
        base=base.get("ref") if isinstance(base, Mapping) and isinstance(
            base.get("ref"), str) else None,
        labels=tuple(label["name"] for label in labels
                     if isinstance(label, Mapping) and isinstance(label.get("name"), str))
        if isinstance(labels, list) else (),
        body=item.get("body") if isinstance(item.get("body"), str) and item.get("body") else None,
        additions=_count(item.get("additions")),
        deletions=_count(item.get("deletions")),
        changed_files=_count(item.get("changed_files")),
        reviews=None,
        review_threads=None,
        comments=None,
    )


# --- the GitHub webhook ------------------------------------------------------------------


def signature_valid(webhook_secret: str, body: bytes, header: str | None) -> bool:
    """`X-Hub-Signature-256` checked against the raw body, in constant time."""
    if not header or not header.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(webhook_secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


@dataclass(frozen=True)
class MergedPull:
    """A merge GitHub told about: the repository and the PR as the event had it."""

    repository: str
    pull: PullRequest


def merged_pull(payload: Mapping[str, Any]) -> MergedPull | None:
    """The merge a `pull_request` event reports, or None for any other action (opened,
    closed without merging, ...). Raises `PayloadError` for a malformed payload."""
    if payload.get("action") != "closed":
        return None
    item = payload.get("pull_request")
    repository = payload.get("repository")
    if not isinstance(item, Mapping) or not isinstance(repository, Mapping):
        raise PayloadError("pull_request and repository are required")
    if item.get("merged") is not True:
        return None
    name = _text(repository.get("full_name"), "repository.full_name")
    pull = pull_from_api(item)
    if pull.state != "merged":
        raise PayloadError("merged_at: missing on a merged PR")
    return MergedPull(repository=name, pull=pull)


# --- notices -----------------------------------------------------------------------------


class NoticeSender(Protocol):
    """Where notices go: the chat adapters, by the channel's platform."""

    def can_send(self, channel: ChannelConfig) -> bool:
        """False when the channel's platform is not configured (no notice is claimed)."""
        ...

    async def send(self, channel: ChannelConfig, reply: Reply) -> list[str]:
        """Post the notice; raises when the platform did not take it."""
        ...


class MergeNotifier:
    """Sends one notice per (merged PR, subscribed channel), ever.

    The PR is read again through the source (files give path topics, reviews the
    risks); when that fails, the event's own fields are used.
    """

    def __init__(
        self,
        config: Config,
        source: Source | None,
        store: TopicStore | None,
        claims: Claims,
        sender: NoticeSender,
        *,
        on_sent: Callable[[str, bool], None] | None = None,
        notice_ttl_seconds: int = NOTICE_TTL_SECONDS,
    ) -> None:
        self.config = config
        self.source = source
        self.store = store
        self.claims = claims
        self.sender = sender
        self.on_sent = on_sent
        self.notice_ttl_seconds = notice_ttl_seconds

    def _repo_name(self, repo: str) -> str | None:
        lowered = repo.lower()
        return next((name for name in self.config.repos if name.lower() == lowered), None)

    async def _full_pull(self, repo: str, event: PullRequest) -> PullRequest:
        if self.source is None:
            return event
        if isinstance(self.source, ForgetsPulls):
            # The merge changed the PR: a copy cached before it is out of date.
            await asyncio.to_thread(self.source.forget_pull, repo, event.number)
        try:
            found = await asyncio.to_thread(self.source.fetch_pull, repo, event.number)
        except SourceError as exc:
            log.warning("using the event's fields for %s#%s: %s", repo, event.number, exc)
            return event
        if found is None:
            return event
        if found.state != "merged":  # a cached copy from before the merge
            found = msgspec.structs.replace(found, state="merged", merged_at=event.merged_at,
                                            closed_at=event.closed_at or event.merged_at)
        return found

    async def _subscribers(self, repo: str) -> list[tuple[ChannelConfig, list[str]]]:
        channels = [c for c in self.config.channels if c.repo.lower() == repo.lower()]
        found = []
        for channel in channels:
            try:
                topics = await asyncio.to_thread(followed_topics, channel, self.store)
            except redis.RedisError as exc:
                log.warning("subscriptions of %s unreadable, configured topics only: %s",
                            channel.key, exc)
                topics = list(channel.topics)
            found.append((channel, topics))
        return found

    async def announce(self, repo: str, event: PullRequest) -> NoticeResult:
        """Notify every channel following a topic of the merged PR, once per channel.

        A failed post is reported in `failed` and its claim released, so the next
        redelivery or poll retries it; the other channels are notified regardless.
        """
        result = NoticeResult()
        name = self._repo_name(repo)
        if name is None or event.state != "merged":
            return result
        subscribers = await self._subscribers(name)
        if not any(topics for _, topics in subscribers):
            return result
        pull = await self._full_pull(name, event)
        recorded = pull.reviews is not None
        answers: dict[str, PullAnswer] = {}
        for channel, topics in subscribers:
            if channel.lang not in answers:
                answer = answer_pull(pull, repository=name, repo_config=self.config.repo(name),
                                     lang=channel.lang, reviews_recorded=recorded)
                answers[channel.lang] = msgspec.structs.replace(answer, notes=())
            answer = answers[channel.lang]
            followed = {topic.lower() for topic in topics}
            matched = [topic for topic in answer.topics if topic.lower() in followed]
            if not matched or not self.sender.can_send(channel):
                continue
            first = (*matched, *(t for t in answer.topics if t not in matched))
            reply = Reply(kind="pull", lang=channel.lang, mode=NOTICE_MODE,
                          pull=msgspec.structs.replace(answer, topics=first))
            outcome = await self._send_once(name, pull.number, channel, reply)
            if outcome == "sent":
                result.notified.append(channel.key)
            elif outcome == "failed":
                result.failed.append(channel.key)
        return result

    async def _send_once(self, repo: str, number: int, channel: ChannelConfig, reply: Reply
                         ) -> str:
        claim = f"notice:{repo}#{number}:{channel.key}"
        if not await self.claims.claim(claim, self.notice_ttl_seconds):
            return "seen"
        try:
            await self.sender.send(channel, reply)
        except Exception as exc:  # one platform failing must not stop the other channels
            log.warning("notice of %s#%s to %s failed: %s", repo, number, channel.key, exc)
            await self.claims.release(claim)
            if self.on_sent is not None:
                self.on_sent(channel.platform, False)
            return "failed"
        if self.on_sent is not None:
            self.on_sent(channel.platform, True)
        return "sent"


@dataclass
class NoticeResult:
    """Channel keys notified by one `announce`, and those whose post failed."""

    notified: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


# --- polling, where no webhook is set up -------------------------------------------------


@dataclass(frozen=True)
class ClosedPage:
    """One page of a repository's closed PRs, most recently updated first.

    `not_modified`: GitHub answered 304 to the ETag, nothing changed (and the request
    did not count against the rate limit); `full`: the page was full, more may follow.
    """

    not_modified: bool
    etag: str | None = None
    pulls: tuple[PullRequest, ...] = ()
    full: bool = False


class PullLister:
    """Closed PRs through GitHub's REST list, with conditional requests (`If-None-Match`).

    Uses the GitHub source's PyGithub requester, so base URL, token and timeouts are the
    source's own. `on_request(api, status)` counts each request (see `bot.web.metrics`).
    """

    def __init__(self, requester: Requester, *, per_page: int = 50,
                 on_request: Callable[[str, int | str], None] | None = None) -> None:
        self.requester = requester
        self.per_page = per_page
        self.on_request = on_request

    def closed(self, repo: str, *, etag: str | None = None, page: int = 1) -> ClosedPage:
        headers = {"If-None-Match": etag} if etag else {}
        params = {"state": "closed", "sort": "updated", "direction": "desc",
                  "per_page": self.per_page, "page": page}
        try:
            status, answer_headers, body = self.requester.requestJson(
                "GET", f"/repos/{repo}/pulls", parameters=params, headers=headers)
        except (requests.RequestException, GithubException) as exc:
            self._count("error")
            raise SourceError(f"cannot list the PRs of {repo} ({type(exc).__name__})") from None
        self._count(status)
        if status == 304:
            return ClosedPage(not_modified=True, etag=etag)
        if status == 404:
            raise SourceError(f"unknown repository {repo} (it does not exist, or the token "
                              "cannot see it)")
        if status != 200:
            raise SourceError(f"GitHub refused the PR list of {repo} (HTTP {status})")
        try:
            items = msgspec.json.decode(body)
            if not isinstance(items, list):
                raise PayloadError("expected a list")
            pulls = tuple(pull_from_api(item) for item in items if isinstance(item, Mapping))
        except (msgspec.DecodeError, PayloadError) as exc:
            raise SourceError(f"GitHub sent an unreadable PR list for {repo}: {exc}") from None
        lowered = {k.lower(): v for k, v in answer_headers.items()}
        return ClosedPage(not_modified=False, etag=lowered.get("etag"), pulls=pulls,
                          full=len(items) >= self.per_page)

    def _count(self, status: int | str) -> None:
        if self.on_request is not None:
            self.on_request("rest", status)


class ClosedLister(Protocol):
    def closed(self, repo: str, *, etag: str | None = None, page: int = 1) -> ClosedPage: ...


def utc_now() -> datetime:
    return datetime.now(UTC)


class MergePoller:
    """Every `interval_seconds`, asks GitHub which closed PRs changed and announces the
    merges it has not announced yet.

    Per repository, Redis keeps the ETag of the last answer (so an unchanged list
    costs one 304), the time the repository was first watched (merges before it are
    history, not news) and the time of the last check (how far back to page). A lock
    per repository and interval lets one replica poll while the others skip.
    """

    def __init__(
        self,
        config: Config,
        lister: ClosedLister,
        claims: Claims,
        notifier: MergeNotifier,
        *,
        interval_seconds: float | None = None,
        now: Callable[[], datetime] = utc_now,
        max_pages: int = 5,
        overlap: timedelta = timedelta(minutes=10),
    ) -> None:
        self.config = config
        self.lister = lister
        self.claims = claims
        self.notifier = notifier
        self.interval_seconds = (interval_seconds if interval_seconds is not None
                                 else config.github.poll_minutes * 60.0)
        self.now = now
        self.max_pages = max_pages
        self.overlap = overlap
        self.polls = 0

    def repos(self) -> list[str]:
        """Repositories with at least one channel: the only ones whose merges matter."""
        with_channels = {c.repo for c in self.config.channels}
        return [name for name in self.config.repos if name in with_channels]

    async def poll_once(self) -> NoticeResult:
        """One round over every repository; a failing repository does not stop the rest."""
        total = NoticeResult()
        for repo in self.repos():
            try:
                result = await self.poll_repo(repo)
            except SourceError as exc:
                log.warning("polling %s failed: %s", repo, exc)
                continue
            total.notified += result.notified
            total.failed += result.failed
        self.polls += 1
        return total

    async def poll_repo(self, repo: str) -> NoticeResult:
        result = NoticeResult()
        if not await self.claims.claim(f"poll-lock:{repo}", self.interval_seconds * 0.8):
            return result  # another replica polled this interval
        now = self.now()
        await self.claims.put(f"poll:{repo}:since", now.isoformat(), only_new=True)
        since = _parse_time(await self.claims.get(f"poll:{repo}:since")) or now
        checked = _parse_time(await self.claims.get(f"poll:{repo}:checked")) or since
        etag = await self.claims.get(f"poll:{repo}:etag")
        first = await asyncio.to_thread(self.lister.closed, repo, etag=etag, page=1)
        if first.not_modified:
            await self.claims.put(f"poll:{repo}:checked", now.isoformat())
            return result
        pulls = list(first.pulls)
        page = first
        number = 1
        horizon = checked - self.overlap
        while (page.full and number < self.max_pages and pulls
               and (pulls[-1].updated_at or now) >= horizon):
            number += 1
            page = await asyncio.to_thread(self.lister.closed, repo, page=number)
            pulls += page.pulls
        merged = sorted((p for p in pulls if p.state == "merged" and p.merged_at is not None
                         and p.merged_at >= since), key=lambda p: (p.merged_at, p.number))
        for pull in merged:
            done = await self.notifier.announce(repo, pull)
            result.notified += done.notified
            result.failed += done.failed
        if result.failed or first.etag is None:
            # Keep asking in full until every notice went out.
            await self.claims.forget(f"poll:{repo}:etag")
        else:
            await self.claims.put(f"poll:{repo}:etag", first.etag)
        await self.claims.put(f"poll:{repo}:checked", now.isoformat())
        return result

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Poll until `stop` is set; errors are logged and the next round goes on."""
        while not stop.is_set():
            try:
                await self.poll_once()
            except Exception:
                log.exception("merge poll failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.interval_seconds)


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None
