"""Every Redis key prdigest writes, in one place.

All keys start with `KEY_PREFIX` (a version in it: a change of layout moves to a new
prefix instead of misreading old entries). Modules take a `Keys` rather than building
names, so tests can give each case its own prefix and no module reads a layout another
one owns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

KEY_PREFIX = "prdigest:v1"


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
    def github_delivery(delivery: str) -> str:
        """A GitHub webhook delivery already handled (`X-GitHub-Delivery`)."""
        return f"github-delivery:{delivery}"

    @staticmethod
    def notice(repo: str, number: int, channel_key: str) -> str:
        """A merged-PR notice sent to one channel."""
        return f"notice:{repo}#{number}:{channel_key}"

    @staticmethod
    def poll_lock(repo: str) -> str:
        """The replica that polls `repo` this interval."""
        return f"poll-lock:{repo}"

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

    def ledger(self, slot: str) -> str:
        """A weekly post's delivery record; the hash tag keeps it with its lock."""
        return self.name("ledger", f"{{{slot}}}")

    def ledger_pattern(self) -> str:
        return self.name("ledger", "*")

    def post_lock(self, slot: str) -> str:
        return self.name("lock", "post", f"{{{slot}}}")

    def mutex(self, name: str) -> str:
        """A cross-replica mutex around one fetch or build."""
        return self.name("lock", name)

    def weekly_digest(self, repo: str, week: str, lang: str, topics: Sequence[str]) -> str:
        """A scheduled digest, built once and shared by the replicas."""
        return self.name("digest", "weekly", repo, week, lang, ",".join(topics))

    @staticmethod
    def report_digest(repo: str, week: str, lang: str) -> str:
        """A report page's digest, relative to the cache's digest namespace."""
        return f"report:{repo}:{week}:{lang}"

    def digest(self, relative: str) -> str:
        return self.name("digest", relative)

    def week(self, repo: str, week: str, tz: str) -> str:
        """The cached PR window of one week (in one time zone)."""
        return self.name("week", repo, week, tz)

    def pull_version(self, repo: str, number: int, stamp: str) -> str:
        """One version of a cached PR (by its `updated_at`)."""
        return self.name("pr", repo, number, stamp)

    def pointer(self, repo: str, number: int) -> str:
        """Which version of a PR is the latest cached one."""
        return self.name("pull", repo, number)

    def week_start(self, repo: str) -> str:
        """Where the cached PR windows of `repo`'s weeks begin (`{start}{week}:...`)."""
        return self.name("week", repo) + ":"

    def digest_starts(self, repo: str) -> tuple[str, str]:
        """Where `repo`'s cached report and weekly digests begin."""
        return (self.name("digest", "report", repo) + ":",
                self.name("digest", "weekly", repo) + ":")
