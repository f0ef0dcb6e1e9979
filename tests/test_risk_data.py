"""A week whose data holds no review, review comment or check state says risks could not
be looked for, never "no risks were found": that would claim a search that had nothing
to read. Where the data holds reviews, a week of none found says so."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.chat.answers import week_risks
from bot.config import RepoConfig
from bot.engine import build_digest
from bot.engine.digest import answer_pull
from bot.models import Lang, PullRequest, Reply, Review, Snapshot
from bot.render import render_digest, render_reply
from bot.render.document import outline
from bot.render.layouts import digest_document
from testkit.pulls import merged_pull

MERGED = datetime(2026, 7, 15, 3, tzinfo=UTC)
NOT_LOOKED = {"en": "so no risks could be looked for", "zh": "因此无法查找风险"}
NONE_FOUND = {"en": "No risks were found", "zh": "未发现风险"}


def _pull(number: int, reviews: tuple[Review, ...] = ()) -> PullRequest:
    return merged_pull(number, f"fix: handle case {number}", ("src/app.py",), lines=20,
                       when=MERGED, reviews=reviews)


def _text(snapshot: Snapshot, lang: Lang, form: str) -> str:
    digest = build_digest(snapshot, "2026-W29", repo_config=RepoConfig(), lang=lang)
    if form == "document":
        return outline(digest_document(digest))
    return render_digest(digest, form)  # type: ignore[arg-type]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("form", ["text", "markdown", "document"])
def test_no_review_data_is_not_reported_as_no_risk(lang: Lang, form: str) -> None:
    text = _text(Snapshot(repository="o/r", pulls=(_pull(1), _pull(2))), lang, form)
    assert NOT_LOOKED[lang] in text and NONE_FOUND[lang] not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_reviewed_week_without_risks_says_none_were_found(lang: Lang) -> None:
    approved = (Review(author="kenji-o", state="APPROVED", submitted_at=MERGED),)
    text = _text(Snapshot(repository="o/r", pulls=(_pull(1, approved), _pull(2, approved))),
                 lang, "text")
    assert NONE_FOUND[lang] in text and NOT_LOOKED[lang] not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("mode", ["risks", "summary"])
def test_a_pr_answer_says_the_same_as_the_digest(lang: Lang, mode: str) -> None:
    approved = (Review(author="kenji-o", state="APPROVED", submitted_at=MERGED),)
    for held, said, not_said in ((False, NOT_LOOKED, NONE_FOUND), (True, NONE_FOUND, NOT_LOOKED)):
        pull = _pull(1, approved if held else ())
        answer = answer_pull(pull, repository="o/r", repo_config=RepoConfig(), lang=lang,
                             reviews_recorded=held, risk_data=held)
        text = render_reply(Reply(kind="pull", lang=lang, pull=answer, mode=mode), "text")
        assert said[lang] in text and not_said[lang] not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_weeks_risks_in_chat_say_the_same_as_the_digest(lang: Lang) -> None:
    digest = build_digest(Snapshot(repository="o/r", pulls=(_pull(1), _pull(2))), "2026-W29",
                          repo_config=RepoConfig(), lang=lang)
    text = render_reply(Reply(kind="answer", lang=lang, answer=week_risks(digest)), "text")
    assert NOT_LOOKED[lang] in text and NONE_FOUND[lang] not in text, text
