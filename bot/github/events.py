"""GitHub's pull-request JSON, as webhooks and the REST list send it, and the webhook's
signature check."""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec

from bot.models import PullRequest, PullState

log = logging.getLogger(__name__)


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
        author_association=item.get("author_association")
        if isinstance(item.get("author_association"), str) else msgspec.UNSET,
    )


# --- the GitHub webhook ------------------------------------------------------------------


def signature_valid(webhook_secret: str, body: bytes, header: str | None) -> bool:
    """`X-Hub-Signature-256` checked against the raw body, in constant time. Compared
    as bytes: `compare_digest` raises on a str that is not ASCII."""
    if not header or not header.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(webhook_secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.encode("utf-8", "replace"))


@dataclass(frozen=True)
class MergedPull:
    """A merge GitHub told about: the repository, the PR as the event had it, and what
    names this one merge (`merge_commit_sha`; the merge time where a payload lacks it)."""

    repository: str
    pull: PullRequest
    merge: str


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
    if pull.state != "merged" or pull.merged_at is None:
        raise PayloadError("merged_at: missing on a merged PR")
    return MergedPull(repository=name, pull=pull, merge=merge_id(item, pull))


def merge_id(item: Mapping[str, Any], pull: PullRequest) -> str:
    """What names one merge of a PR, alike in a webhook's payload and the REST list:
    its `merge_commit_sha`, or the merge time where the object lacks it."""
    sha = item.get("merge_commit_sha")
    merge = sha if isinstance(sha, str) and sha else (
        pull.merged_at.isoformat() if pull.merged_at is not None else "")
    return merge[:100]
