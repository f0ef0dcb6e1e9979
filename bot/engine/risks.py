"""Risks of a merged PR, each with evidence: the thread, the quoted concern, a severity.

Only what the data shows is claimed. A thread whose resolution was not recorded is
reported as such, one level less severe than a thread known to be unresolved. Each
risk's sentence leads with what may go wrong (`bot.engine.risk_words`); a remark on
naming, placement or style is a low risk at most. Review threads and the PR's
conversation comments are both read.
"""

from __future__ import annotations

from bot.engine.classify import is_security
from bot.engine.concerns import (
    asks_or_warns,
    bot_marker,
    concerns_of,
    is_concern,
    is_praise,
    marker_severity,
    quote,
    says_done,
    scope_of,
    subjects_of,
    wording_severity,
)
from bot.engine.risk_words import (
    State,
    in_review,
    is_remark,
    lead,
    marked,
    raised,
    where_raised,
)
from bot.i18n import Translator
from bot.models import (
    Concern,
    PullRequest,
    Review,
    ReviewThread,
    Risk,
    RiskKind,
    Severity,
    ThreadComment,
)

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


def _capped(severity: Severity, concerns: tuple[Concern, ...]) -> Severity:
    """A naming, placement or style remark is a low risk at most, wherever it stands."""
    return "low" if is_remark(concerns) else severity


def _review_concern(pull: PullRequest, body: str | None, t: Translator
                    ) -> tuple[tuple[Concern, ...], str]:
    """What a concern says and its lead: the outcome, or what it asks for, and the code."""
    concerns = concerns_of(body)
    return concerns, lead(concerns, subjects_of(body), scope_of(body), t)


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
        where = where_raised(thread.path, t)
        who = first.author or t("a reviewer")
        concerns, said = _review_concern(pull, first.body, t)
        if shown:
            said = marked(_marker_label(shown, t), said, t)
        state: State
        if thread.resolved is False and thread.outdated:
            severity, state = "low", "outdated"
        elif thread.resolved is False:
            state = "open" if pull.state != "merged" else "unresolved"
        else:
            severity, state = _DOWNGRADE[severity], "unknown"
        summary = raised(said, who, where, state, t)
        if security:
            # A doubt left on a security fix matters more than the same doubt elsewhere.
            severity = _RAISE[severity]
            summary = t("%(summary)s (on a security fix)", summary=summary)
        risks.append(Risk(
            pull=pull.number,
            severity=_capped(severity, concerns),
            summary=summary,
            evidence_url=first.url or pull.url,
            kind=RiskKind.THREAD_MARKED if shown else RiskKind.THREAD,
            resolution="unresolved" if thread.resolved is False else "unknown",
            path=thread.path,
            author=first.author,
            quote=quote(first.body),
            concerns=concerns,
            subjects=subjects_of(first.body),
            scope=scope_of(first.body),
        ))
    return risks


def _conversation_risks(pull: PullRequest, t: Translator) -> list[Risk]:
    """Concerns a person raised in the PR's conversation (not on a line of code): a
    question or a request, or what may go wrong; addressed when the author later says
    it was done. Its resolution is never recorded, so it is one level less severe."""
    risks: list[Risk] = []
    comments = list(pull.comments or ())
    security = bool(comments) and is_security(pull)
    for index, comment in enumerate(comments):
        if (_is_bot(comment.author) or comment.author == pull.author
                or bot_marker(comment.body) or not asks_or_warns(comment.body)):
            continue
        if any(later.author == pull.author and says_done(later.body)
               for later in comments[index + 1:]):
            continue
        concerns, said = _review_concern(pull, comment.body, t)
        who = comment.author or t("a reviewer")
        summary = raised(said, who, where_raised(None, t), "unknown", t)
        severity: Severity = "low"
        if security:
            severity = _RAISE[severity]
            summary = t("%(summary)s (on a security fix)", summary=summary)
        risks.append(Risk(
            pull=pull.number, severity=_capped(severity, concerns), summary=summary,
            evidence_url=pull.url, kind=RiskKind.COMMENT, resolution="unknown",
            author=comment.author, quote=quote(comment.body), concerns=concerns,
            subjects=subjects_of(comment.body), scope=scope_of(comment.body)))
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
            evidence_url=pull.url, kind=RiskKind.CHANGES_REQUESTED, author=review.author,
            quote=quote(review.body),
        ))
    for review in reviews:
        marker = bot_marker(review.body)
        if marker in _REPORTED_MARKERS and review.state != "DISMISSED":
            risks.append(_marked(pull, marker, RiskKind.REVIEW_MARKED, review.author,
                                 review.body, t))
    if pull.state == "merged" and not any(r.state == "APPROVED" for r in reviews):
        risks.append(Risk(
            pull=pull.number, severity="medium",
            summary=t("Merged without an approving review"),
            evidence_url=pull.url, kind=RiskKind.UNAPPROVED,
        ))
    return risks


def _comment_risks(pull: PullRequest, t: Translator) -> list[Risk]:
    risks: list[Risk] = []
    for comment in pull.comments or ():
        marker = bot_marker(comment.body)
        if marker in _REPORTED_MARKERS:
            risks.append(_marked(pull, marker, RiskKind.COMMENT_MARKED, comment.author,
                                 comment.body, t))
    return risks


def _marked(pull: PullRequest, marker: str, kind: RiskKind, author: str | None,
            body: str | None, t: Translator) -> Risk:
    """A risk from a review bot's severity marker; whether it was addressed is unknown."""
    concerns, said = _review_concern(pull, body, t)
    summary = in_review(marked(_marker_label(marker, t), said, t), author or t("a reviewer"),
                        kind == RiskKind.COMMENT_MARKED, t)
    return Risk(pull=pull.number, severity="high" if marker == "critical" else "medium",
                summary=summary, evidence_url=pull.url, kind=kind, author=author,
                quote=quote(body), resolution="unknown", concerns=concerns,
                subjects=subjects_of(body))


def _check_risks(pull: PullRequest, t: Translator) -> list[Risk]:
    if pull.state != "merged":
        return []
    if pull.checks == "failure":
        return [Risk(pull=pull.number, severity="high", summary=t("Merged with failing checks"),
                     evidence_url=f"{pull.url}/checks", kind=RiskKind.CHECKS_FAILED)]
    if pull.checks == "pending":
        return [Risk(pull=pull.number, severity="medium",
                     summary=t("Merged while checks were still pending"),
                     evidence_url=f"{pull.url}/checks", kind=RiskKind.CHECKS_PENDING)]
    return []


def find_risks(pull: PullRequest, t: Translator, *, reviews_recorded: bool = True) -> list[Risk]:
    """Every risk the PR's review data shows, most severe first."""
    risks = (
        _thread_risks(pull, t)
        + _conversation_risks(pull, t)
        + _review_risks(pull, reviews_recorded, t)
        + _comment_risks(pull, t)
        + _check_risks(pull, t)
    )
    return sorted(risks, key=lambda r: _SEVERITY_ORDER[r.severity])
