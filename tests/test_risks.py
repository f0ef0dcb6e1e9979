"""Each risk rule, with its evidence; unknown resolution is said, never guessed."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.engine.risks import find_risks
from bot.i18n import translator
from bot.models import Comment, PullRequest, Review, ReviewThread, ThreadComment
from bot.snapshot import read_snapshot
from testkit import EXAMPLES

T = translator("en")
AT = datetime(2026, 7, 14, tzinfo=UTC)


def _pull(**fields: object) -> PullRequest:
    base: dict[str, object] = {
        "number": 7, "title": "feat: x", "url": "https://github.com/o/r/pull/7",
        "state": "merged", "checks": "success",
        "reviews": (Review(author="r", state="APPROVED", submitted_at=AT),),
    }
    base.update(fields)
    return PullRequest(**base)  # type: ignore[arg-type]


def _thread(resolved: bool | None, body: str, *, outdated: bool | None = False) -> ReviewThread:
    return ReviewThread(path="src/a.py", line=3, resolved=resolved, outdated=outdated,
                        comments=(ThreadComment(author="rev", body=body,
                                                url="https://github.com/o/r/pull/7#r1"),))


def test_a_clean_pull_has_no_risk() -> None:
    assert find_risks(_pull(), T) == []


def test_unresolved_thread_is_a_risk_with_its_evidence() -> None:
    [risk] = find_risks(_pull(review_threads=(_thread(False, "This leaks the handle."),)), T)
    assert (risk.severity, risk.resolution, risk.kind) == ("medium", "unresolved", "thread")
    assert risk.evidence_url == "https://github.com/o/r/pull/7#r1"
    assert risk.quote == "This leaks the handle."
    assert "src/a.py" in risk.summary and "unresolved" in risk.summary


def test_resolved_thread_is_not_a_risk() -> None:
    assert find_risks(_pull(review_threads=(_thread(True, "nit"),)), T) == []


def test_unknown_resolution_is_reported_as_unknown_and_less_severe() -> None:
    [risk] = find_risks(_pull(review_threads=(_thread(None, "Please move it."),)), T)
    assert risk.resolution == "unknown"
    assert risk.severity == "low"
    assert "not recorded" in risk.summary


def test_outdated_unresolved_thread_is_low() -> None:
    [risk] = find_risks(_pull(review_threads=(_thread(False, "nit", outdated=True),)), T)
    assert risk.severity == "low"
    assert "outdated" in risk.summary


def test_bot_markers_raise_severity_and_are_not_quoted() -> None:
    critical = "![critical](https://x/critical.svg) Data race on `free_blocks`."
    [risk] = find_risks(_pull(review_threads=(_thread(False, critical),)), T)
    assert risk.severity == "high"
    assert risk.kind == "thread-marked"
    assert risk.quote is not None and "svg" not in risk.quote and "Data race" in risk.quote
    [unknown] = find_risks(_pull(review_threads=(_thread(None, critical),)), T)
    assert unknown.severity == "medium"


def test_high_marker_in_a_conversation_comment() -> None:
    pull = _pull(comments=(Comment(author="bot", body="![high](u) Resume replays a batch."),))
    [risk] = find_risks(pull, T)
    assert (risk.kind, risk.severity) == ("comment-marked", "medium")


def test_changes_requested_never_followed_by_approval() -> None:
    pull = _pull(reviews=(
        Review(author="a", state="APPROVED", submitted_at=AT),
        Review(author="b", state="CHANGES_REQUESTED", submitted_at=AT, body="Needs tests."),
    ))
    [risk] = find_risks(pull, T)
    assert (risk.kind, risk.severity, risk.author) == ("changes-requested", "high", "b")


def test_changes_requested_then_approved_by_the_same_reviewer_is_fine() -> None:
    pull = _pull(reviews=(
        Review(author="b", state="CHANGES_REQUESTED", submitted_at=AT),
        Review(author="b", state="APPROVED", submitted_at=AT),
    ))
    assert find_risks(pull, T) == []


def test_failing_and_pending_checks() -> None:
    assert [r.kind for r in find_risks(_pull(checks="failure"), T)] == ["checks-failed"]
    assert [r.kind for r in find_risks(_pull(checks="pending"), T)] == ["checks-pending"]
    assert find_risks(_pull(checks=None), T) == []


def test_merged_without_approval_only_when_reviews_were_recorded() -> None:
    pull = _pull(reviews=())
    assert [r.kind for r in find_risks(pull, T)] == ["unapproved"]
    assert find_risks(pull, T, reviews_recorded=False) == []
    assert find_risks(_pull(reviews=None), T) == []


def test_example_snapshot_exercises_every_rule() -> None:
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    kinds = {r.kind for p in snapshot.pulls if p.state == "merged" for r in find_risks(p, T)}
    assert kinds >= {"thread", "thread-marked", "changes-requested", "review-marked",
                     "checks-failed", "checks-pending", "unapproved"}


def test_praise_is_not_a_concern_but_praise_with_a_request_is() -> None:
    assert find_risks(_pull(review_threads=(_thread(None, "LGTM!"),)), T) == []
    [risk] = find_risks(_pull(review_threads=(
        _thread(None, "LGTM, just some unused variables we should remove"),)), T)
    assert risk.kind == "thread"


def test_an_open_pull_has_no_merge_risks_and_says_still_unresolved() -> None:
    pull = _pull(state="open", merged_at=None, reviews=(), checks="failure",
                 review_threads=(_thread(False, "Why is this needed?"),))
    [risk] = find_risks(pull, T)
    assert risk.kind == "thread"
    assert "still unresolved" in risk.summary
