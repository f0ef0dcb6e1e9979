"""Counters for `/metrics`: what the bot answered, built, posted and fetched.

Each app owns one `Metrics` with its own `CollectorRegistry`, so two apps in one
process (tests, several configs) never share or double-register counters. Parts that
count something take a `Metrics` (or one of its bound methods) as an argument; nothing
here is global.

Labels hold only bounded values: platform names, command and reply kinds, catalog
error keys, fixed outcome words. Never a channel id, a user, a repository or a URL.
"""

from __future__ import annotations

import platform as python_platform
from collections.abc import Iterator, Sequence
from importlib import metadata
from typing import Literal

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from bot.events import (
    CacheLookup,
    CommandAnswered,
    DigestBuilt,
    DigestPosted,
    Event,
    GitHubAnswered,
    GitHubPoints,
    ModelCalled,
    NarrationFellBack,
    NoticePosted,
    ScheduleFailed,
    SentencesDropped,
)
from bot.logs import REPEATS, RepeatLimit
from bot.models import Reply

# Counters' `*_created` series (when each label set first appeared) only add noise to
# every scrape; the counts themselves are what dashboards read.
disable_created_metrics()  # type: ignore[no-untyped-call]

CacheResult = Literal["hit", "miss"]
PostOutcome = Literal["ok", "failed"]

__all__ = ["CONTENT_TYPE_LATEST", "CacheResult", "Metrics", "PostOutcome"]


def version() -> str:
    """The installed prdigest's version ("unknown" when run from a bare source tree)."""
    try:
        return metadata.version("prdigest")
    except metadata.PackageNotFoundError:
        return "unknown"


class SuppressedLines(Collector):
    """`prdigest_log_lines_suppressed_total{logger, level}`: repeated log lines the
    process left out (`bot.logs.RepeatLimit`), read at each scrape."""

    def __init__(self, repeats: RepeatLimit) -> None:
        self.repeats = repeats

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "prdigest_log_lines_suppressed",
            "Repeated log lines left out (the same logger and message within a minute "
            "of the last one written), by logger and level.", labels=["logger", "level"])
        for (logger, level), count in sorted(self.repeats.suppressed.items()):
            family.add_metric([logger, level], count)
        yield family


