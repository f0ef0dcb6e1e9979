"""Risks of a merged PR, each with evidence: the thread, the quoted concern, a severity.

Only what the data shows is claimed. A thread whose resolution was not recorded is
reported as such, one level less severe than a thread known to be unresolved.
"""

from __future__ import annotations

from bot.engine.classify import is_security
from bot.engine.concerns import (
    bot_marker,
    is_concern,
    is_praise,
    marker_severity,
    quote,
    says_done,
    wording_severity,
)
from bot.i18n import Translator
from bot.models import PullRequest, Review, ReviewThread, Risk, Severity, ThreadComment

_SEVERITY_ORDER: dict[Severity, int] = {"high": 0, "medium": 1, "low": 2}
_DOWNGRADE: dict[Severity, Severity] = {"high": "medium", "medium": "low", "low": "low"}
_RAISE: dict[Severity, Severity] = {"high": "high", "medium": "high", "low": "medium"}
# Markers that make a finding of their own; lower ones only rate a thread's concern.
_REPORTED_MARKERS = frozenset({"critical", "high"})
__all__ = ["bot_marker", "find_risks", "is_praise", "quote", "severity_rank"]


def _marker_label(marker: str, t: Translator) -> str:
    return t("Critical") if marker == "critical" else t("High-priority")


def _is_bot(author: str | None) -> bool:
    return bool(author) and (author or "").lower().endswith(("[bot]", "-bot", "bot"))


def severity_rank(risk: Risk) -> tuple[int, int]:
    return (_SEVERITY_ORDER[risk.severity], risk.pull)


def _addressed(thread: ReviewThread) -> bool:
    """A later reply says the change was made ("Done in 895730f3", "Solved")."""
    return any(says_done(c.body) for c in thread.comments[1:])


def _thread_severity(first: ThreadComment, marker: str | None) -> Severity:
    """A marker decides; a bot's unmarked finding is as severe as its wording; a
    person's concern is medium."""
    if marker:
        return marker_severity(marker)
    return wording_severity(first.body) if _is_bot(first.author) else "medium"


def _thread_risks(pull: PullRequest, t: Translator) -> list[Risk]:
    risks: list[Risk] = []
    security = bool(pull.review_threads) and is_security(pull)
    for thread in pull.review_threads or ():
        if thread.resolved is True or not thread.comments:
            continue
        first = thread.comments[0]
        if not is_concern(first.body) or _addressed(thread):
            continue
        marker = next((m for c in thread.comments if (m := bot_marker(c.body))), None)
        shown = marker if marker in _REPORTED_MARKERS else None
        severity = _thread_severity(first, marker)
        where = thread.path or t("the conversation")
        who = first.author or t("a reviewer")
        label = _marker_label(shown, t) if shown else ""
        if thread.resolved is False and thread.outdated:
            severity = "low"
            summary = t(
                "Review thread by %(who)s on %(where)s was left unresolved (outdated by later "
                "commits)", who=who, where=where,
            )
        elif thread.resolved is False and pull.state != "merged":
            summary = t("Review thread by %(who)s on %(where)s is still unresolved",
                        who=who, where=where)
            if shown:
                summary = f"{label}: {summary}"
        elif thread.resolved is False and shown:
            summary = t("%(label)s finding by %(who)s on %(where)s was left unresolved at merge",
                        label=label, who=who, where=where)
        elif thread.resolved is False:
            summary = t(
                "Review thread by %(who)s on %(where)s was left unresolved at merge",
                who=who, where=where,
            )
        elif shown:
            severity = _DOWNGRADE[severity]
            summary = t("%(label)s finding by %(who)s on %(where)s; whether it was resolved "
                        "before merge is not recorded", label=label, who=who, where=where)
        else:
            severity = _DOWNGRADE[severity]
            summary = t(
                "Review concern by %(who)s on %(where)s; whether it was resolved before merge "
                "is not recorded", who=who, where=where,
            )
        if security:
            # A doubt left on a security fix matters more than the same doubt elsewhere.
            severity = _RAISE[severity]
            summary = t("%(summary)s (on a security fix)", summary=summary)
        risks.append(Risk(
            pull=pull.number,
            severity=severity,
            summary=summary,
            evidence_url=first.url or pull.url,
            kind="thread-marked" if shown else "thread",
            resolution="unresolved" if thread.resolved is False else "unknown",
            path=thread.path,
            author=first.author,
            quote=quote(first.body),
        ))
    return risks


