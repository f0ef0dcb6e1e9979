"""Seeded, realistic PR fixtures in the snapshot shape, for the fake GitHub server.

`build_week` makes a week of PRs that belong to an ISO week (merged, closed, opened
and still open), a few decoys around it that must not be picked up, and - unless
told otherwise - PRs whose nested lists overflow the source's first pages, so that
every follow-up pagination path runs. Every time is a whole second in UTC, as GitHub
reports them, so a fetched snapshot can be compared with the fixture field by field.

`github_complete` fills the values GitHub always has (creation time, comment URLs,
thread flags) into a snapshot recorded without them, such as the real data in
`../shared/data`, so the fake can serve it in GitHub's non-null shapes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import msgspec

from bot.models import (
    CheckState,
    Comment,
    FileChange,
    PullRequest,
    PullState,
    Review,
    ReviewState,
    ReviewThread,
    Snapshot,
    ThreadComment,
)
from bot.week import belongs_to_week, week_period

MODULES = ("ci", "rollout", "trainer", "ckpt", "megatron", "vllm", "doc", "npu", "data")
TYPES = ("feat", "fix", "refactor", "chore", "test", "perf")
PEOPLE = ("alice", "bob", "chen-wei", "dmitri", "eun-ji", "farah", "gh-actions[bot]", "li.na")
# How GitHub relates a PR's author to the repository, one after another by PR number.
ASSOCIATIONS = ("MEMBER", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE", "FIRST_TIMER")
DIRS = ("verl/workers", "verl/trainer", "verl/utils", "tests/special", "docs", "scripts")
LABELS = ("bug", "enhancement", "ci", "documentation", "npu", "needs-review", "breaking")
BODIES = (
    "### What does this PR do?\n\nSpeeds up rollout by 1.9-3.1x on 8 GPUs.",
    "Fix checkpoint size: 54GiB -> 150MiB by dropping optimizer shards.",
    "Refactor the trainer loop; no behaviour change.\n\n- [x] tests pass",
    "支持 NPU 上的 FSDP2 训练。",
    None,
)


_OPEN_SLOTS = {5, 12, 18}
_CLOSED_SLOTS = {9, 15}


@dataclass(frozen=True)
class Overflow:
    """Sizes that exceed the source's first pages (files 100, threads 50, ...)."""

    files: int = 130
    threads: int = 55
    thread_comments: int = 27
    comments: int = 60
    reviews: int = 55
    labels: int = 23