class Metrics:
    """The bot's counters, registered in a registry of their own."""

    def __init__(self, registry: CollectorRegistry | None = None, *,
                 platforms: Sequence[str] = (), repeats: RepeatLimit = REPEATS) -> None:
        """`platforms`: the chat platforms whose post series exist from the start;
        `repeats`: where the repeated log lines left out are counted."""
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        # process_resident_memory_bytes, process_cpu_seconds_total, open fds, start time.
        ProcessCollector(registry=self.registry)
        self.registry.register(SuppressedLines(repeats))
        self.build_info = Gauge(
            "prdigest_build_info",
            "Always 1: the running prdigest's version and Python, as labels.",
            ["version", "python"], registry=self.registry)
        self.build_info.labels(version(), python_platform.python_version()).set(1)
        self.commands = Counter(
            "prdigest_commands",
            "Chat commands answered, by platform, command kind and outcome "
            "(`ok`, or the error key of the reply).",
            ["platform", "command", "outcome"],
            registry=self.registry,
        )
        self.digests_built = Counter(
            "prdigest_digests_built",
            "Digests built, by what asked for them (schedule, command, report).",
            ["trigger"],
            registry=self.registry,
        )
        self.digests_posted = Counter(
            "prdigest_digests_posted",
            "Digest posts to chat platforms, by platform and outcome.",
            ["platform", "outcome"],
            registry=self.registry,
        )
        self.notices_posted = Counter(
            "prdigest_notices_posted",
            "Merged-PR notices to subscribed channels, by platform and outcome.",
            ["platform", "outcome"],
            registry=self.registry,
        )
        self.github_requests = Counter(
            "prdigest_github_requests",
            "HTTP requests to GitHub, by API (rest, graphql) and status "
            "(the HTTP status, or `error` when no answer came).",
            ["api", "status"],
            registry=self.registry,
        )
        self.github_points_spent = Counter(
            "prdigest_github_points_spent",
            "GraphQL points GitHub charged, as each answer's `rateLimit.cost` said.",
            registry=self.registry,
        )
        self.github_points_remaining = Gauge(
            "prdigest_github_points_remaining",
            "GraphQL points left in the hour, as the latest answer said (-1: no answer yet).",
            registry=self.registry,
        )
        self.github_points_reset = Gauge(
            "prdigest_github_points_reset_timestamp_seconds",
            "When GitHub refills the GraphQL points (Unix time; 0: no answer yet).",
            registry=self.registry,
        )
        self.github_points_remaining.set(-1)
        self.cache_lookups = Counter(
            "prdigest_cache_lookups",
            "Cache lookups, by kind of entry and result (hit, miss); `held-pull` is a "
            "PR looked up in the process's memory before Redis.",
            ["kind", "result"],
            registry=self.registry,
        )
        self.webhooks = Counter(
            "prdigest_github_webhooks",
            "GitHub webhook deliveries, by event and outcome.",
            ["event", "outcome"],
            registry=self.registry,
        )
        self.report_pages = Counter(
            "prdigest_report_pages",
            "Report page requests, by page (index, week) and HTTP status.",
            ["page", "status"],
            registry=self.registry,
        )
        self.schedule_failures = Counter(
            "prdigest_schedule_failures",
            "Weekly-schedule failures: `pass` (a pass raised) or `channel` (a channel "
            "left out of a pass because its due posts could not be computed).",
            ["kind"],
            registry=self.registry,
        )
        self.command_seconds = Histogram(
            "prdigest_command_seconds",
            "Time to answer a chat command, by platform.",
            ["platform"],
            registry=self.registry,
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30),
        )
        self.llm_calls = Counter(
            "prdigest_llm_calls",
            "Calls to the narrator's model, by step (pull, week) and outcome (`ok` or the "
            "failure: timeout, rate-limited, server-error, blank, length, ...).",
            ["step", "outcome"],
            registry=self.registry,
        )
        self.llm_tokens = Counter(
            "prdigest_llm_tokens",
            "Tokens the narrator's model reported, by step and kind (prompt, completion).",
            ["step", "kind"],
            registry=self.registry,
        )
        self.llm_dropped_sentences = Counter(
            "prdigest_llm_dropped_sentences",
            "Narrated sentences the verifier dropped, by digest section.",
            ["section"],
            registry=self.registry,
        )
        self.llm_fallbacks = Counter(
            "prdigest_llm_fallbacks",
            "Digest sections left deterministic by the narrator, by section and reason.",
            ["section", "reason"],
            registry=self.registry,
        )

        # Series that dashboards expect exist from the start, at zero.
        for trigger in ("schedule", "command", "report"):
            self.digests_built.labels(trigger)
        for platform in platforms:
            for outcome in ("ok", "failed"):
                self.digests_posted.labels(platform, outcome)
                self.notices_posted.labels(platform, outcome)
        for failure in ("pass", "channel"):
            self.schedule_failures.labels(failure)
        for kind in ("week", "pull", "pointer", "digest", "held-pull"):
            for result in ("hit", "miss"):
                self.cache_lookups.labels(kind, result)

    # --- the core's events (`bot.events`) ---------------------------------------------

    def on(self, event: Event) -> None:
        """Count one of the core's events; the server subscribes this to its `Events`."""
        match event:
            case DigestPosted(platform, ok):
                self.digest_posted(platform, "ok" if ok else "failed")
            case NoticePosted(platform, ok):
                self.notice_posted(platform, "ok" if ok else "failed")
            case CommandAnswered(platform, kind, reply, seconds):
                self.command(platform, kind, reply, seconds)
            case DigestBuilt(trigger):
                self.digest_built(trigger)
            case ScheduleFailed(kind):
                self.schedule_failure(kind)
            case CacheLookup(kind, hit):
                self.cache_lookup(kind, hit)
            case GitHubAnswered(api, status):
                self.github_request(api, status)
            case GitHubPoints(cost, remaining, reset_at):
                self.github_points(cost, remaining, reset_at)
            case ModelCalled(step, outcome, prompt_tokens, completion_tokens):
                self.llm_call(step, outcome, prompt_tokens, completion_tokens)
            case SentencesDropped(section, count):
                self.llm_dropped(section, count)
            case NarrationFellBack(section, reason):
                self.llm_fallback(section, reason)

    # --- hooks ----------------------------------------------------------------------

    def command(self, platform: str, command: str, reply: Reply, seconds: float | None = None
                ) -> None:
        """One command answered: `ok`, or the error key the reply carries."""
        outcome = (reply.error or "error") if reply.kind == "error" else "ok"
        self.commands.labels(platform, command, outcome).inc()
        if seconds is not None:
            self.command_seconds.labels(platform).observe(seconds)

    def digest_built(self, trigger: str) -> None:
        """A digest was built (`schedule`, `command` or `report`)."""
        self.digests_built.labels(trigger).inc()

    def digest_posted(self, platform: str, outcome: PostOutcome) -> None:
        """A digest post finished on a platform, confirmed (`ok`) or not (`failed`)."""
        self.digests_posted.labels(platform, outcome).inc()

    def notice_posted(self, platform: str, outcome: PostOutcome) -> None:
        self.notices_posted.labels(platform, outcome).inc()

    def github_request(self, api: str, status: int | str) -> None:
        """One HTTP request to GitHub and its status (`error` for no answer)."""
        self.github_requests.labels(api, str(status)).inc()

    def github_points(self, cost: int, remaining: int, reset_at: float) -> None:
        """One GraphQL answer's `rateLimit`: its cost, what is left, when it refills."""
        self.github_points_spent.inc(cost)
        self.github_points_remaining.set(remaining)
        self.github_points_reset.set(reset_at)

    def cache_lookup(self, kind: str, hit: bool) -> None:
        """One cache read of a `kind` of entry: a hit when it was there."""
        result: CacheResult = "hit" if hit else "miss"
        self.cache_lookups.labels(kind, result).inc()

    def held_pull_lookup(self, hit: bool) -> None:
        """One look into the process's memory of fresh PRs (before Redis)."""
        self.cache_lookup("held-pull", hit)

    def webhook(self, event: str, outcome: str) -> None:
        self.webhooks.labels(event, outcome).inc()

    def schedule_failure(self, kind: str) -> None:
        self.schedule_failures.labels(kind).inc()

    def report_page(self, page: str, status: int) -> None:
        self.report_pages.labels(page, str(status)).inc()

    def llm_call(self, step: str, outcome: str, prompt_tokens: int, completion_tokens: int
                 ) -> None:
        """One call to the narrator's model and the tokens it reported."""
        self.llm_calls.labels(step, outcome).inc()
        self.llm_tokens.labels(step, "prompt").inc(prompt_tokens)
        self.llm_tokens.labels(step, "completion").inc(completion_tokens)

    def llm_dropped(self, section: str, count: int) -> None:
        self.llm_dropped_sentences.labels(section).inc(count)

    def llm_fallback(self, section: str, reason: str) -> None:
        self.llm_fallbacks.labels(section, reason).inc()

    # --- exposition -----------------------------------------------------------------

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format, for `/metrics`."""
        return generate_latest(self.registry)