def _changes_requested(reviews: tuple[Review, ...]) -> list[Review]:
    """Reviews requesting changes whose author never approved afterwards."""
    latest: dict[str, Review] = {}
    for review in reviews:
        if review.state in {"APPROVED", "CHANGES_REQUESTED", "DISMISSED"}:
            latest[review.author or "?"] = review
    return [r for r in latest.values() if r.state == "CHANGES_REQUESTED"]


def _review_risks(pull: PullRequest, reviews_recorded: bool, t: Translator) -> list[Risk]:
    risks: list[Risk] = []
    reviews = pull.reviews
    if reviews is None or not reviews_recorded:
        return risks
    for review in _changes_requested(reviews):
        who = review.author or t("a reviewer")
        risks.append(Risk(
            pull=pull.number, severity="high",
            summary=t("%(who)s requested changes and never approved before merge", who=who),
            evidence_url=pull.url, kind="changes-requested", author=review.author,
            quote=quote(review.body),
        ))
    for review in reviews:
        marker = bot_marker(review.body)
        if marker in _REPORTED_MARKERS and review.state != "DISMISSED":
            risks.append(_marked(
                pull, marker, "review-marked", review.author, review.body,
                t("%(label)s finding in the review by %(who)s; whether it was addressed "
                  "is not recorded", label=_marker_label(marker, t),
                  who=review.author or t("a reviewer"))))
    if pull.state == "merged" and not any(r.state == "APPROVED" for r in reviews):
        risks.append(Risk(
            pull=pull.number, severity="medium",
            summary=t("Merged without an approving review"),
            evidence_url=pull.url, kind="unapproved",
        ))
    return risks


def _comment_risks(pull: PullRequest, t: Translator) -> list[Risk]:
    risks: list[Risk] = []
    for comment in pull.comments or ():
        marker = bot_marker(comment.body)
        if marker in _REPORTED_MARKERS:
            risks.append(_marked(
                pull, marker, "comment-marked", comment.author, comment.body,
                t("%(label)s finding in a comment by %(who)s; whether it was addressed "
                  "is not recorded", label=_marker_label(marker, t),
                  who=comment.author or t("a reviewer"))))
    return risks


def _marked(pull: PullRequest, marker: str, kind: str, author: str | None,
            body: str | None, summary: str) -> Risk:
    """A risk from a review bot's severity marker; whether it was addressed is unknown."""
    return Risk(pull=pull.number, severity="high" if marker == "critical" else "medium",
                summary=summary, evidence_url=pull.url, kind=kind, author=author,
                quote=quote(body), resolution="unknown")


def _check_risks(pull: PullRequest, t: Translator) -> list[Risk]:
    if pull.state != "merged":
        return []
    if pull.checks == "failure":
        return [Risk(pull=pull.number, severity="high", summary=t("Merged with failing checks"),
                     evidence_url=f"{pull.url}/checks", kind="checks-failed")]
    if pull.checks == "pending":
        return [Risk(pull=pull.number, severity="medium",
                     summary=t("Merged while checks were still pending"),
                     evidence_url=f"{pull.url}/checks", kind="checks-pending")]
    return []


def find_risks(pull: PullRequest, t: Translator, *, reviews_recorded: bool = True) -> list[Risk]:
    """Every risk the PR's review data shows, most severe first."""
    risks = (
        _thread_risks(pull, t)
        + _review_risks(pull, reviews_recorded, t)
        + _comment_risks(pull, t)
        + _check_risks(pull, t)
    )
    return sorted(risks, key=lambda r: _SEVERITY_ORDER[r.severity])
