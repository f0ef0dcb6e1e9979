"""Each risk rule, with its evidence; unknown resolution is said, never guessed."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.engine.concerns import concerns_of
from bot.engine.risks import find_risks
from bot.i18n import translator
from bot.models import (
    Comment,
    Concern,
    PullRequest,
    Review,
    ReviewThread,
    RiskKind,
    ThreadComment,
)
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


def test_approval_and_praise_are_not_concerns_but_praise_with_a_request_is() -> None:
    assert find_risks(_pull(review_threads=(_thread(None, "LGTM!"),)), T) == []
    # An approval keeps its small remark to itself: the reviewer let it merge.
    assert find_risks(_pull(review_threads=(
        _thread(None, "LGTM, just some unused variables we should remove"),)), T) == []
    assert find_risks(_pull(review_threads=(_thread(None, "Great idea! Thanks."),)), T) == []
    [risk] = find_risks(_pull(review_threads=(
        _thread(None, "Great idea! But how does this work with chunked prefill?"),)), T)
    assert risk.kind == "thread"
    assert risk.quote == "But how does this work with chunked prefill?"


def _conversation(*bodies: str, resolved: bool | None = None) -> ReviewThread:
    return ReviewThread(path="src/a.py", resolved=resolved, comments=tuple(
        ThreadComment(author=f"user{i}", body=b) for i, b in enumerate(bodies)))


def test_a_thread_whose_last_reply_says_done_is_addressed() -> None:
    for reply in ("Done in 895730f3", "done", "Nice catch, solved", "Fixed.",
                  "Addressed in the latest commit", "Pushed a fix for it."):
        thread = _conversation("Move this file into `engine/fsdp`.", reply)
        assert find_risks(_pull(review_threads=(thread,)), T) == [], reply
    # A reply that does not say it was done leaves the concern open.
    [risk] = find_risks(_pull(review_threads=(
        _conversation("Wrap it in a lock.", "Do you mind checking again?"),)), T)
    assert risk.resolution == "unknown"


def test_a_comment_that_reports_its_own_fix_or_carries_the_answer_is_no_concern() -> None:
    reported = "Pushed a fix for the stale test myself, and re-ran the tests to ensure they pass."
    answered = "Move this file. (Author: done in 895730f3, later split in 7fc804c3.)"
    for body in (reported, answered):
        assert find_risks(_pull(review_threads=(_conversation(body),)), T) == [], body
    # A concern that merely mentions the word stays a concern.
    [risk] = find_risks(_pull(review_threads=(
        _conversation("Is this done before the lock is taken? It races otherwise."),)), T)
    assert risk.kind == "thread"


def _bot_thread(body: str) -> ReviewThread:
    return ReviewThread(path="trainer.py", resolved=None, comments=(
        ThreadComment(author="gemini-code-assist[bot]", body=body),))


def test_a_bot_finding_is_as_severe_as_its_marker_or_its_wording() -> None:
    marked = find_risks(_pull(review_threads=(_bot_thread("![medium](u) Rename `x`."),)), T)
    assert [r.severity for r in marked] == ["low"]  # medium, and its resolution unknown
    grave = ("`put` is called without `fields`. Since it overwrites the value, the prompt "
             "fields are cleared. If a checkpoint is saved now, the next resume will load "
             "empty prompt data, causing a failure.")
    [risk] = find_risks(_pull(review_threads=(_bot_thread(grave),)), T)
    assert risk.severity == "medium"  # high by its wording, one less: resolution unknown
    mild = find_risks(_pull(review_threads=(_bot_thread("Consider renaming `x`."),)), T)
    assert [r.severity for r in mild] == ["low"]
    # the same wording from a person is a person's concern: medium, then unknown -> low
    person = ReviewThread(path="p.py", resolved=None, comments=(
        ThreadComment(author="alice", body=grave),))
    assert [r.severity for r in find_risks(_pull(review_threads=(person,)), T)] == ["low"]


def test_the_quote_keeps_the_consequence_in_whole_sentences() -> None:
    body = ("In `_reissue`, `put` is called without the `fields` argument. "
            + "This is the second sentence and it is long enough to matter here. " * 4
            + "If another checkpoint is saved, the next resume will load empty prompt data, "
              "causing a failure.")
    [risk] = find_risks(_pull(review_threads=(_bot_thread(body),)), T)
    assert risk.quote is not None
    assert risk.quote.startswith("In `_reissue`, `put` is called without the `fields` argument.")
    assert risk.quote.endswith("causing a failure.")
    assert " … " in risk.quote and len(risk.quote) <= 320


def test_a_concern_on_a_security_fix_is_raised_and_says_so() -> None:
    pull = _pull(title="[Security] Replace diskcache to eliminate pickle deserialization",
                 review_threads=(_thread(None, "Is the cache still read without a lock?"),))
    [risk] = find_risks(pull, T)
    assert risk.severity == "medium"
    assert "security fix" in risk.summary


def test_a_naming_placement_or_style_remark_is_low_even_on_a_security_fix() -> None:
    for remark in ("Please move it.", "Rename to `check_invariants_threadsafe`", "nit: typo",
                   "Better move it to `vllm/utils/other.py`"):
        pull = _pull(title="[Security] Replace diskcache to eliminate pickle deserialization",
                     review_threads=(_thread(False, remark),))
        [risk] = find_risks(pull, T)
        assert risk.severity == "low", remark


def test_a_risk_leads_with_what_may_go_wrong_then_who_where_and_whether_addressed() -> None:
    grave = ("In `_reissue`, `put` is called without `fields`. It overwrites the prompt "
             "fields, so the next resume loads empty prompt data, causing a failure.")
    [risk] = find_risks(_pull(review_threads=(_bot_thread(grave),)), T)
    assert risk.summary.startswith("May lose or overwrite data or cause a failure "
                                   "(in `_reissue`, `put`): raised by gemini-code-assist[bot] "
                                   "on trainer.py; whether it was resolved")
    assert risk.kind is RiskKind.THREAD and Concern.DATA_LOSS in risk.concerns
    [zh] = find_risks(_pull(review_threads=(_bot_thread(grave),)), translator("zh"))
    assert zh.summary == ("可能丢失或覆盖数据、导致运行失败（涉及 `_reissue`、`put`）："
                          "gemini-code-assist[bot] 在 trainer.py 提出，合并前是否解决未记录")


def test_a_conversation_comment_that_asks_is_a_risk_and_an_explanation_is_not() -> None:
    asked = Comment(author="tardis-key", body=(
        "Now the change only affects NPU. Can you confirm this issue only exists on NPU?"))
    explained = Comment(author="wuxibin89", body=(
        "There's multiple cuda streams cooperating in the engine; the default stream "
        "implicitly synchronizes with all other blocking streams."))
    [risk] = find_risks(_pull(comments=(asked, explained)), T)
    assert (risk.kind, risk.author, risk.resolution) == (RiskKind.COMMENT, "tardis-key",
                                                         "unknown")
    assert risk.summary.startswith("The change may cover NPU only: raised by tardis-key in "
                                   "the conversation")
    # The PR's author answering that it was done closes it; the author's own remarks
    # are no concern.
    done = Comment(author="author", body="Done, it now checks every platform.")
    own = Comment(author="author", body="Should we also cover XPU?")
    assert find_risks(_pull(author="author", comments=(asked, done)), T) == []
    assert find_risks(_pull(author="author", comments=(own,)), T) == []


def test_an_open_pull_has_no_merge_risks_and_says_still_unresolved() -> None:
    pull = _pull(state="open", merged_at=None, reviews=(), checks="failure",
                 review_threads=(_thread(False, "Why is this needed?"),))
    [risk] = find_risks(pull, T)
    assert risk.kind == "thread"
    assert "still unresolved" in risk.summary


def test_what_breaks_in_the_code_before_the_change_is_no_outcome_of_it() -> None:
    """A reviewer who says the old code breaks something asks about the change, and
    warns of nothing it does; "marconi-style" is no style remark."""
    body = ("How does this work with chunked prefill? I found the previous handling "
            "silently breaks the marconi-style caching.")
    assert concerns_of(body) == (Concern.QUESTION,)
    assert concerns_of("This silently breaks the marconi-style caching.") == (Concern.BREAKS,)
