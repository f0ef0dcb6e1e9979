"""Every Redis key prdigest writes, in one place.

All keys start with `KEY_PREFIX` (a version in it: a change of layout moves to a new
prefix instead of misreading old entries). Modules take a `Keys` rather than building
names, so tests can give each case its own prefix and no module reads a layout another
one owns.

Redis Cluster: keys read or written together carry one hash tag (`{...}`), so they live
in one slot - a repository's cache entries and its weeks index share `{owner/repo}`
(one MGET reads a week's PRs), a post's lock and ledger entry share `{slot}` (the
fenced write is one script), a platform's pacing lanes share its bot's lane name (one
booking is one script). Nothing lists keys with SCAN (it would see one node's keys):
what must be listed has an index (`report_weeks`, `ledger_index`), and every index
expires or is trimmed with what it lists.

v2 (hash tags, indexes): keys under `prdigest:v1:` are ignored - cached data is fetched
again, and the v1 delivery ledger is not consulted (`prdigest post` without --force
does not know weeks posted before the upgrade; the weekly schedule only posts weeks
still due, which the upgrade does not change).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

KEY_PREFIX = "prdigest:v2"


@dataclass(frozen=True)
class Keys:
    """Key names under one prefix."""

    prefix: str = KEY_PREFIX

    def name(self, *parts: object) -> str:
        """`prefix:part:part...`: the one way a key name is joined."""
        return ":".join([self.prefix, *(str(part) for part in parts)])

    # --- one-time claims (relative names, `Claims` adds the prefix) --------------------

    @staticmethod
    def seen(platform: str, delivery: str) -> str:
        """An inbound chat delivery already answered (platform retries carry its id)."""
        return f"seen:{platform}:{delivery}"

    @staticmethod
    def alive(owner: str) -> str:
        """A running process's mark: claims it holds unfinished are not taken over."""
        return f"alive:{owner}"

    @staticmethod
    def merge(repo: str, number: int, merge: str) -> str:
        """A merge told by the GitHub webhook, handled once whatever delivery carries
        it (a redelivery, a replay under a new `X-GitHub-Delivery`)."""
        return f"merge:{repo.lower()}#{number}:{merge}"

    @staticmethod
    def notice(repo: str, number: int, channel_key: str) -> str:
        """A merged-PR notice sent to one channel."""
        return f"notice:{repo}#{number}:{channel_key}"

    @staticmethod
    def batched_notice(channel_key: str, repo: str, number: int) -> str:
        """A merged PR put in a channel's notice batch; tagged `{channel}`, so the batch
        script sets it and adds the PR to the batch in one step."""
        return f"notice-batched:{{{channel_key}}}:{repo}#{number}"

    @staticmethod
    def batch_flush(channel_key: str, batch: str) -> str:
        """One batch of notices being sent, by the replica that took it."""
        return f"notice-batch-flush:{channel_key}:{batch}"

    @staticmethod
    def poll_lock(repo: str) -> str:
        """The replica that polls `repo` this interval."""
        return f"poll-lock:{repo}"

    @staticmethod
    def poll_pause() -> str:
        """Set while GitHub rate-limits the merge poller's token: every replica's poller
        stays quiet until it expires (the limit's window)."""
        return "poll-pause"

    @staticmethod
    def poll_state(repo: str, field: str) -> str:
        """What the merge poller remembers of `repo`: `since`, `checked`, `etag`."""
        return f"poll:{repo}:{field}"

    # --- absolute names ----------------------------------------------------------------

    def claim(self, relative: str) -> str:
        return self.name(relative)

    def subscriptions(self, channel_key: str) -> str:
        """The set of topics a channel subscribed to from chat."""
        return self.name("subscriptions", channel_key)

    def chat_settings(self) -> str:
        """Every chat's own settings (a hash: one field per chat, and its revision); no
        expiry: they are the chats' configuration (`bot.store.chat_settings`)."""
        return self.name("chat-settings")

    def notice_mute(self, channel_key: str) -> str:
        """A channel's merged-PR notices muted (`bot.store.mutes`): expires a little
        after the mute ends, or never while it lasts until unmuted."""
        return self.name("notice-mute", channel_key)

    def pending_reviews(self, repos: Sequence[str]) -> str:
        """The PRs waiting for review in a chat's repositories, kept for minutes
        (`chat.pending_minutes`) so a chat asking again costs GitHub nothing."""
        return self.name("pending-reviews", ",".join(sorted(r.lower() for r in repos)))

    def pending_reviews_fetch(self, repos: Sequence[str]) -> str:
        """The replica fetching those PRs now (a claim that lapses by itself)."""
        return self.name("pending-reviews-fetch", ",".join(sorted(r.lower() for r in repos)))

    def notice_batch(self, channel_key: str) -> str:
        """A channel's notice batch still open to merges (a hash: its id, when it is
        due, one field per PR); tagged `{channel}` with the PRs' markers."""
        return self.name("notice-batch", "open", f"{{{channel_key}}}")

    def notice_batch_out(self, channel_key: str) -> str:
        """A channel's batch that is due, moved out of the open one to be sent."""
        return self.name("notice-batch", "out", f"{{{channel_key}}}")

    def ledger(self, slot: str) -> str:
        """A weekly post's delivery record; the hash tag keeps it with its lock."""
        return self.name("ledger", f"{{{slot}}}")

    def ledger_index(self, week: str, bucket: int) -> str:
        """One of a week's sets of slots with a ledger entry (`Ledger.entries`,
        operators): a week's slots are spread over several sets (and so over a
        cluster's shards), each expiring with the entries it lists."""
        return self.name("ledger-index", week, bucket)

    def ledger_weeks(self) -> str:
        """The weeks with ledger entries: a sorted set, each week scored with when its
        entries expire; trimmed as they do."""
        return self.name("ledger-weeks")

    def post_lock(self, slot: str) -> str:
        return self.name("lock", "post", f"{{{slot}}}")

    def mutex(self, name: str) -> str:
        """A cross-replica mutex around one fetch or build."""
        return self.name("lock", name)

    def repo_name(self, repo: str, *parts: object) -> str:
        """A key of one repository's: tagged `{repo}`, so a repository's keys share a
        Redis Cluster slot."""
        return self.name(f"{{{repo}}}", *parts)

    def weekly_digest(self, repo: str, week: str, lang: str, topics: Sequence[str],
                      variant: str = "") -> str:
        """A scheduled digest, built once and shared by the replicas; `variant` tells
        apart channels whose own settings (exclude rules) change the digest."""
        parts = [week, lang, ",".join(topics), *([variant] if variant else [])]
        return self.repo_name(repo, "digest", "weekly", *parts)

    def report_digest(self, repo: str, week: str, lang: str) -> str:
        """A report page's digest."""
        return self.repo_name(repo, "digest", "report", week, lang)

    def week(self, repo: str, week: str, tz: str) -> str:
        """The cached PR window of one week (in one time zone)."""
        return self.repo_name(repo, "week", week, tz)

    def trend_week(self, repo: str, week: str, tz: str) -> str:
        """One week read for the trends only (its PRs without reviews or threads),
        kept apart from the full records."""
        return self.repo_name(repo, "trend-week", week, tz)

    def pull_version(self, repo: str, number: int, stamp: str) -> str:
        """One version of a cached PR (by its `updated_at`)."""
        return self.repo_name(repo, "pr", number, stamp)

    def pointer(self, repo: str, number: int) -> str:
        """Which version of a PR is the latest cached one."""
        return self.repo_name(repo, "pull", number)

    def narration(self, kind: str, digest: str) -> str:
        """A model's answer kept by the hash of what it was asked: `pull` (one PR's map
        step) or `week` (the reduce step); the hash covers prompt version, model and
        language, so any of those changing is a different entry."""
        return self.name("narration", kind, digest)

    def pace(self, widest: str, lane: str) -> str:
        """When a pacing lane's next turn is (`bot.store.pacing`); tagged with the widest
        lane of the send (the platform's bot), so one script books all of its lanes."""
        return self.name("pace", f"{{{widest}}}", lane)

    def pace_line(self, widest: str) -> tuple[str, str]:
        """The line of sends waiting for a turn of the widest lane `widest` beyond the
        booking horizon (`bot.store.pacing`): a sorted set of tickets by when each took
        its place, and one by when each place lapses unless asked for again; tagged
        like the lanes, so one script books and moves the line."""
        return (self.name("pace-line", f"{{{widest}}}", "order"),
                self.name("pace-line", f"{{{widest}}}", "alive"))

    def report_weeks(self, repo: str) -> str:
        """The weeks of `repo` the cache holds data for: a sorted set, each week scored
        with when its data expires (the report index lists them)."""
        return self.repo_name(repo, "weeks")
