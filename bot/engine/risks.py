"""Risks of a merged PR, each with evidence: the thread, the quoted concern, a severity.

Only what the data shows is claimed. A thread whose resolution was not recorded is
reported as such, one level less severe than a thread known to be unresolved.
"""

from __future__ import annotations

import re

from bot.engine.text import clip, one_line, plain
from bot.i18n import Translator
from bot.models import PullRequest, Review, Risk, Severity

_MARKER = re.compile(r"!\[(critical|high)\](?:\([^)]*\))?", re.I)
_SEVERITY_ORDER: dict[Severity, int] = {"high": 0, "medium": 1, "low": 2}
_DOWNGRADE: dict[Severity, Severity] = {"high": "medium", "medium": "low", "low": "low"}
QUOTE_LIMIT = 220


def bot_marker(body: str | None) -> str | None:
    """`critical` or `high` when a review bot marked the comment so, else None."""
    if not body:
        return None
    found = {m.group(1).lower() for m in _MARKER.finditer(body)}
    if "critical" in found:
        return "critical"
    return "high" if "high" in found else None


_PRAISE = re.compile(r"^\s*(lgtm|looks good|ship it|great|nice|thanks?|thank you)\b", re.I)
_ASK = re.compile(r"\?|\b(but|however|should|please|nit|could|would|must|need|why|instead)\b",
                  re.I)


def is_praise(body: str | None) -> bool:
    """An approval note ("LGTM!") raises no concern; one with a request still does."""
    return bool(body and _PRAISE.match(body) and not _ASK.search(body))


def _marker_label(marker: str, t: Translator) -> str:
    return t("Critical") if marker == "critical" else t("High-priority")


def quote(body: str | None) -> str | None:
    """The concern in one line, cut at a sentence end."""
    if not body:
        return None
    text = one_line(plain(_MARKER.sub("", body)))
    return clip(text, QUOTE_LIMIT) if text else None


def severity_rank(risk: Risk) -> tuple[int, int]:
    return (_SEVERITY_ORDER[risk.severity], risk.pull)


def _thread_risks(pull: PullRequest, t: Translator) -> list[Risk]:
    risks: list[Risk] = []
    for thread in pull.review_threads or ():
        if thread.resolved is True or not thread.comments:
            continue
        if all(is_praise(c.body) for c in thread.comments):
            continue
        first = thread.comments[0]
        marker = next((m for c in thread.comments if (m := bot_marker(c.body))), None)
        severity: Severity = "high" if marker == "critical" else "medium"
        where = thread.path or t("the conversation")
        who = first.author or t("a reviewer")
        label = _marker_label(marker, t) if marker else ""
        if thread.resolved is False and thread.outdated:
            severity = "low"
            summary = t(
                "Review thread by %(who)s on %(where)s was left unresolved (outdated by later "
                "commits)", who=who, where=where,
            )
        elif thread.resolved is False and pull.state != "merged":
            summary = t("Review thread by %(who)s on %(where)s is still unresolved",
                        who=who, where=where)
            if marker:
                summary = f"{label}: {summary}"
        elif thread.resolved is False and marker:
            summary = t("%(label)s finding by %(who)s on %(where)s was left unresolved at merge",
                        label=label, who=who, where=where)
        elif thread.resolved is False:
            summary = t(
                "Review thread by %(who)s on %(where)s was left unresolved at merge",
                who=who, where=where,
            )
        elif marker:
            severity = _DOWNGRADE[severity]
            summary = t("%(label)s finding by %(who)s on %(where)s; whether it was resolved "
                        "before merge is not recorded", label=label, who=who, where=where)
        else:
            severity = _DOWNGRADE[severity]
            summary = t(
                "Review concern by %(who)s on %(where)s; whether it was resolved before merge "
                "is not recorded", who=who, where=where,
            )
        risks.append(Risk(
            pull=pull.number,
            severity=severity,
            summary=summary,
            evidence_url=first.url or pull.url,
            kind="thread-marked" if marker else "thread",
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
        if marker and review.state != "DISMISSED":
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
        if marker:
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