def _seconds(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(microsecond=0)


def _between(rng: random.Random, start: datetime, end: datetime) -> datetime:
    span = max(int((end - start).total_seconds()) - 1, 1)
    return _seconds(start + timedelta(seconds=rng.randrange(span)))


def _title(rng: random.Random, number: int) -> str:
    modules = rng.sample(MODULES, rng.choice((1, 1, 2)))
    return f"[{', '.join(modules)}] {rng.choice(TYPES)}: change #{number} in {modules[0]}"


def _files(rng: random.Random, count: int) -> tuple[FileChange, ...]:
    files = []
    for index in range(count):
        status = rng.choice(("modified", "modified", "modified", "added", "removed", "renamed"))
        files.append(FileChange(
            path=f"{rng.choice(DIRS)}/mod_{index}_{rng.randrange(1000)}.py",
            additions=0 if status == "removed" else rng.randrange(1, 400),
            deletions=0 if status == "added" else rng.randrange(0, 120),
            status=status,
        ))
    return tuple(files)


def _comment_url(repo: str, number: int, serial: int) -> str:
    return f"https://github.com/{repo}/pull/{number}#discussion_r{number * 100_000 + serial}"


def _threads(
    rng: random.Random, repo: str, number: int, count: int, start: datetime, end: datetime,
    *, long_thread: int = 0,
) -> tuple[ReviewThread, ...]:
    threads = []
    serial = 0
    for index in range(count):
        size = long_thread if index == 0 and long_thread else rng.randrange(1, 4)
        comments = []
        for _ in range(size):
            serial += 1
            comments.append(ThreadComment(
                author=rng.choice(PEOPLE),
                body=rng.choice((
                    "Could this break the NPU path?",
                    "**critical**: this leaks the optimizer state.",
                    "nit: rename",
                    "Done, thanks.",
                    "为什么要改这个默认值？",
                )),
                created_at=_between(rng, start, end),
                url=_comment_url(repo, number, serial),
            ))
        outdated = rng.random() < 0.2
        threads.append(ReviewThread(
            path=f"{rng.choice(DIRS)}/file_{index}.py",
            line=None if outdated else rng.randrange(1, 900),
            resolved=rng.random() < 0.6,
            outdated=outdated,
            comments=tuple(comments),
        ))
    return tuple(threads)


def _reviews(rng: random.Random, count: int, start: datetime, end: datetime) -> tuple[Review, ...]:
    states: tuple[ReviewState, ...] = ("APPROVED", "COMMENTED", "CHANGES_REQUESTED", "DISMISSED")
    return tuple(
        Review(
            author=rng.choice(PEOPLE),
            state=rng.choice(states),
            submitted_at=_between(rng, start, end),
            body=rng.choice(("", "LGTM", "Please add a test for the NPU path.")),
        )
        for _ in range(count)
    )


def _comments(
    rng: random.Random, count: int, start: datetime, end: datetime
) -> tuple[Comment, ...]:
    return tuple(
        Comment(
            author=rng.choice((*PEOPLE, None)),
            body=rng.choice(("/gemini review", "Thanks!", "CI is red on main too.", "👍")),
            created_at=_between(rng, start, end),
        )
        for _ in range(count)
    )


def make_pull(
    rng: random.Random,
    repo: str,
    number: int,
    *,
    state: PullState,
    created_at: datetime,
    closed_at: datetime | None,
    sizes: dict[str, int] | None = None,
) -> PullRequest:
    """One PR with nested lists drawn from `rng`; `sizes` forces list lengths."""
    sizes = sizes or {}
    end = closed_at or created_at + timedelta(days=2)
    checks: CheckState | None = rng.choice(("success", "success", "failure", "pending", None))
    files = _files(rng, sizes.get("files", rng.randrange(1, 12)))
    threads = _threads(
        rng, repo, number, sizes.get("threads", rng.choice((0, 0, 1, 2, 4))), created_at, end,
        long_thread=sizes.get("thread_comments", 0),
    )
    comments = _comments(rng, sizes.get("comments", rng.randrange(0, 5)), created_at, end)
    reviews = _reviews(rng, sizes.get("reviews", rng.randrange(0, 4)), created_at, end)
    label_count = sizes.get("labels", rng.randrange(0, 3))
    labels = tuple(
        LABELS[i] if i < len(LABELS) else f"area/{i}" for i in range(label_count)
    )
    moments = [created_at, *(c.created_at for c in comments if c.created_at)]
    if closed_at is not None:
        moments.append(closed_at)
    latest = max(moments)
    merged = state == "merged"
    return PullRequest(
        number=number,
        title=_title(rng, number),
        url=f"https://github.com/{repo}/pull/{number}",
        author=rng.choice(PEOPLE) if rng.random() > 0.05 else None,
        # By number, not by `rng`: the rest of a generated week stays as it was.
        author_association=ASSOCIATIONS[number % len(ASSOCIATIONS)],
        state=state,
        draft=state == "open" and rng.random() < 0.3,
        created_at=created_at,
        updated_at=_seconds(latest + timedelta(seconds=rng.randrange(1, 600))),
        merged_at=closed_at if merged else None,
        closed_at=closed_at,
        base="main",
        labels=labels,
        body=rng.choice(BODIES),
        additions=sum(f.additions for f in files),
        deletions=sum(f.deletions for f in files),
        changed_files=len(files),
        files=files,
        reviews=reviews,
        review_threads=threads,
        comments=comments,
        checks=checks,
    )


def build_week(
    repo: str = "acme/widgets",
    *,
    count: int = 30,
    week: str = "2026-W29",
    tz: str = "Asia/Shanghai",
    seed: int = 7,
    overflow: Overflow | None = Overflow(),
    decoys: int = 4,
    first_number: int = 1000,
) -> list[PullRequest]:
    """`count` PRs belonging to `week` in `tz`, plus `decoys` PRs outside it.

    About 75% are merged, 10% closed unmerged and 15% opened in the week and still
    open. With `overflow`, the first few PRs carry the oversized nested lists.
    """
    rng = random.Random(seed)
    period = week_period(week, tz)
    since, until = period.since, period.until
    pulls: list[PullRequest] = []
    big = _overflow_sizes(overflow)
    for index in range(count):
        number = first_number + index
        slot = index % 20  # fixed shares, whatever the seed: 15% open, 10% closed
        sizes = big[index] if index < len(big) else None
        if slot in _OPEN_SLOTS:
            created = _between(rng, since, until)
            pulls.append(make_pull(
                rng, repo, number, state="open", created_at=created, closed_at=None, sizes=sizes
            ))
            continue
        closed = _between(rng, since, until)
        created = _seconds(closed - timedelta(hours=rng.randrange(1, 24 * 20)))
        state: PullState = "closed" if slot in _CLOSED_SLOTS else "merged"
        pulls.append(make_pull(
            rng, repo, number, state=state, created_at=created, closed_at=closed, sizes=sizes
        ))
    for index in range(decoys):
        number = first_number + count + index
        kind = index % 4
        if kind == 0:  # merged the week before
            closed = _between(rng, since - timedelta(days=7), since)
            pulls.append(make_pull(
                rng, repo, number, state="merged",
                created_at=closed - timedelta(days=1), closed_at=closed,
            ))
        elif kind == 1:  # opened before the week and still open
            created = _between(rng, since - timedelta(days=20), since)
            pulls.append(make_pull(
                rng, repo, number, state="open", created_at=created, closed_at=None
            ))
        elif kind == 2:  # opened in the week, merged in the week after
            created = _between(rng, since, until)
            closed = _between(rng, until, until + timedelta(days=5))
            pulls.append(make_pull(
                rng, repo, number, state="merged", created_at=created, closed_at=closed
            ))
        else:  # merged one second after the week ends
            pulls.append(make_pull(
                rng, repo, number, state="merged",
                created_at=since, closed_at=_seconds(until + timedelta(seconds=1)),
            ))
    return pulls


def _overflow_sizes(overflow: Overflow | None) -> list[dict[str, int]]:
    if overflow is None:
        return []
    return [
        {"files": overflow.files, "labels": overflow.labels},
        {"threads": overflow.threads, "thread_comments": overflow.thread_comments},
        {"comments": overflow.comments, "reviews": overflow.reviews},
    ]


def week_snapshot(repo: str, pulls: list[PullRequest], week: str, tz: str) -> Snapshot:
    """The snapshot a correct source returns: the PRs that belong to the week."""
    period = week_period(week, tz)
    kept = sorted((p for p in pulls if belongs_to_week(p, period)), key=lambda p: p.number)
    return Snapshot(repository=repo, pulls=tuple(kept))


def github_complete(pull: PullRequest) -> PullRequest:
    """Fill what GitHub always records but a hand-made snapshot may lack.

    Creation and update times, thread flags, thread paths and comment URLs are
    non-null in GitHub's API; review and comment bodies are strings. Values already
    present are kept, so a complete PR passes through unchanged.
    """
    anchor = pull.merged_at or pull.closed_at or pull.created_at or datetime(2026, 1, 1, tzinfo=UTC)
    created = pull.created_at or _seconds(anchor - timedelta(days=1))
    threads = []
    serial = 0
    for thread in pull.review_threads or ():
        comments = []
        for comment in thread.comments:
            serial += 1
            comments.append(msgspec.structs.replace(
                comment,
                url=comment.url or f"{pull.url}#discussion_r{pull.number * 100_000 + serial}",
                body=comment.body or "",
                created_at=comment.created_at or created,
            ))
        threads.append(msgspec.structs.replace(
            thread,
            path=thread.path or "README.md",
            resolved=bool(thread.resolved),
            outdated=bool(thread.outdated),
            comments=tuple(comments),
        ))
    return msgspec.structs.replace(
        pull,
        author_association=(pull.author_association
                            if isinstance(pull.author_association, str) else "CONTRIBUTOR"),
        created_at=created,
        updated_at=pull.updated_at or anchor,
        draft=bool(pull.draft),
        base=pull.base or "main",
        additions=pull.additions or 0,
        deletions=pull.deletions or 0,
        changed_files=pull.changed_files if pull.changed_files is not None else len(pull.files),
        review_threads=tuple(threads),
        reviews=tuple(
            msgspec.structs.replace(r, body=r.body or "", submitted_at=r.submitted_at or created)
            for r in pull.reviews or ()
        ),
        comments=tuple(
            msgspec.structs.replace(c, body=c.body or "", created_at=c.created_at or created)
            for c in pull.comments or ()
        ),
    )
