"""The PRs the reliability world's GitHub holds: the example week plus one PR whose
title, body, reviews and threads carry every hostile string, and a private repository's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.models import PullRequest, Review, ReviewThread, ThreadComment
from bot.snapshot import read_snapshot
from testkit import EXAMPLES
from testkit.fakes.github_fixtures import github_complete
from testkit.reliability.names import PRIVATE_REPO, REPO

HOSTILE_PIECES = (
    "<!channel>", "<!here>", "<!everyone>", "<@U0ADMIN1>", "<#C0123456>", "@all", "@here",
    '<at user_id="all">all</at>', "<at id=all></at>", "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">', "[click](javascript:alert(3))",
    "[docs](tg://user?id=42)", "<https://evil.example|trusted link>", "**bold** _it_ ~~s~~",
    "\x1b[31mred\x1b[0m", "\u202eevil\u202c", "\x00nul\x07bell", "&amp; &lt;tag&gt;",
)
HOSTILE = " ".join(HOSTILE_PIECES)
HOSTILE_NUMBER = 1299


def hostile_pull(repo: str = REPO) -> PullRequest:
    """A key PR merged in WEEK whose title, body, reviews and review threads all carry
    every hostile piece, and whose open threads make it a risk (so its words are quoted)."""
    at = datetime(2026, 7, 16, 6, 0, tzinfo=UTC)
    comment = ThreadComment(author="mallory", body=f"critical: {HOSTILE}", created_at=at,
                            url=f"https://github.com/{repo}/pull/{HOSTILE_NUMBER}#r1")
    return github_complete(PullRequest(
        number=HOSTILE_NUMBER,
        title=f"[rollout] feat: {HOSTILE}",
        url=f"https://github.com/{repo}/pull/{HOSTILE_NUMBER}",
        author="mallory",
        state="merged",
        draft=False,
        created_at=at - timedelta(days=2),
        updated_at=at,
        merged_at=at,
        closed_at=at,
        base="main",
        labels=("breaking",),
        body=f"### What does this PR do?\n\n{HOSTILE}\n\nSpeeds up rollout 1.9-3.1x.",
        additions=4200,
        deletions=900,
        changed_files=3,
        files=(),
        reviews=(Review(author="reviewer", state="CHANGES_REQUESTED", submitted_at=at,
                        body=f"high: {HOSTILE}"),),
        review_threads=(ReviewThread(path="lumen/rollout/engine.py", line=10, resolved=False,
                                     outdated=False, comments=(comment,)),),
        comments=(),
        checks="failure",
    ))


def example_pulls(*, hostile: bool = True) -> list[PullRequest]:
    pulls = [github_complete(p) for p in read_snapshot(EXAMPLES / "snapshot.json").pulls]
    return [*pulls, hostile_pull()] if hostile else pulls


PRIVATE_TITLE = "vault-only-title-do-not-leak"


def private_pulls() -> list[PullRequest]:
    at = datetime(2026, 7, 15, 3, 0, tzinfo=UTC)
    return [github_complete(PullRequest(
        number=77, title=f"[core] feat: {PRIVATE_TITLE}",
        url=f"https://github.com/{PRIVATE_REPO}/pull/77", author="insider", state="merged",
        draft=False, created_at=at - timedelta(days=1), updated_at=at, merged_at=at,
        closed_at=at, base="main", labels=(), body="private body", additions=10,
        deletions=1, changed_files=1, files=(), reviews=(), review_threads=(), comments=(),
        checks="success"))]
