"""What the real verl weeks (2026-W29, W30) hold, counted from the snapshot by the rules
the docs state: the oracles of the tests that ask the team's questions about them."""

from __future__ import annotations

import re
from collections import Counter

from bot.models import PullRequest, Snapshot
from bot.week import belongs_to_week, week_period

TZ = "Asia/Shanghai"


def week_of(snapshot: Snapshot, week: str, tz: str = TZ) -> list[PullRequest]:
    """The PRs the week holds (merged, closed or opened in it, in `tz`)."""
    period = week_period(week, tz)
    return [p for p in snapshot.pulls if belongs_to_week(p, period)]


def words(pull: PullRequest) -> set[str]:
    """The whole words of a PR's title, body and changed paths (`npu_patch.py` has npu);
    a fenced code block is no prose of the body (a log quoting `device "npu:0"`)."""
    prose = re.sub(r"```.*?(?:```|$)", " ", pull.body or "", flags=re.S)
    text = " ".join([pull.title, prose, *(f.path for f in pull.files)])
    return set(re.split(r"[^a-z0-9]+", text.lower()))


def tags(pull: PullRequest) -> set[str]:
    """The title's leading tags: `[ckpt, rollout] feat: ...` has ckpt and rollout."""
    found = re.match(r"^\s*(?:\[[^\]]*\]\s*)+", pull.title)
    return {t.strip().lower() for t in re.findall(r"[^\[\],]+", found.group(0))} if found \
        else set()


def folders(pull: PullRequest) -> set[str]:
    """Every folder name on the paths of the files a PR changes."""
    return {part for f in pull.files for part in f.path.split("/")[:-1]}


def reviewed(pulls: list[PullRequest]) -> set[int]:
    """The PRs whose review text the data recorded (threads or comments)."""
    return {p.number for p in pulls if p.review_threads or p.comments}


def on_keywords(pulls: list[PullRequest], keywords: set[str]) -> set[int]:
    """The PRs a keyword topic counts: one of its words in the title, body or a path."""
    return {p.number for p in pulls if words(p) & keywords}


def most_active(pulls: list[PullRequest]) -> tuple[set[str], int, int]:
    """The authors with the most PRs, that count, and how many authors there are."""
    counts = Counter(p.author for p in pulls if p.author)
    most = max(counts.values())
    return {login for login, count in counts.items() if count == most}, most, len(counts)
